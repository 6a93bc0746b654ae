package io.sandgate.egress;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.TargetServer;
import io.sandgate.testing.Tinyproxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Egress pools reloaded with the routes, through real tinyproxy nodes: a node a reload adds takes
 * traffic and is probed, a node it removes takes no new exchange while the one under way through
 * it finishes, a node it keeps keeps what the gateway learnt of it, and a configuration that does
 * not read changes nothing. Plain-http routes, so each request opens its own connection to its
 * node and shows in that node's own log.
 */
class EgressPoolReloadIT
{
    private static final String ADMIN = "pool-reload-admin-token";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private TargetServer target;
    private final Map<String, Tinyproxy> nodes = new HashMap<>();
    /** The pools and routes the gateway reads at start and at each reload: a test changes them, then reloads. */
    private final Map<String, Object> egress = new HashMap<>();

    @RegisterExtension
    final GatewayExtension gateways = GatewayExtension.manual(this::configure);
    /** Started by each test once it has set the pools it starts with. */
    private RunningGateway gateway;

    @BeforeEach
    void start()
    {
        target = TargetServer.start();
        for (String name : List.of("t1", "t2", "t3"))
            nodes.put(name, Tinyproxy.start(name, target.httpPort()));
        egress.put("egress.routes", routes("main"));
    }

    private void configure(GatewayConfig config)
    {
        config.set("admin.token", ADMIN);
        config.set("egress.connect-timeout", "1s");
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        // Nodes are probed at start and when a reload adds them, not again: what a test sees of a
        // node's health was made by what the test did. One failed probe ejects.
        config.set("egress.health.tcp-interval", "1h");
        config.set("egress.health.tcp-failures", "1");
        config.setAll(egress);
    }

    @AfterEach
    void stop()
    {
        nodes.values().forEach(Tinyproxy::close);
        target.close();
    }

