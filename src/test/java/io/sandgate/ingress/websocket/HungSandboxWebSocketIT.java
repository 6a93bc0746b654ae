package io.sandgate.ingress.websocket;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;

import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LogCapture;
import io.sandgate.testing.SandboxBackend;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.api.exceptions.UpgradeException;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Finding 6, WebSocket part: a sandbox that accepts TCP and never answers must not take the
 * gateway's request threads. With 40 of them, 200 upgrades hang on such a sandbox while health and
 * ordinary ingress traffic keep answering within a second; each upgrade then ends with the
 * gateway's error once the connect timeout has passed.
 */
@EachIngressFrontEnd
class HungSandboxWebSocketIT
{
    private static final int UPGRADES = 200;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
    private static final Duration PROMPT = Duration.ofSeconds(1);

    private final List<Socket> held = new CopyOnWriteArrayList<>();
    private ServerSocket silent;
    private Thread acceptor;
    private SandboxBackend healthy;
    private WebSocketClient client;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("server.max-threads", "40")
        .set("ingress.cookie.secret", "hung-it-secret-0123456789abcdef")
        .set("ingress.connect-timeout", CONNECT_TIMEOUT.toMillis() + "ms")
        .set("ingress.static-routes", Map.of("1", "127.0.0.1:" + silent.getLocalPort(), "2", healthy.hostPort())));

    @BeforeEach
    void start() throws Exception
    {
        silent = new ServerSocket(0, UPGRADES, InetAddress.getLoopbackAddress());
        // Accepts every connection and never reads or writes: the sandbox that hangs.
        acceptor = new Thread(() ->
        {
            while (!silent.isClosed())
            {
                try
                {
                    held.add(silent.accept());
                }
                catch (IOException x)
                {
                    return;
                }
            }
        }, "silent-sandbox");
        acceptor.start();
        healthy = SandboxBackend.start("healthy");
        org.eclipse.jetty.client.HttpClient http = new org.eclipse.jetty.client.HttpClient();
        // Every upgrade on a connection of its own, all at once.
        http.setMaxConnectionsPerDestination(UPGRADES);
        client = new WebSocketClient(http);
        client.start();
    }

    @AfterEach
    void stop() throws Exception
    {
        client.stop();
        healthy.close();
        silent.close();
        acceptor.join();
        for (Socket socket : held)
            socket.close();
    }

    @Test
    void upgradesToASandboxThatNeverAnswers_holdNoRequestThread() throws Exception
    {
        try (LogCapture access = LogCapture.accessLog())
        {
            upgradesToASandboxThatNeverAnswers(access);
        }
    }

    private void upgradesToASandboxThatNeverAnswers(LogCapture access) throws Exception
    {
        List<CompletableFuture<Session>> upgrades = new ArrayList<>();
        for (int i = 0; i < UPGRADES; i++)
            upgrades.add(client.connect(new WebSocketBridgeIT.Browser(), URI.create("ws://127.0.0.1:" + gateway.port() + "/vnc/1/websockify"),
                new ClientUpgradeRequest()));
        // More upgrades waiting on the sandbox than the gateway has threads.
        await().atMost(CONNECT_TIMEOUT).until(() -> held.size() >= 40);

        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(PROMPT).build();
        for (int round = 0; round < 3; round++)
        {
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(gateway.uri().resolve("/healthz")).timeout(PROMPT).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode());
            HttpResponse<String> ingress = http.send(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/2/echo")).timeout(PROMPT).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals(200, ingress.statusCode());
            assertTrue(ingress.body().startsWith("backend=healthy"), ingress.body());
            if (round == 0)
                assertTrue(upgrades.stream().filter(upgrade -> !upgrade.isDone()).count() >= 40, "the upgrades still hang on the sandbox");
        }

        await().atMost(CONNECT_TIMEOUT.multipliedBy(3)).until(() -> upgrades.stream().allMatch(CompletableFuture::isDone));
        for (CompletableFuture<Session> upgrade : upgrades)
        {
            ExecutionException x = assertThrows(ExecutionException.class, upgrade::get);
            assertInstanceOf(UpgradeException.class, x.getCause());
        }
        // What the gateway answered, as it logged each: its own timeout, never an error of its own.
        // (Read from its log rather than from the client's exception: on a loaded machine Jetty's
        // client once reported 500 for an upgrade whose answer the gateway logged, and the client
        // itself printed, as 504.)
        await().untilAsserted(() ->
        {
            List<String> answered = access.lines().stream().filter(line -> line.contains("/vnc/1/websockify")).toList();
            assertEquals(UPGRADES, answered.size());
            assertTrue(answered.stream().allMatch(line -> line.contains("websockify 504 ") || line.contains("websockify 502 ")), answered.toString());
        });
    }
}
