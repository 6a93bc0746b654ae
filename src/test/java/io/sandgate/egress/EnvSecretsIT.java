package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Credential injection with the {@code env} secret source: a gateway started with
 * {@code SANDGATE_SECRET_*} variables (which are secrets, not settings) reads the agent's token and
 * the real key from them.
 */
class EnvSecretsIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final String KEY = "sk-" + "proj-" + "E5nVk3yE5nVk3yE5nVk3".repeat(2);
    private static final String TOKEN = "sgt_env_agent_0123456789";

    private TargetServer target;
    private ForwardProxy node;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(config -> config
        .trustStoreOf(target)
        .environment("SANDGATE_SECRET_OPENAI_PROD", KEY)
        .environment("SANDGATE_SECRET_AGENT_TOKEN", TOKEN)
        .set("egress.ssrf.allow", "127.0.0.0/8")
        .set("egress.secrets.source", "env")
        .set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("localhost")), "upstream", "main", "credential", "openai")))
        .set("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(Map.of("id", "n1", "address", node.address())))))
        .set("egress.credentials", Map.of("openai", Map.of("secret", "openai/prod", "hosts", List.of("localhost"))))
        .set("egress.agents", List.of(Map.of("id", "a", "token", "agent-token", "credentials", List.of("openai")))));

    @BeforeEach
    void start() throws Exception
    {
        target = TargetServer.start();
        node = ForwardProxy.start("n1");
    }

    @AfterEach
    void stop() throws Exception
    {
        node.close();
        target.close();
    }

    @Test
    void envSource_secretVariablesAreNotSettings_andTheKeyFromOneIsInjected() throws Exception
    {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/egress/localhost:" + target.httpsPort() + "/echo"))
            .header("Authorization", "Bearer " + TOKEN).timeout(Duration.ofSeconds(15)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        assertEquals("Bearer " + KEY, target.requests().get(0).header("Authorization"));
        assertFalse(gateway.sandgate().config().toString().contains(KEY), "the captured variables never print");
    }
}
