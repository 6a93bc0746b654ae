package io.sandgate.mcp.identity;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.McpAuthConfig;
import io.sandgate.config.McpConfig;
import io.sandgate.config.McpUpstreamCredential;
import io.sandgate.core.Secret;
import io.sandgate.testing.AuthorizationServerDouble;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Token exchange for one principal: requests arriving together share one exchange, and its token is what every one sends. */
class UpstreamCredentialsTest
{
    private static final String CLIENT_SECRET = "gateway-secret-5d1e";
    private static final AuthorizationServerDouble as = AuthorizationServerDouble.start().client("sandgate", CLIENT_SECRET, Set.of());

    @AfterAll
    static void stop()
    {
        as.close();
    }

    @Test
    void firstRequestsArrivingTogether_makeOneExchange() throws Exception
    {
        McpUpstreamCredential exchange = new McpUpstreamCredential(Optional.empty(), "Authorization", "Bearer {secret}",
            Optional.of(new McpUpstreamCredential.TokenExchange(URI.create(as.tokenEndpoint()), "sandgate", "as-client", "http://tools:8080/mcp", Optional.empty())));
        McpConfig.Server server = new McpConfig.Server("tools", URI.create("http://tools:8080/mcp"), McpConfig.Transport.STREAMABLE, McpConfig.ToolPolicy.ALL,
            Optional.of(new McpAuthConfig(List.of(as.issuer()), Optional.of(URI.create(as.jwksUri())), Optional.empty(), List.of("https://gw.example/mcp/tools"),
                List.of(), Set.of("RS256"), Duration.ofSeconds(30), URI.create("https://gw.example/mcp/tools"), List.of(as.issuer()))),
            Optional.empty(), Optional.of(exchange));
        UpstreamCredentials credentials = new UpstreamCredentials(name -> new Secret(CLIENT_SECRET), Clock.systemUTC(), new SimpleMeterRegistry());
        String token = as.token().subject("alice").clientId("agent").sign();
        Principal alice = new Principal(as.issuer(), "alice", "agent", Set.of(), Instant.now().plusSeconds(300));

        int before = as.exchanges().size();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try
        {
            List<CompletableFuture<Void>> requests = new ArrayList<>();
            for (int i = 0; i < 8; i++)
            {
                requests.add(CompletableFuture.runAsync(() ->
                {
                    try
                    {
                        start.await();
                    }
                    catch (InterruptedException x)
                    {
                        throw new IllegalStateException(x);
                    }
                    credentials.prepare(server, alice, token);
                }, threads));
            }
            start.countDown();
            CompletableFuture.allOf(requests.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
        }
        finally
        {
            threads.shutdownNow();
        }
        assertEquals(before + 1, as.exchanges().size(), "one exchange for eight requests");
        String header = credentials.header(server, alice.owner(), URI.create("http://tools:8080/mcp")).orElseThrow().value().reveal();
        assertTrue(header.startsWith("Bearer ") && !header.contains(token), "the exchanged token, never the client's");
        assertTrue(credentials.header(server, alice.owner(), URI.create("http://elsewhere:8080/mcp")).isEmpty(), "never to another origin");
    }
}
