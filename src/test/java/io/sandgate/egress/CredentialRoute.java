package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.TargetServer;

/**
 * The smallest credential-injection setup, for tests of where secrets come from: a real HTTPS
 * target and one node, and a route to {@code localhost} injecting the credential {@code openai}
 * (secret {@code openai}) for the agent whose token is the secret {@code agent-token}.
 */
final class CredentialRoute implements AutoCloseable
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    final TargetServer target;
    final ForwardProxy node;

    private CredentialRoute(TargetServer target, ForwardProxy node)
    {
        this.target = target;
        this.node = node;
    }

    static CredentialRoute start() throws Exception
    {
        return new CredentialRoute(TargetServer.start(), ForwardProxy.start("n1"));
    }

    GatewayConfig configure(GatewayConfig config)
    {
        return config.trustStoreOf(target)
            .set("egress.ssrf.allow", "127.0.0.0/8")
            .set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("localhost")), "upstream", "main", "credential", "openai")))
            .set("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(Map.of("id", "n1", "address", node.address())))))
            .set("egress.credentials", Map.of("openai", Map.of("secret", "openai", "hosts", List.of("localhost"))))
            .set("egress.agents", List.of(Map.of("id", "a", "token", "agent-token", "credentials", List.of("openai"))));
    }

    /** A call of the route with the agent's internal token. */
    HttpResponse<String> call(Gateway gateway, String token) throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/egress/localhost:" + target.httpsPort() + "/echo"))
            .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(15)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() throws Exception
    {
        node.close();
        target.close();
    }
}
