package io.sandgate.ingress.websocket;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LogCapture;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.api.exceptions.UpgradeException;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The WebSocket bridge end to end: a real Jetty WebSocket client, the embedded gateway, and a real
 * Jetty WebSocket server standing in for the sandbox.
 */
@EachIngressFrontEnd
public class WebSocketBridgeIT
{
    private static final String SECRET = "ws-it-secret-0123456789abcdef";
    @AutoClose
    private static WebSocketBackend sandbox;
    @AutoClose
    private static WebSocketBackend other;
    @AutoClose("stop")
    private static WebSocketClient client;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.cookie.secret", SECRET)
        .set("ingress.static-routes", Map.of("1", sandbox.hostPort(), "2", other.hostPort(), "3", "127.0.0.1:1"))
        .set("ingress.websocket.ping-interval", "200ms"));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox = WebSocketBackend.start("s1");
        other = WebSocketBackend.start("s2");
        client = new WebSocketClient();
        client.setMaxBinaryMessageSize(1024 * 1024);
        client.start();
    }

    /** A browser-like client leg that reads only while {@link #reading} is set. */
    public static final class Browser implements Session.Listener
    {
        public final List<String> texts = new CopyOnWriteArrayList<>();
        final List<byte[]> binaries = new CopyOnWriteArrayList<>();
        final AtomicLong bytes = new AtomicLong();
        final AtomicInteger pings = new AtomicInteger();
        final AtomicInteger pongs = new AtomicInteger();
        public final CompletableFuture<String> closed = new CompletableFuture<>();
        volatile boolean reading = true;
        public volatile Session session;

        @Override
        public void onWebSocketOpen(Session session)
        {
            this.session = session;
            session.demand();
        }

        @Override
        public void onWebSocketText(String message)
        {
            texts.add(message);
            session.demand();
        }

        @Override
        public void onWebSocketBinary(ByteBuffer payload, Callback callback)
        {
            byte[] copy = new byte[payload.remaining()];
            payload.get(copy);
            binaries.add(copy);
            bytes.addAndGet(copy.length);
            callback.succeed();
            if (reading)
                session.demand();
        }

        void resume()
        {
            reading = true;
            session.demand();
        }

        @Override
        public void onWebSocketPing(ByteBuffer payload)
        {
            pings.incrementAndGet();
            session.sendPong(payload, Callback.NOOP);
            session.demand();
        }

        @Override
        public void onWebSocketPong(ByteBuffer payload)
        {
            pongs.incrementAndGet();
            session.demand();
        }

        @Override
        public void onWebSocketClose(int statusCode, String reason)
        {
            closed.complete(statusCode + ":" + reason);
        }
    }

    private static Browser open(String path, String... headers) throws Exception
    {
        Browser browser = new Browser();
        ClientUpgradeRequest request = new ClientUpgradeRequest();
        request.setHeader("Origin", "http://127.0.0.1:" + gateway.port());
        for (int i = 0; i < headers.length; i += 2)
        {
            if (headers[i].equals("Sec-WebSocket-Protocol"))
                request.setSubProtocols(headers[i + 1].split(","));
            else
                request.setHeader(headers[i], headers[i + 1]);
        }
        client.connect(browser, gateway.wsUri(path), request).get(5, TimeUnit.SECONDS);
        return browser;
    }

    @Test
    void textAndBinaryMessages_passBothWays() throws Exception
    {
        Browser browser = open("/vnc/1/websockify");
        await().atMost(Duration.ofSeconds(5)).until(() -> browser.texts.contains("hello from s1"));

        browser.session.sendText("ping-me", Callback.NOOP);
        byte[] payload = new byte[100_000];
        for (int i = 0; i < payload.length; i++)
            payload[i] = (byte)i;
        browser.session.sendBinary(ByteBuffer.wrap(payload), Callback.NOOP);

        await().atMost(Duration.ofSeconds(5)).until(() -> browser.texts.contains("echo:ping-me") && !browser.binaries.isEmpty()
            || browser.closed.isDone());
        assertTrue(!browser.closed.isDone(), () -> "closed: " + browser.closed.getNow(""));
        assertArrayEquals(payload, browser.binaries.get(0));
        assertEquals("/websockify", sandbox.lastPath.get());
        browser.session.close();
    }

    @Test
    void anUpgrade_isCountedAndLogged_onceItsExchangeEnds() throws Exception
    {
        // The upgrade waits for the sandbox leg in an asynchronous cycle of its own and dispatches
        // back: the access log and the request counter must still see how it ended.
        try (LogCapture accessLog = LogCapture.accessLog())
        {
            Browser browser = open("/vnc/1/logged");
            browser.session.close();
            await().atMost(Duration.ofSeconds(5)).until(() -> accessLog.lines().stream()
                .anyMatch(line -> line.contains(" /vnc/1/logged 101 ") && line.contains("sandbox=1")));
        }
        assertTrue(gateway.sandgate().metrics().get("sandgate.requests").tags("face", "ingress", "status", "101").counter().count() >= 1);
    }

    @Test
    void fragmentedMessage_arrivesWhole() throws Exception
    {
        Browser browser = open("/vnc/1/frag");
        sandbox.binaries.clear();
        browser.session.sendPartialBinary(ByteBuffer.wrap(new byte[]{1, 2, 3}), false, Callback.NOOP);
        browser.session.sendPartialBinary(ByteBuffer.wrap(new byte[]{4, 5}), false, Callback.NOOP);
        browser.session.sendPartialBinary(ByteBuffer.wrap(new byte[]{6}), true, Callback.NOOP);

        await().atMost(Duration.ofSeconds(5)).until(() -> !sandbox.binaries.isEmpty());
        assertArrayEquals(new byte[]{1, 2, 3, 4, 5, 6}, sandbox.binaries.get(0));
        browser.session.close();
    }

    @Test
    void subprotocol_offeredByTheBrowser_isTheOneTheSandboxPicked() throws Exception
    {
        Browser browser = open("/vnc/1/websockify", "Sec-WebSocket-Protocol", "base64,binary");
        assertEquals("binary", browser.session.getUpgradeResponse().getAcceptedSubProtocol());
        browser.session.close();
    }

    @Test
    void closeCodesAndReasons_passBothWays() throws Exception
    {
        Browser fromSandbox = open("/vnc/1/c1");
        fromSandbox.session.sendText("close:4002:sandbox says bye", Callback.NOOP);
        assertEquals("4002:sandbox says bye", fromSandbox.closed.get(5, TimeUnit.SECONDS));

        Browser fromBrowser = open("/vnc/1/c2");
        await().atMost(Duration.ofSeconds(5)).until(() -> fromBrowser.texts.contains("hello from s1"));
        fromBrowser.session.close(4001, "browser says bye", Callback.NOOP);
        await().atMost(Duration.ofSeconds(5)).until(() -> "4001:browser says bye".equals(sandbox.lastClose.get()));
    }

    @Test
    void sandboxDyingMidSession_givesTheBrowserARealCloseFrameWithinASecond() throws Exception
    {
        Browser browser = open("/vnc/1/die");
        await().atMost(Duration.ofSeconds(5)).until(() -> browser.texts.contains("hello from s1"));
        long start = System.nanoTime();
        browser.session.sendText("die", Callback.NOOP);

        String close = browser.closed.get(1, TimeUnit.SECONDS);
        assertEquals("1011:sandbox connection lost", close, "not a silent 1006");
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(1));
    }

    @Test
    void crossOriginUpgrade_isRefused403() throws Exception
    {
        ExecutionException x = assertThrows(ExecutionException.class, () -> client.connect(new Browser(),
            URI.create("ws://127.0.0.1:" + gateway.port() + "/vnc/1/websockify"), origin("http://evil.example")).get(5, TimeUnit.SECONDS));
        UpgradeException upgrade = assertInstanceOf(UpgradeException.class, x.getCause());
        assertEquals(403, upgrade.getResponseStatusCode());
    }

    private static ClientUpgradeRequest origin(String origin)
    {
        ClientUpgradeRequest request = new ClientUpgradeRequest();
        request.setHeader("Origin", origin);
        return request;
    }

    @Test
    void idlessUpgrade_usesTheSessionCookie_andAForgedOneIsRefused() throws Exception
    {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<String> page = http.send(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/2/")).build(), HttpResponse.BodyHandlers.ofString());
        String setCookie = page.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("vnc_session_id=")).findFirst().orElseThrow();
        String cookie = setCookie.substring(0, setCookie.indexOf(';'));

        // noVNC 1.3: the WebSocket goes to a fixed path without the id.
        Browser browser = open("/vnc/websockify", "Cookie", cookie + "; app=1");
        await().atMost(Duration.ofSeconds(5)).until(() -> browser.texts.contains("hello from s2"));
        assertEquals("app=1", other.lastCookie.get(), "the gateway's cookie stays at the gateway");
        browser.session.close();

        ClientUpgradeRequest forged = origin("http://127.0.0.1:" + gateway.port());
        forged.setHeader("Cookie", "vnc_session_id=" + cookie.substring(cookie.indexOf('=') + 1).replaceFirst(".$", "A").replaceFirst("A$", "B"));
        ExecutionException x = assertThrows(ExecutionException.class, () -> client.connect(new Browser(),
            URI.create("ws://127.0.0.1:" + gateway.port() + "/vnc/websockify"), forged).get(5, TimeUnit.SECONDS));
        assertEquals(403, assertInstanceOf(UpgradeException.class, x.getCause()).getResponseStatusCode());
    }

    @Test
    void unreachableSandbox_is502() throws Exception
    {
        ExecutionException x = assertThrows(ExecutionException.class, () -> client.connect(new Browser(),
            URI.create("ws://127.0.0.1:" + gateway.port() + "/vnc/3/websockify"), origin("http://127.0.0.1:" + gateway.port())).get(10, TimeUnit.SECONDS));
        assertEquals(502, assertInstanceOf(UpgradeException.class, x.getCause()).getResponseStatusCode());
    }

    @Test
    void slowBrowser_slowsTheSandbox_soTheGatewayBuffersABoundedAmount() throws Exception
    {
        Browser browser = open("/vnc/1/flood");
        await().atMost(Duration.ofSeconds(5)).until(() -> browser.texts.contains("hello from s1"));
        browser.reading = false;
        long before = sandbox.flooded.get();
        browser.session.sendText("flood", Callback.NOOP);

        // With the browser not reading, the sandbox must soon be unable to send more: what it
        // managed to send is bounded by socket buffers and one message in the gateway.
        AtomicLong last = new AtomicLong(-1);
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(500)).until(() ->
        {
            long now = sandbox.flooded.get();
            return now > before && now == last.getAndSet(now);
        });
        long stalledAt = sandbox.flooded.get() - before;
        assertTrue(stalledAt < 32L * 1024 * 1024, "sandbox could push " + stalledAt + " bytes into a non-reading browser");

        browser.resume();
        await().atMost(Duration.ofSeconds(10)).until(() -> sandbox.flooded.get() - before > stalledAt + 8L * 1024 * 1024);
        browser.session.close();
    }

    @Test
    void bothLegsArePinged_andMetricsCountSessionsAndBytes() throws Exception
    {
        int pingsBefore = sandbox.pings.get();
        Browser browser = open("/vnc/1/keepalive");
        await().atMost(Duration.ofSeconds(5)).until(() -> browser.pings.get() >= 2 && sandbox.pings.get() >= pingsBefore + 2);

        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        String metrics = http.send(HttpRequest.newBuilder(gateway.uri().resolve("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        Matcher sessions = Pattern.compile("sandgate_ingress_websocket_sessions (\\d+)").matcher(metrics);
        assertTrue(sessions.find() && Double.parseDouble(sessions.group(1)) >= 1, metrics);
        assertTrue(metrics.contains("sandgate_ingress_websocket_bytes_total{direction=\"to_browser\"}"), metrics);
        browser.session.close();
        await().atMost(Duration.ofSeconds(5)).until(() -> http.send(HttpRequest.newBuilder(gateway.uri().resolve("/metrics")).build(),
            HttpResponse.BodyHandlers.ofString()).body().contains("sandgate_ingress_websocket_closes_total{by=\"browser\",code=\"1000\"}"));
    }
}