    private static List<Map<String, Object>> routes(String pool)
    {
        return List.of(
            Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "sticky"), "upstream", pool, "scheme", "http", "sticky_session", true),
            Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", pool, "scheme", "http"));
    }

    /** Pool {@code main} of these tinyproxy nodes, weight 100 each. */
    private void pool(String... names)
    {
        List<Map<String, Object>> entries = new ArrayList<>();
        for (String name : names)
            entries.add(node(name, nodes.get(name).address(), 100));
        egress.put("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", entries)));
    }

    private static Map<String, Object> node(String id, String address, int weight)
    {
        return Map.of("id", id, "address", address, "region", "eu", "weight", weight);
    }

    private HttpResponse<String> reload() throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/egress/reload")).header("Authorization", "Bearer " + ADMIN)
            .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest request(String pathAndQuery, String session)
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve("/egress/127.0.0.1:" + target.httpPort() + pathAndQuery))
            .timeout(Duration.ofSeconds(15));
        if (session != null)
            request.header(EgressPlanner.TASK_TYPE, "sticky").header("X-Agent-Session", session);
        return request.build();
    }

    private HttpResponse<String> call(String session) throws Exception
    {
        return HTTP.send(request("/echo", session), HttpResponse.BodyHandlers.ofString());
    }

    private static String node(HttpResponse<?> response)
    {
        return response.headers().firstValue(EgressServlet.NODE).orElse("-");
    }

    private JsonNode poolNode(String id) throws Exception
    {
        return PoolView.node(gateway, ADMIN, id);
    }

    /** How many plain-http requests the node says it forwarded, from its own log. */
    private int forwarded(String name)
    {
        return nodes.get(name).log().split("GET http://", -1).length - 1;
    }

    @Test
    void nodeAddedByReload_takesTraffic() throws Exception
    {
        pool("t1");
        gateway = gateways.startAnother();
        assertEquals("t1", node(call(null)));

        pool("t1", "t2");
        HttpResponse<String> reloaded = reload();
        assertEquals(200, reloaded.statusCode(), reloaded.body());
        await().atMost(Duration.ofSeconds(10)).until(() -> node(call(null)).equals("t2"));
        assertTrue(forwarded("t2") > 0, nodes.get("t2").log());
    }

    @Test
    void nodeAddedByReload_isProbedAtOnce_asNodesAtStartAre() throws Exception
    {
        pool("t1");
        gateway = gateways.startAnother();
        int closed;
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            closed = taken.getLocalPort();
        }
        egress.put("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(
            node("t1", nodes.get("t1").address(), 100), node("dead", "127.0.0.1:" + closed, 100)))));
        assertEquals(200, reload().statusCode());
        // Its first probe fails: without it the node would count as healthy for an hour.
        await().atMost(Duration.ofSeconds(5)).until(() -> poolNode("dead").get("ejection").asText().equals("tcp"));
        for (int i = 0; i < 10; i++)
            assertEquals("t1", node(call(null)));
    }

    @Test
    void nodeRemovedByReload_takesNoNewExchange_whileOneInFlightThroughItFinishes() throws Exception
    {
        pool("t1", "t2");
        gateway = gateways.startAnother();
        String removed = node(call("agent-1"));
        String kept = removed.equals("t1") ? "t2" : "t1";
        CompletableFuture<HttpResponse<String>> slow = HTTP.sendAsync(request("/slow?ms=3000", "agent-1"), HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(5)).until(() -> target.requests().stream().anyMatch(r -> r.pathAndQuery().startsWith("/slow")));
        int before = forwarded(removed);

        pool(kept);
        HttpResponse<String> reloaded = reload();
        assertEquals(200, reloaded.statusCode(), reloaded.body());
        assertFalse(slow.isDone(), "the slow exchange is still under way");

        HttpResponse<String> moved = call("agent-1");
        assertEquals(kept, node(moved));
        assertEquals("repinned", moved.headers().firstValue(EgressServlet.STICKY).orElse("-"), "the session left its node: the agent is told");
        for (int i = 0; i < 20; i++)
        {
            HttpResponse<String> response = call(null);
            assertEquals(200, response.statusCode(), response.body());
            assertEquals(kept, node(response));
        }
        HttpResponse<String> finished = slow.get(10, TimeUnit.SECONDS);
        assertEquals(200, finished.statusCode(), finished.body());
        assertEquals("slow", finished.body());
        assertEquals(removed, node(finished));
        assertEquals(before, forwarded(removed), "nothing new through the removed node: " + nodes.get(removed).log());

        String metrics = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        assertFalse(metrics.contains("node=\"" + removed + "\""), "the removed node's series are gone");
        assertTrue(metrics.contains("node=\"" + kept + "\""));
    }

    @Test
    void nodeKeptByReload_keepsItsEjection_andTakesItsNewWeight() throws Exception
    {
        pool("t1", "t2", "t3");
        gateway = gateways.startAnother();
        nodes.get("t1").close();
        // Agents' requests find the dead node out (a fresh state would think it healthy for an hour).
        await().atMost(Duration.ofSeconds(10)).until(() ->
        {
            call(null);
            return poolNode("t1").get("ejected").asBoolean();
        });
        assertEquals("passive", poolNode("t1").get("ejection").asText());

        egress.put("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(
            node("t1", nodes.get("t1").address(), 50), node("t2", nodes.get("t2").address(), 100), node("t3", nodes.get("t3").address(), 100)))));
        assertEquals(200, reload().statusCode());

        JsonNode t1 = poolNode("t1");
        assertEquals(50, t1.get("configuredWeight").asInt(), t1.toString());
        assertTrue(t1.get("ejected").asBoolean(), "still ejected: " + t1);
        assertEquals("passive", t1.get("ejection").asText());
        assertEquals(1, t1.get("ejections").asInt());
        for (int i = 0; i < 10; i++)
            assertNotEquals("t1", node(call(null)));
    }

    @Test
    void reloadThatDoesNotRead_isRefusedWith400_andChangesNothing() throws Exception
    {
        pool("t1");
        gateway = gateways.startAnother();
        List<Map<String, Object>> twoNodes = List.of(node("t1", nodes.get("t1").address(), 100), node("t2", nodes.get("t2").address(), 100));

        // Each refused configuration has a table that would no longer route 127.0.0.1, and a node t2 more.
        Map<String, Object> elsewhere = Map.of("match", Map.of("domains", List.of("other.test.invalid")), "upstream", "main");
        egress.put("egress.pools", Map.of("main", Map.of("nodes", twoNodes)));
        egress.put("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("other.test.invalid")), "upstream", "missing")));
        assertRefused("upstream missing");
        egress.put("egress.pools", Map.of("main", Map.of("nodes", twoNodes), "spare", Map.of("nodes", List.of())));
        egress.put("egress.routes", List.of(elsewhere));
        assertRefused("empty");
        egress.put("egress.pools", Map.of("main", Map.of("nodes", List.of(node("t1", nodes.get("t1").address(), 100),
            node("t1", nodes.get("t2").address(), 100), node("t2", nodes.get("t2").address(), 100)))));
        assertRefused("appears twice");
    }

    private void assertRefused(String reason) throws Exception
    {
        HttpResponse<String> refused = reload();
        assertEquals(400, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains(reason), refused.body());
        JsonNode pool = PoolView.pool(gateway, ADMIN);
        assertEquals(1, pool.get("nodes").size(), "the pools are as they were: " + pool);
        for (int i = 0; i < 5; i++)
        {
            HttpResponse<String> response = call("agent-1");
            assertEquals(200, response.statusCode(), "the routes are as they were: " + response.body());
            assertEquals("t1", node(response));
        }
        assertEquals(0, forwarded("t2"));
    }
}
