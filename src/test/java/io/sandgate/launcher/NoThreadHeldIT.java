package io.sandgate.launcher;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.sandgate.ingress.websocket.WebSocketBridgeIT;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.HoldingMcpServer;
import io.sandgate.testing.McpCalls;
import io.sandgate.testing.RawConnect;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.SilentPeer;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hung peers on every face at once, with 40 server threads: 200 MCP tool calls the upstream
 * holds, 200 WebSocket upgrades to a sandbox that accepts TCP and never answers, and 100 CONNECTs
 * to an egress node that does the same. Health and an ordinary ingress request keep answering
 * within a second, and every slow call completes when its upstream answers.
 */
@EachIngressFrontEnd
class NoThreadHeldIT
{
    private static final int MCP_CALLS = 200;
    private static final int UPGRADES = 200;
    private static final int CONNECTS = 100;
    private static final Duration TIMEOUT = Duration.ofSeconds(8);
    private static final Duration PROMPT = Duration.ofSeconds(1);
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(PROMPT).build();

    @AutoClose
    private final HoldingMcpServer mcp = HoldingMcpServer.start();
    @AutoClose
    private SilentPeer silentSandbox;
    @AutoClose
    private SilentPeer silentNode;
    @AutoClose
    private final SandboxBackend healthy = SandboxBackend.start("healthy");
    @AutoClose("stop")
    private WebSocketClient browsers;
    @AutoClose("shutdownNow")
    private final ExecutorService agents = Executors.newFixedThreadPool(CONNECTS);

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    @BeforeEach
    void start() throws Exception
    {
        silentSandbox = SilentPeer.start(UPGRADES * 2);
        silentNode = SilentPeer.start(CONNECTS * 2);
        org.eclipse.jetty.client.HttpClient http = new org.eclipse.jetty.client.HttpClient();
        // Every upgrade on a connection of its own, all at once.
        http.setMaxConnectionsPerDestination(UPGRADES);
        browsers = new WebSocketClient(http);
        browsers.start();
    }

    private void configure(GatewayConfig config)
    {
        config.set("server.max-threads", "40")
            .set("log.access", "false")
            // Every client of this test is one loopback address: let it have them all.
            .set("server.max-concurrent-requests-per-client", "1000")
            .set("ingress.connect-timeout", TIMEOUT.toMillis() + "ms")
            .set("ingress.static-routes", Map.of("1", silentSandbox.address(), "2", healthy.hostPort()))
            .set("mcp.servers", List.of(Map.of("name", "slow", "url", mcp.url().toString(), "transport", "streamable")))
            .set("egress.connect-timeout", TIMEOUT.toMillis() + "ms")
            .set("egress.ssrf.allow", "127.0.0.0/8")
            .set("egress.health.tcp-interval", "1h")
            .set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "hung"), "upstream", "hung")))
            .set("egress.pools", Map.of("hung", Map.of("nodes", List.of(Map.of("id", "silent", "address", silentNode.address())))));
    }

    @Test
    void hungPeersOnEveryFace_holdNoRequestThread_andSlowCallsCompleteWhenAnswered() throws Exception
    {
        List<CompletableFuture<HttpResponse<String>>> calls = McpCalls.toolCalls(gateway, MCP_CALLS);
        List<CompletableFuture<Session>> upgrades = new ArrayList<>();
        for (int i = 0; i < UPGRADES; i++)
            upgrades.add(browsers.connect(new WebSocketBridgeIT.Browser(), URI.create("ws://127.0.0.1:" + gateway.port() + "/vnc/1/websockify")));
        List<CompletableFuture<String>> connects = new ArrayList<>();
        for (int i = 0; i < CONNECTS; i++)
            connects.add(RawConnect.send(gateway.internalPort(), "127.0.0.1:443", "hung", agents));

        // The gateway opens at most 64 connections to one sandbox (Jetty's default per destination);
        // the other upgrades wait in its client's queue, which holds no thread either.
        await().atMost(TIMEOUT.dividedBy(2)).until(() -> "mcp " + mcp.held() + ", sandbox " + silentSandbox.accepted() + ", node " + silentNode.accepted(),
            held -> mcp.held() == MCP_CALLS && silentSandbox.accepted() >= 64 && silentNode.accepted() >= CONNECTS);
        for (int round = 0; round < 3; round++)
        {
            assertEquals(200, HTTP.send(HttpRequest.newBuilder(gateway.uri("/healthz")).timeout(PROMPT).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
            HttpResponse<String> ingress = HTTP.send(HttpRequest.newBuilder(gateway.uri("/vnc/2/echo")).timeout(PROMPT).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, ingress.statusCode(), ingress.body());
        }
        assertTrue(calls.stream().noneMatch(CompletableFuture::isDone), "an MCP call ended before its upstream answered");
        assertTrue(upgrades.stream().noneMatch(CompletableFuture::isDone), "an upgrade ended before the sandbox's timeout");
        assertTrue(connects.stream().noneMatch(CompletableFuture::isDone), "a CONNECT ended before the node's timeout");

        mcp.answerAll();
        McpCalls.assertAllDone(calls);
        for (CompletableFuture<Session> upgrade : upgrades)
            assertThrows(ExecutionException.class, () -> upgrade.get(TIMEOUT.toSeconds() * 3, TimeUnit.SECONDS));
        for (CompletableFuture<String> connect : connects)
            assertTrue(connect.get(TIMEOUT.toSeconds() * 3, TimeUnit.SECONDS).startsWith("HTTP/1.1 502"), connect.get());
    }
}
