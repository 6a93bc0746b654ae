package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.web.NoScript;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Egress through real forward proxies started by the test (with switchable faults) and a real
 * target over HTTP and HTTPS; each test gets fresh nodes and a fresh gateway, so health state never
 * leaks between scenarios.
 */
class EgressRoutingIT
{
    private static final String ADMIN = "egress-it-admin-token";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private TargetServer target;
    private final Map<String, ForwardProxy> nodes = new HashMap<>();

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    @BeforeEach
    void start() throws Exception
    {
        target = TargetServer.start();
        for (String name : List.of("eu1", "eu2", "us1"))
            nodes.put(name, ForwardProxy.start(name));
    }

    private void configure(GatewayConfig config)
    {
        config.set("admin.token", ADMIN);
        config.trustStoreOf(target);
        config.set("egress.connect-timeout", "1s");
        config.set("egress.first-byte-timeout", "2s");
        config.set("egress.health.tcp-interval", "200ms");
        config.set("egress.health.tcp-timeout", "200ms");
        config.set("egress.health.recovery-step-interval", "700ms");
        // The target runs on loopback, which the SSRF guard refuses unless allowed.
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.routes", List.of(
            Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "plain"), "upstream", "main", "scheme", "http", "retry", 2),
            Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "sticky"), "upstream", "main",
                "sticky_session", true, "sticky_ttl", "5m", "retry", 2),
            Map.of("match", Map.of("domains", List.of("127.0.0.1", "*.test.invalid")), "upstream", "main", "retry", 2, "timeout", "5s")));
        config.set("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(
            Map.of("id", "eu1", "address", nodes.get("eu1").address(), "region", "eu", "weight", 100),
            Map.of("id", "eu2", "address", nodes.get("eu2").address(), "region", "eu", "weight", 100),
            Map.of("id", "us1", "address", nodes.get("us1").address(), "region", "us", "weight", 100)))));
    }

    @AfterEach
    void stop() throws Exception
    {
        for (ForwardProxy node : nodes.values())
            node.close();
        target.close();
    }

    private HttpResponse<String> call(String method, String path, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve(path)).timeout(Duration.ofSeconds(15))
            .method(method, method.equals("POST") ? HttpRequest.BodyPublishers.ofString("{\"q\":1}") : HttpRequest.BodyPublishers.noBody());
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private String https(String path)
    {
        return "/egress/127.0.0.1:" + target.httpsPort() + path;
    }

    private static String node(HttpResponse<?> response)
    {
        return response.headers().firstValue(EgressServlet.NODE).orElse("-");
    }

    private JsonNode pools() throws Exception
    {
        return PoolView.pool(gateway, ADMIN);
    }

    private double weight(String nodeId) throws Exception
    {
        return PoolView.node(gateway, ADMIN, nodeId).get("weight").asDouble();
    }

    @Test
    void httpsTarget_isReachedThroughANodeOfThePreferredRegion_withAgentHeadersStripped() throws Exception
    {
        HttpResponse<String> response = call("GET", https("/echo?x=1"), "X-Agent-Session", "s-1", "X-Agent-Task-Type", "llm",
            "Authorization", "Bearer internal-token");
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().contains("scheme=https"), response.body());
        assertTrue(Set.of("eu1", "eu2").contains(node(response)), node(response));
        TargetServer.Recorded seen = target.requests().get(0);
        assertEquals("/echo?x=1", seen.pathAndQuery());
        assertNull(seen.header("X-Agent-Session"));
        assertNull(seen.header("X-Agent-Task-Type"));
        assertNull(seen.header("X-Forwarded-For"));
        assertEquals("Bearer internal-token", seen.header("Authorization"), "passed through until credentials are injected");
    }

    @Test
    void earlyHintsFromTheTarget_areNotTheAgentsAnswer() throws Exception
    {
        HttpResponse<String> response = call("GET", https("/hints"));

        assertEquals(200, response.statusCode(), response.body());
        assertEquals("final", response.body());
        assertTrue(response.headers().firstValue("Link").isEmpty(), "the hint's fields are not the answer's: " + response.headers().map());
    }

    @Test
    void plainHttpRoute_asksTheNodeInAbsoluteFormForTheCheckedAddress() throws Exception
    {
        HttpResponse<String> response = call("GET", "/egress/127.0.0.1:" + target.httpPort() + "/echo", "X-Agent-Task-Type", "plain");
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().contains("scheme=http"), response.body());
        String authority = "127.0.0.1:" + target.httpPort();
        assertTrue(nodes.get(node(response)).received().contains(new ForwardProxy.Received("GET", "http://" + authority + "/echo", authority)),
            "the node is asked for the checked address: " + nodes.get(node(response)).received());
    }

    @Test
    void noRoute_is403_andAMalformedHost400() throws Exception
    {
        HttpResponse<String> response = call("GET", "/egress/example.org/x");
        assertEquals(403, response.statusCode());
        assertTrue(response.body().contains("no egress route for example.org"), response.body());
        assertEquals(400, call("GET", "/egress/..%2f..%2fetc/x").statusCode());
        // No target at all, with or without the slash: the same refusal, not a failure of the gateway.
        for (String bare : new String[] {"/egress", "/egress/"})
        {
            HttpResponse<String> none = call("GET", bare);
            assertEquals(400, none.statusCode(), bare + ": " + none.body());
        }
        assertEquals(0, nodes.values().stream().mapToInt(ForwardProxy::requests).sum());
    }

    @Test
    void killedNode_getsNoNewRequestsWithinThreeSeconds_andNothingFails() throws Exception
    {
        nodes.get("eu1").refuse();
        long start = System.nanoTime();
        await().atMost(Duration.ofSeconds(3)).until(() -> pools().get("nodes").get(0).get("ejected").asBoolean());
        long detected = System.nanoTime() - start;
        nodes.get("eu1").resetCounters();
        for (int i = 0; i < 40; i++)
        {
            HttpResponse<String> response = call("GET", https("/echo"));
            assertEquals(200, response.statusCode(), response.body());
            assertFalse(node(response).equals("eu1"));
        }
        assertEquals(0, nodes.get("eu1").requests());
        assertTrue(detected < 3_000_000_000L, "ejected after " + detected / 1_000_000 + " ms");
    }

    @Test
    void failuresBeforeEjection_areRetriedOnAnotherNode() throws Exception
    {
        nodes.get("eu1").error5xx(502);
        nodes.get("eu2").error5xx(502);
        for (int i = 0; i < 20; i++)
        {
            HttpResponse<String> response = call("GET", https("/echo"));
            assertEquals(200, response.statusCode(), response.body());
            assertEquals("us1", node(response));
        }
    }

    @Test
    void answerAfterARetry_stillForbidsScripts() throws Exception
    {
        // On a single listener, a target's page is served under the gateway's origin: it must not
        // become a host for scripts because the first attempt's headers were reset for the retry.
        nodes.get("eu1").error5xx(502);
        nodes.get("eu2").error5xx(502);
        HttpResponse<String> response = call("GET", https("/echo"));
        assertEquals(200, response.statusCode(), response.body());
        assertEquals("us1", node(response));
        assertEquals(NoScript.POLICY, response.headers().firstValue(NoScript.CONTENT_SECURITY_POLICY).orElse(null));
        assertEquals("nosniff", response.headers().firstValue(NoScript.X_CONTENT_TYPE_OPTIONS).orElse(null));
    }

    @Test
    void jitteryNode_isFoundByHttpProbes_andEjected() throws Exception
    {
        gateway.restart(config -> config.setAll(Map.of("egress.health.http-url", target.httpUrl("/echo"), "egress.health.http-interval", "100ms")));
        nodes.get("eu1").delay(Duration.ZERO, Duration.ofMillis(600));
        await().atMost(Duration.ofSeconds(10)).until(() ->
        {
            for (JsonNode node : pools().get("nodes"))
            {
                if (node.get("id").asText().equals("eu1"))
                    return node.get("ejected").asBoolean() && node.get("ejection").asText().equals("jitter");
            }
            return false;
        });
        assertTrue(weight("eu2") > 0, "a steady node stays in");
    }

    @Test
    void recoveredNode_rampsTenFiftyHundred() throws Exception
    {
        nodes.get("eu2").refuse();
        await().atMost(Duration.ofSeconds(3)).until(() -> weight("eu2") == 0);
        nodes.get("eu2").ok();
        await().atMost(Duration.ofSeconds(3)).until(() -> weight("eu2") == 10);
        await().atMost(Duration.ofSeconds(3)).until(() -> weight("eu2") == 50);
        await().atMost(Duration.ofSeconds(3)).until(() -> weight("eu2") == 100);
    }

    @Test
    void regionFailsOver_whenMostOfItsNodesAreEjected() throws Exception
    {
        nodes.get("eu1").refuse();
        nodes.get("eu2").refuse();
        await().atMost(Duration.ofSeconds(3)).until(() -> pools().get("regionFailingOver").asBoolean());
        for (int i = 0; i < 10; i++)
            assertEquals("us1", node(call("GET", https("/echo"))));
    }

    @Test
    void stickySession_staysPinned_andMovesWhenItsNodeDies() throws Exception
    {
        HttpResponse<String> first = call("GET", https("/echo"), "X-Agent-Task-Type", "sticky", "X-Agent-Session", "agent-7");
        String pinned = node(first);
        for (int i = 0; i < 20; i++)
            assertEquals(pinned, node(call("GET", https("/echo"), "X-Agent-Task-Type", "sticky", "X-Agent-Session", "agent-7")));
        Set<String> others = new HashSet<>();
        for (int i = 0; i < 30; i++)
            others.add(node(call("GET", https("/echo"), "X-Agent-Task-Type", "sticky", "X-Agent-Session", "agent-" + i)));
        assertTrue(others.size() > 1, "different sessions spread over nodes: " + others);

        nodes.get(pinned).refuse();
        await().atMost(Duration.ofSeconds(3)).until(() ->
        {
            for (JsonNode node : pools().get("nodes"))
            {
                if (node.get("id").asText().equals(pinned))
                    return node.get("ejected").asBoolean();
            }
            return false;
        });
        HttpResponse<String> moved = call("GET", https("/echo"), "X-Agent-Task-Type", "sticky", "X-Agent-Session", "agent-7");
        assertEquals(200, moved.statusCode());
        assertFalse(node(moved).equals(pinned));
        assertEquals("repinned", moved.headers().firstValue(EgressServlet.STICKY).orElse(null));
        String newPin = node(moved);
        assertEquals(newPin, node(call("GET", https("/echo"), "X-Agent-Task-Type", "sticky", "X-Agent-Session", "agent-7")));
    }

    @Test
    void postDroppedAfterItWentOut_isNotRetried_butGetIs() throws Exception
    {
        for (ForwardProxy node : nodes.values())
            node.dropMidResponse(0);
        // Plain http, so the cut comes when the target answers, not in a TLS handshake.
        String plain = "/egress/127.0.0.1:" + target.httpPort() + "/echo";
        HttpResponse<String> post = call("POST", plain, "Content-Type", "application/json", "X-Agent-Task-Type", "plain");
        assertEquals(502, post.statusCode(), post.body());
        assertEquals(1, nodes.values().stream().mapToInt(ForwardProxy::requests).sum(), "the POST may have done its work: one attempt only");

        nodes.values().forEach(ForwardProxy::resetCounters);
        HttpResponse<String> get = call("GET", plain, "X-Agent-Task-Type", "plain");
        assertEquals(502, get.statusCode());
        assertEquals(3, nodes.values().stream().mapToInt(ForwardProxy::requests).sum(), "first attempt and two retries, each on another node");
    }

    @Test
    void retryStorm_isBoundedByTheBudget() throws Exception
    {
        for (ForwardProxy node : nodes.values())
            node.error5xx(503);
        int requests = 60;
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < requests; i++)
            statuses.add(call("GET", https("/echo")).statusCode());
        int attempts = nodes.values().stream().mapToInt(ForwardProxy::requests).sum();
        assertTrue(statuses.stream().allMatch(s -> s == 502), () -> "statuses: " + statuses);
        // Without a budget 60 requests x 3 attempts = 180; the budget allows 20 % plus a small reserve.
        assertTrue(attempts <= requests * 1.2 + 12, "attempts through the nodes: " + attempts);
    }

    @Test
    void streamingResponses_flowThroughUnbuffered() throws Exception
    {
        HttpResponse<java.io.InputStream> response = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve(https("/stream?events=3&intervalMs=400"))).build(),
            HttpResponse.BodyHandlers.ofInputStream());
        try (java.io.BufferedReader lines = new java.io.BufferedReader(new java.io.InputStreamReader(response.body())))
        {
            long start = System.nanoTime();
            String first = lines.readLine();
            long firstAt = System.nanoTime() - start;
            assertTrue(first.startsWith("data:") || first.startsWith("id:") || first.startsWith("event:"), first);
            assertTrue(firstAt < 350_000_000L, "first event after " + firstAt / 1_000_000 + " ms: not held back for the rest");
        }
    }

    @Test
    void forwardProxyMode_connectIsTunnelledThroughAnEgressNode() throws Exception
    {
        org.eclipse.jetty.client.HttpClient client = new org.eclipse.jetty.client.HttpClient();
        client.setSslContextFactory(target.newClientSslContextFactory());
        client.getProxyConfiguration().addProxy(new org.eclipse.jetty.client.HttpProxy("127.0.0.1", gateway.port()));
        client.start();
        try
        {
            org.eclipse.jetty.client.ContentResponse response = client.newRequest(target.httpsUrl("/echo")).timeout(10, java.util.concurrent.TimeUnit.SECONDS).send();
            assertEquals(200, response.getStatus(), response.getContentAsString());
            assertTrue(response.getContentAsString().contains("scheme=https"));
            assertEquals(1, nodes.values().stream().mapToInt(ForwardProxy::connects).sum(), "one tunnel, through one node");

            nodes.values().forEach(ForwardProxy::resetCounters);
            java.util.concurrent.ExecutionException refused = org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                () -> client.newRequest("https://example.org/").timeout(10, java.util.concurrent.TimeUnit.SECONDS).send());
            assertTrue(String.valueOf(refused.getCause()).contains("403"), String.valueOf(refused.getCause()));
            assertEquals(0, nodes.values().stream().mapToInt(ForwardProxy::requests).sum(), "no route, no node");
        }
        finally
        {
            client.stop();
        }
    }

    @Test
    void routeTable_reloadsWithoutRestart_andABadTableIsRefused() throws Exception
    {
        // Each reload runs the configuration again, so it reads these values as they are then.
        Map<String, Object> values = new HashMap<>();
        values.put("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(Map.of("id", "eu1", "address", nodes.get("eu1").address())))));
        values.put("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("a.test.invalid")), "upstream", "main")));
        gateway.restart(config -> config.setAll(values));
        assertEquals(403, call("GET", "/egress/b.test.invalid/x").statusCode());
        values.put("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("b.test.invalid")), "upstream", "main")));
        HttpResponse<String> reloaded = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/egress/reload"))
            .header("Authorization", "Bearer " + ADMIN).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, reloaded.statusCode(), reloaded.body());
        assertEquals(403, call("GET", "/egress/a.test.invalid/x").statusCode());
        assertTrue(call("GET", "/egress/b.test.invalid/x").statusCode() != 403, "b is routed now");

        values.put("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("c.test.invalid")), "upstream", "other")));
        HttpResponse<String> refused = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/egress/reload"))
            .header("Authorization", "Bearer " + ADMIN).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(400, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("upstream other"), refused.body());
        assertTrue(call("GET", "/egress/b.test.invalid/x").statusCode() != 403, "the old table is still in force");
    }

    @Test
    void inFlightExchange_getsHalfAsMuchAgainWhenItsRegionFailsOver() throws Exception
    {
        Map<String, Object> allInEu = new HashMap<>();
        allInEu.put("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "main", "timeout", "1s")));
        allInEu.put("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(
            Map.of("id", "eu1", "address", nodes.get("eu1").address(), "region", "eu"),
            Map.of("id", "eu2", "address", nodes.get("eu2").address(), "region", "eu"),
            Map.of("id", "us1", "address", nodes.get("us1").address(), "region", "eu")))));
        gateway.restart(config -> config.setAll(allInEu));
        assertEquals(504, call("GET", https("/slow?ms=1300")).statusCode(), "1.3 s exceeds the 1 s route timeout");
        nodes.get("eu2").refuse();
        nodes.get("us1").refuse();
        await().atMost(Duration.ofSeconds(3)).until(() -> pools().get("regionFailingOver").asBoolean());
        HttpResponse<String> slow = call("GET", https("/slow?ms=1300"));
        assertEquals(200, slow.statusCode(), "within 1.5x while the region fails over: " + slow.body());
        assertEquals(504, call("GET", https("/slow?ms=1700")).statusCode(), "but never past 1.5x");
    }

    @Test
    void forwardProxyPort_absoluteFormHttpRequestsGoThroughANode() throws Exception
    {
        try (RunningGateway proxying = gateway.startAnother(config -> config.set("egress.forward-proxy-port", "0")))
        {
            HttpClient viaProxy = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .proxy(java.net.ProxySelector.of(new java.net.InetSocketAddress("127.0.0.1", proxying.forwardProxyPort()))).build();
            HttpResponse<String> response = viaProxy.send(HttpRequest.newBuilder(java.net.URI.create(target.httpUrl("/echo?q=1"))).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals(200, response.statusCode(), response.body());
            assertTrue(response.body().contains("scheme=http"), response.body());
            assertTrue(nodes.get(node(response)).received().stream().anyMatch(r -> r.target().equals(target.httpUrl("/echo?q=1"))),
                "forwarded by " + node(response));
            assertEquals("/echo?q=1", target.requests().get(target.requests().size() - 1).pathAndQuery());
        }
    }

    @Test
    void adminView_needsTheToken() throws Exception
    {
        assertEquals(401, HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/egress/pools")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
        assertEquals(403, HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/egress/pools")).header("Authorization", "Bearer wrong").build(),
            HttpResponse.BodyHandlers.ofString()).statusCode());
        JsonNode pool = pools();
        assertEquals("main", pool.get("name").asText());
        assertEquals(3, pool.get("nodes").size());
    }
}
