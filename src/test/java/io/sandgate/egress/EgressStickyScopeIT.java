package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Whose a sticky session is: the agent names it in {@code X-Agent-Session}, but any caller can send
 * the same name. Two pools ({@code left} with three nodes, {@code right} with one) behind sticky
 * routes, one of them injecting a credential for two agents whose tokens come from the {@code env}
 * secret source; each test gets fresh nodes and a fresh gateway.
 */
class EgressStickyScopeIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    // Built at run time so the repository holds nothing a secret scanner would flag.
    private static final String KEY = "sk-" + "proj-" + "St1cKyScOpEsT1cKyScO".repeat(2);
    private static final String ALPHA_TOKEN = "sgt_sticky_alpha_0123456789";
    private static final String BETA_TOKEN = "sgt_sticky_beta_0123456789";

    private TargetServer target;
    private final List<ForwardProxy> left = new ArrayList<>();
    private ForwardProxy right;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    @BeforeEach
    void start()
    {
        target = TargetServer.start();
        for (String name : List.of("l1", "l2", "l3"))
            left.add(ForwardProxy.start(name));
        right = ForwardProxy.start("r1");
    }

    private void configure(GatewayConfig config)
    {
        config.trustStoreOf(target);
        // The target runs on loopback, which the SSRF guard refuses unless allowed.
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.routes", List.of(
            Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "left"), "upstream", "left", "sticky_session", true),
            Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "right"), "upstream", "right", "sticky_session", true),
            Map.of("match", Map.of("domains", List.of("localhost")), "upstream", "left", "sticky_session", true, "credential", "openai")));
        config.set("egress.pools", Map.of(
            "left", Map.of("region", "eu", "nodes", left.stream().map(node -> Map.of("id", node.name(), "address", node.address())).toList()),
            "right", Map.of("region", "eu", "nodes", List.of(Map.of("id", right.name(), "address", right.address())))));
        config.set("egress.secrets.source", "env")
            .environment("SANDGATE_SECRET_OPENAI", KEY)
            .environment("SANDGATE_SECRET_ALPHA_TOKEN", ALPHA_TOKEN)
            .environment("SANDGATE_SECRET_BETA_TOKEN", BETA_TOKEN);
        config.set("egress.credentials", Map.of("openai", Map.of("secret", "openai", "hosts", List.of("localhost"))));
        config.set("egress.agents", List.of(
            Map.of("id", "alpha", "token", "alpha-token", "credentials", List.of("openai")),
            Map.of("id", "beta", "token", "beta-token", "credentials", List.of("openai"))));
    }

    @AfterEach
    void stop()
    {
        left.forEach(ForwardProxy::close);
        right.close();
        target.close();
    }

    /** A call of a sticky route; {@code /status/204} echoes nothing, so no answer holds the injected key. */
    private HttpResponse<String> call(String host, String session, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve("/egress/" + host + ":" + target.httpsPort() + "/status/204"))
            .header("X-Agent-Session", session).timeout(Duration.ofSeconds(15));
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(204, response.statusCode(), response.body());
        return response;
    }

    private HttpResponse<String> onPool(String pool, String session) throws Exception
    {
        return call("127.0.0.1", session, "X-Agent-Task-Type", pool);
    }

    private HttpResponse<String> asAgent(String token, String session) throws Exception
    {
        return call("localhost", session, "Authorization", "Bearer " + token);
    }

    private static String node(HttpResponse<?> response)
    {
        return response.headers().firstValue(EgressServlet.NODE).orElse("-");
    }

    /**
     * A caller of a route on another pool sends the same session name. With one key space its call
     * pinned the name to its own pool's node, which the first pool does not have, so every call of
     * the session's owner was repinned to a node chosen afresh, and the owner's calls wandered.
     */
    @Test
    void sameSessionOnARouteOfAnotherPool_neitherRepinsNorMovesTheSession() throws Exception
    {
        String pinned = node(onPool("left", "shared-7"));
        for (int i = 0; i < 20; i++)
        {
            assertEquals("r1", node(onPool("right", "shared-7")));
            HttpResponse<String> owner = onPool("left", "shared-7");
            assertEquals(pinned, node(owner), "call " + i + " of the session's owner");
            assertTrue(owner.headers().firstValue(EgressServlet.STICKY).isEmpty(), "call " + i + " of the session's owner was repinned");
        }
    }

    /**
     * Two agents name the same session on the same pool. With one key space the second one was put
     * on the first one's node (and a repin of either moved both); each now has a pin of its own, so
     * over twenty session names their nodes differ at least once (all twenty alike by chance: 3^-20).
     */
    @Test
    void twoAgentsWithTheSameSessionName_getPinsOfTheirOwn() throws Exception
    {
        int apart = 0;
        for (int i = 0; i < 20; i++)
        {
            String session = "task-" + i;
            String alpha = node(asAgent(ALPHA_TOKEN, session));
            String beta = node(asAgent(BETA_TOKEN, session));
            assertEquals(alpha, node(asAgent(ALPHA_TOKEN, session)), "alpha keeps its node for " + session);
            assertEquals(beta, node(asAgent(BETA_TOKEN, session)), "beta keeps its node for " + session);
            if (!alpha.equals(beta))
                apart++;
        }
        assertTrue(apart > 0, "beta was put on alpha's node for every session name");
        assertTrue(("Bearer " + KEY).equals(target.requests().get(0).header("Authorization")), "the agents' calls go through the credential route");
    }
}
