package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Egress requests that carry an agent's internal token count as that agent for the per-client cap,
 * wherever they come from: agents sharing one host do not take each other's places, and one agent
 * cannot take more than its own.
 */
class EgressAgentLimitIT
{
    private static final int LIMIT = 2;
    private static final String ALPHA = "sgt_agent_alpha_limit_0123456789";
    private static final String BETA = "sgt_agent_beta_limit_0123456789";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    Path scratch;
    @AutoClose
    private final TargetServer target = TargetServer.start();
    /** Takes the tunnel's CONNECT and never answers: every agent request is held until its timeout. */
    @AutoClose
    private final ForwardProxy node = ForwardProxy.start("n1").hang();
    private Path secrets;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    @BeforeEach
    void start() throws Exception
    {
        secrets = scratch.resolve("secrets.yaml");
        Files.writeString(secrets, "key: \"vnd_limit_key_0123456789\"\nalpha-token: \"" + ALPHA + "\"\nbeta-token: \"" + BETA + "\"\n");
        Files.setPosixFilePermissions(secrets, PosixFilePermissions.fromString("rw-------"));
    }

    private void configure(GatewayConfig config)
    {
        config.set("server.max-concurrent-requests-per-client", Integer.toString(LIMIT));
        config.trustStoreOf(target);
        config.set("egress.connect-timeout", "3s");
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.secrets.file", secrets.toString());
        config.set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("localhost")), "upstream", "main", "credential", "key")));
        config.set("egress.pools", Map.of("main", Map.of("nodes", List.of(Map.of("id", "n1", "address", node.address())))));
        config.set("egress.credentials", Map.of("key", Map.of("secret", "key", "hosts", List.of("localhost"))));
        config.set("egress.agents", List.of(
            Map.of("id", "alpha", "token", "alpha-token", "credentials", List.of("key")),
            Map.of("id", "beta", "token", "beta-token", "credentials", List.of("key"))));
    }

    private CompletableFuture<HttpResponse<String>> call(String token)
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri("/egress/localhost:" + target.httpsPort() + "/echo")).timeout(Duration.ofSeconds(20));
        if (token != null)
            request.header("Authorization", "Bearer " + token);
        return HTTP.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void agentsCountByTheirToken_notByTheHostTheyShare() throws Exception
    {
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        for (int i = 0; i < LIMIT; i++)
            held.add(call(ALPHA));
        await().atMost(Duration.ofSeconds(3)).until(() -> node.connects() >= LIMIT);

        assertEquals(429, call(ALPHA).get(10, TimeUnit.SECONDS).statusCode(), "alpha holds all its places");
        CompletableFuture<HttpResponse<String>> beta = call(BETA);
        await().atMost(Duration.ofSeconds(3)).until(() -> node.connects() >= LIMIT + 1);
        // Without a token the request counts by address, which holds nothing: the route answers for itself.
        assertEquals(401, call(null).get(10, TimeUnit.SECONDS).statusCode());

        MeterRegistry metrics = gateway.sandgate().metrics();
        assertEquals(1, metrics.get("sandgate.clients.refused").tags("identity", "agent").counter().count());
        assertEquals(0, metrics.get("sandgate.clients.refused").tags("identity", "address").counter().count());
        held.add(beta);
        for (CompletableFuture<HttpResponse<String>> request : held)
            assertEquals(504, request.get(20, TimeUnit.SECONDS).statusCode(), "the node never answered");
    }
}
