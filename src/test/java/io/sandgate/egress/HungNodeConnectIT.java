package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawConnect;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.SilentPeer;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Finding 6, CONNECT part: an egress node that accepts TCP and never answers the CONNECT must not
 * take the gateway's request threads. With 40 of them, 100 CONNECTs hang on such a node while
 * health and ordinary ingress traffic keep answering within a second; each CONNECT then ends with
 * the gateway's error once the handshake timeout has passed. Alone, the node is not blamed (a target
 * that drops packets looks the same through it); a CONNECT whose first node hangs is opened through
 * another, and that blames the silent node.
 */
class HungNodeConnectIT
{
    private static final int CONNECTS = 100;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
    private static final Duration PROMPT = Duration.ofSeconds(1);
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(PROMPT).build();

    private SilentPeer silent;
    private SandboxBackend sandbox;
    private TargetServer target;
    private ForwardProxy good;
    private ExecutorService agents;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    @BeforeEach
    void start() throws Exception
    {
        silent = SilentPeer.start(CONNECTS * 2);
        sandbox = SandboxBackend.start("healthy");
        target = TargetServer.start();
        good = ForwardProxy.start("good");
        agents = Executors.newFixedThreadPool(CONNECTS);
    }

    private void configure(GatewayConfig config)
    {
        config.set("server.max-threads", "40");
        config.set("log.access", "false");
        config.set("ingress.cookie.secret", "hung-node-it-secret-0123456789abcdef");
        config.set("ingress.static-routes", Map.of("2", sandbox.hostPort()));
        config.set("egress.connect-timeout", CONNECT_TIMEOUT.toMillis() + "ms");
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.connect-ports", "443," + target.httpsPort());
        // One round of TCP probes at start (it finds the silent node up), none during the test.
        config.set("egress.health.tcp-interval", "1h");
        config.set("egress.routes", List.of(
            Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "hung"), "upstream", "hung"),
            Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "mixed"), "upstream", "mixed", "retry", 1)));
        config.set("egress.pools", Map.of(
            "hung", Map.of("nodes", List.of(Map.of("id", "silent", "address", silent.address()))),
            // Nearly every first attempt goes to the silent node.
            "mixed", Map.of("nodes", List.of(
                Map.of("id", "silent-too", "address", silent.address(), "weight", 1000),
                Map.of("id", "good", "address", good.address(), "weight", 1)))));
    }

    @AfterEach
    void stop() throws Exception
    {
        agents.shutdownNow();
        silent.close();
        good.close();
        target.close();
        sandbox.close();
    }

    private CompletableFuture<String> connect(String taskType, int port)
    {
        return RawConnect.send(gateway.port(), "127.0.0.1:" + port, taskType, agents);
    }

    @Test
    void connectsToANodeThatNeverAnswers_holdNoRequestThread_andEachEndsWithTheGatewaysError() throws Exception
    {
        long started = System.nanoTime();
        List<CompletableFuture<String>> connects = new ArrayList<>();
        for (int i = 0; i < CONNECTS; i++)
            connects.add(connect("hung", 443));
        // Every CONNECT has reached the node and waits for its answer: more than the gateway has threads.
        await("every CONNECT waiting on the node at once").atMost(CONNECT_TIMEOUT.dividedBy(2)).until(() -> silent.accepted() >= CONNECTS);

        for (int round = 0; round < 3; round++)
        {
            HttpResponse<String> health = HTTP.send(HttpRequest.newBuilder(gateway.uri("/healthz")).timeout(PROMPT).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode());
            HttpResponse<String> ingress = HTTP.send(HttpRequest.newBuilder(gateway.uri("/vnc/2/echo")).timeout(PROMPT).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals(200, ingress.statusCode(), ingress.body());
        }
        assertTrue(connects.stream().noneMatch(CompletableFuture::isDone), "a CONNECT ended before its handshake timed out");

        for (CompletableFuture<String> connect : connects)
            assertTrue(connect.get(30, TimeUnit.SECONDS).startsWith("HTTP/1.1 502"), connect.get());
        assertTrue(System.nanoTime() - started >= CONNECT_TIMEOUT.toNanos(), "the node had its connect timeout to answer");

        // Silence on a connection the node took is a hung node or a target that drops packets: alone,
        // with no other node to compare with, the node is not blamed for it.
        MeterRegistry metrics = gateway.sandgate().metrics();
        assertEquals(CONNECTS, metrics.get("sandgate.egress.requests").tags("node", "silent", "outcome", "unanswered").counter().count());
        assertEquals(0, metrics.get("sandgate.egress.node.ejected").tags("node", "silent").gauge().value());
    }

    @Test
    void connectWhoseFirstNodeNeverAnswers_isOpenedThroughAnotherNode() throws Exception
    {
        List<CompletableFuture<String>> connects = new ArrayList<>();
        for (int i = 0; i < 4; i++)
            connects.add(connect("mixed", target.httpsPort()));

        for (CompletableFuture<String> connect : connects)
            assertTrue(connect.get(30, TimeUnit.SECONDS).startsWith("HTTP/1.1 200"), connect.get());
        assertEquals(4, good.connects(), "every tunnel was opened by the good node");
        MeterRegistry metrics = gateway.sandgate().metrics();
        assertTrue(metrics.get("sandgate.egress.requests").tags("node", "silent-too", "outcome", "unanswered").counter().count() >= 3,
            "first attempts went to the silent node");
        // Another node opened the tunnels it left unanswered: the silence was the node's failure.
        assertEquals(1, metrics.get("sandgate.egress.node.ejected").tags("node", "silent-too").gauge().value());
        assertEquals(4, metrics.get("sandgate.egress.requests").tags("node", "good", "outcome", "ok").counter().count());
    }
}
