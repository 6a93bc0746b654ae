package io.sandgate.egress;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.ProxyNode;
import io.sandgate.testing.ProxyProcess;
import io.sandgate.testing.RawConnect;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.Squid;
import io.sandgate.testing.TargetServer;
import io.sandgate.testing.Tinyproxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Egress through the forward proxies deployments run as nodes, Debian's squid and tinyproxy, each
 * as packaged: CONNECT allowed to 443 (and, here, the target's https port) only. Plain http must
 * then go in absolute form, and https through CONNECT, both to the checked address.
 */
class EgressStockNodesIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private TargetServer target;

    @RegisterExtension
    final GatewayExtension gateway = GatewayExtension.manual(this::configure);

    @BeforeEach
    void start() throws Exception
    {
        target = TargetServer.start();
    }

    private void configure(GatewayConfig config)
    {
        config.trustStoreOf(target);
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.routes", List.of(
            Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "plain"), "upstream", "main", "scheme", "http"),
            Map.of("match", Map.of("domains", List.of("127.0.0.1", "localhost")), "upstream", "main")));
    }

    @AfterEach
    void stop()
    {
        target.close();
    }

    /** The node, allowed to CONNECT to 443 and the target's https port, and never to its http port. */
    private ProxyProcess node(String kind)
    {
        return switch (kind)
        {
            case "squid" -> Squid.start(kind, target.httpsPort());
            case "tinyproxy" -> Tinyproxy.start(kind, target.httpsPort());
            default -> throw new IllegalArgumentException(kind);
        };
    }

    private RunningGateway through(ProxyNode node) throws Exception
    {
        return gateway.startAnother(config -> config.set("egress.pools",
            Map.of("main", Map.of("nodes", List.of(Map.of("id", node.name(), "address", node.address()))))));
    }

    private static HttpResponse<String> get(RunningGateway gateway, String path, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve(path));
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"squid", "tinyproxy"})
    void plainHttpTarget_throughAStockNode(String kind) throws Exception
    {
        try (ProxyProcess node = node(kind); RunningGateway gateway = through(node))
        {
            HttpResponse<String> response = get(gateway, "/egress/127.0.0.1:" + target.httpPort() + "/echo?q=1", EgressPlanner.TASK_TYPE, "plain");
            assertEquals(200, response.statusCode(), response.body() + "\n" + node.diagnostics());
            assertEquals(kind, response.headers().firstValue(EgressServlet.NODE).orElse("-"));
            assertTrue(response.body().contains("scheme=http"), response.body());
            TargetServer.Recorded seen = target.requests().get(0);
            assertEquals("/echo?q=1", seen.pathAndQuery());
            assertEquals("127.0.0.1:" + target.httpPort(), seen.header("Host"), "the checked address, as the node rewrote it");
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"squid", "tinyproxy"})
    void httpsTarget_throughAStockNode(String kind) throws Exception
    {
        try (ProxyProcess node = node(kind); RunningGateway gateway = through(node))
        {
            HttpResponse<String> response = get(gateway, "/egress/localhost:" + target.httpsPort() + "/echo");
            assertEquals(200, response.statusCode(), response.body() + "\n" + node.diagnostics());
            assertEquals(kind, response.headers().firstValue(EgressServlet.NODE).orElse("-"));
            assertTrue(response.body().contains("scheme=https"), response.body());
            assertEquals("localhost:" + target.httpsPort(), target.requests().get(0).header("Host"), "inside the tunnel, the name");
        }
    }

    /** The seed's per-exit network metrics: how long a node takes to connect, to carry TLS and to answer. */
    @Test
    void nodeTimings_areHistogramsPerNode_ofConnect_tlsHandshake_andFirstByte() throws Exception
    {
        try (ProxyProcess node = node("tinyproxy"); RunningGateway gateway = through(node))
        {
            assertEquals(200, get(gateway, "/egress/localhost:" + target.httpsPort() + "/echo").statusCode(), node.diagnostics());
            String tunnel = RawConnect.send(gateway.port(), "localhost:" + target.httpsPort(), "any", Runnable::run).get(10, TimeUnit.SECONDS);
            assertTrue(tunnel.startsWith("HTTP/1.1 200"), tunnel);

            String metrics = get(gateway, "/metrics").body();
            String series = "{node=\"tinyproxy\",pool=\"main\"}";
            // Connects: the base-URL face's client and the CONNECT face's tunnel (probes may add more).
            assertTrue(count(metrics, "sandgate_egress_node_connect_seconds_count" + series) >= 2, metrics);
            assertEquals(1, count(metrics, "sandgate_egress_node_tls_seconds_count" + series), "one handshake, counted once: " + metrics);
            assertEquals(2, count(metrics, "sandgate_egress_node_first_byte_seconds_count" + series), "the request's and the CONNECT's: " + metrics);
            assertTrue(metrics.contains("sandgate_egress_node_first_byte_seconds_bucket{node=\"tinyproxy\",pool=\"main\",le=\"0.1\"}"),
                "a histogram, with buckets a dashboard can take quantiles of");
        }
    }

    /** The value of {@code series} in a Prometheus scrape, 0 when absent. */
    private static double count(String metrics, String series)
    {
        return metrics.lines().filter(line -> line.startsWith(series + " ")).mapToDouble(line -> Double.parseDouble(line.substring(series.length() + 1)))
            .findFirst().orElse(0);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"squid", "tinyproxy"})
    void plainHttpTarget_onAClosedPort_isUnreachable_butATargets5xxPassesAsItIs(String kind) throws Exception
    {
        int closed;
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            closed = taken.getLocalPort();
        }
        try (ProxyProcess node = node(kind); RunningGateway gateway = through(node))
        {
            // The node answers with its own error page (squid 503 with X-Squid-Error, tinyproxy
            // 500 Unable to connect): the agent is told what a refused tunnel tells it.
            HttpResponse<String> refused = get(gateway, "/egress/127.0.0.1:" + closed + "/x", EgressPlanner.TASK_TYPE, "plain");
            assertEquals(502, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("egress_target_unreachable"), refused.body());
            assertTrue(refused.headers().firstValue("X-Squid-Error").isEmpty() && refused.headers().firstValue("Server").stream().noneMatch(s -> s.startsWith("tinyproxy")),
                "nothing of the node's page: " + refused.headers().map());

            for (int status : new int[] {500, 503})
            {
                HttpResponse<String> failing = get(gateway, "/egress/127.0.0.1:" + target.httpPort() + "/status/" + status, EgressPlanner.TASK_TYPE, "plain");
                assertEquals(status, failing.statusCode(), failing.body());
                assertEquals("status " + status, failing.body().trim(), "the target's own answer");
                assertEquals("http", failing.headers().firstValue("X-Target").orElse("-"));
            }
        }
    }

    /**
     * tinyproxy closes its side of a connection after each request: a POST or GET on such a pooled
     * connection would fail after it had begun, with no other node to try. Each goes on a fresh one.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"squid", "tinyproxy"})
    void plainHttpCalls_backToBack_throughOneNode_allArriveOnce(String kind) throws Exception
    {
        try (ProxyProcess node = node(kind); RunningGateway gateway = through(node))
        {
            for (int i = 0; i < 60; i++)
            {
                HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve("/egress/127.0.0.1:" + target.httpPort() + "/echo"))
                    .header(EgressPlanner.TASK_TYPE, "plain").POST(HttpRequest.BodyPublishers.ofString("post-" + i));
                HttpResponse<String> post = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, post.statusCode(), i + ": " + post.body() + "\n" + node.diagnostics());
                assertTrue(post.body().contains("post-" + i), post.body());
                assertEquals(200, get(gateway, "/egress/127.0.0.1:" + target.httpPort() + "/echo", EgressPlanner.TASK_TYPE, "plain").statusCode());
            }
            assertEquals(60, target.requests().stream().filter(r -> r.method().equals("POST")).count(), "each POST reached the target once");
        }
    }
}
