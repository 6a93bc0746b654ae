package io.sandgate.ingress.websocket;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The WebSocket tunnel's own duties, beyond carrying bytes (which {@link WebSocketBridgeIT} covers):
 * extensions negotiated end to end, the size limit on a fragmented message, a sandbox that dies
 * without a close frame, the gateway's pings and their pongs, back-pressure towards a sandbox that
 * stops reading, and sandboxes that answer the handshake wrongly.
 */
class WebSocketTunnelIT
{
    private static final int MAX_MESSAGE = 4096;
    @AutoClose
    private static WebSocketBackend sandbox;
    @AutoClose
    private static SandboxBackend plainHttp;
    @AutoClose
    private static RawSandbox resetting;
    @AutoClose
    private static RawSandbox wrongAccept;
    @AutoClose("stop")
    private static WebSocketClient client;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.cookie.secret", "tunnel-it-secret-0123456789abcdef")
        .set("ingress.static-routes", Map.of("1", sandbox.hostPort(), "2", plainHttp.hostPort(), "3", resetting.hostPort(), "4", wrongAccept.hostPort()))
        .set("ingress.websocket.max-message-size", Integer.toString(MAX_MESSAGE))
        .set("ingress.websocket.ping-interval", "200ms"));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox = WebSocketBackend.start("s1");
        plainHttp = SandboxBackend.start("plain");
        resetting = RawSandbox.start(true);
        wrongAccept = RawSandbox.start(false);
        client = new WebSocketClient();
        client.setMaxTextMessageSize(1024 * 1024);
        client.start();
    }

    private static WebSocketBridgeIT.Browser open(String path, ClientUpgradeRequest request) throws Exception
    {
        WebSocketBridgeIT.Browser browser = new WebSocketBridgeIT.Browser();
        request.setHeader("Origin", "http://127.0.0.1:" + gateway.port());
        client.connect(browser, gateway.wsUri(path), request).get(5, TimeUnit.SECONDS);
        return browser;
    }

    private static double counted(String meter, String direction)
    {
        return gateway.sandgate().metrics().get(meter).tag("direction", direction).counter().count();
    }

    @Test
    void permessageDeflate_isNegotiatedByTheEndpoints_andCompressedFramesPass() throws Exception
    {
        ClientUpgradeRequest request = new ClientUpgradeRequest();
        request.addExtensions("permessage-deflate");
        WebSocketBridgeIT.Browser browser = open("/vnc/1/deflate", request);
        await().atMost(Duration.ofSeconds(5)).until(() -> browser.texts.contains("hello from s1"));
        assertTrue(sandbox.lastExtensions.get().contains("permessage-deflate"), "the browser's offer reaches the sandbox: " + sandbox.lastExtensions.get());
        String accepted = browser.session.getUpgradeResponse().getHeader("Sec-WebSocket-Extensions");
        assertTrue(accepted != null && accepted.contains("permessage-deflate"), "the sandbox's answer reaches the browser: " + accepted);

        double wireBefore = counted("sandgate.ingress.websocket.bytes", "to_sandbox");
        double messagesBefore = counted("sandgate.ingress.websocket.messages", "to_sandbox");
        String text = "a".repeat(64 * 1024);
        browser.session.sendText(text, Callback.NOOP);

        await().atMost(Duration.ofSeconds(5)).until(() -> browser.texts.contains("echo:" + text) || browser.closed.isDone());
        assertFalse(browser.closed.isDone(), () -> "closed: " + browser.closed.getNow(""));
        double wire = counted("sandgate.ingress.websocket.bytes", "to_sandbox") - wireBefore;
        // 64 KiB of one letter, deflated: the gateway carried the compressed frame as it was, so the
        // message (16 times the size limit) passed, measured as the few bytes it is on the wire.
        assertTrue(wire > 0 && wire < MAX_MESSAGE, "payload bytes on the wire: " + wire);
        assertEquals(1, counted("sandgate.ingress.websocket.messages", "to_sandbox") - messagesBefore);
        browser.session.close();
    }

    @Test
    void aFragmentedMessageOverTheLimit_closesBothSidesWith1009_beforeTheFragmentThatBreaksIt() throws Exception
    {
        WebSocketBridgeIT.Browser browser = open("/vnc/1/fragments", new ClientUpgradeRequest());
        await().atMost(Duration.ofSeconds(5)).until(() -> browser.texts.contains("hello from s1"));
        sandbox.binaries.clear();
        byte[] fragment = new byte[MAX_MESSAGE * 3 / 4];
        browser.session.sendPartialBinary(ByteBuffer.wrap(fragment), false, Callback.NOOP);
        browser.session.sendPartialBinary(ByteBuffer.wrap(fragment), true, Callback.NOOP);

        assertEquals("1009:message too big", browser.closed.get(5, TimeUnit.SECONDS));
        await().atMost(Duration.ofSeconds(5)).until(() -> "1009:message too big".equals(sandbox.lastClose.get()));
        assertTrue(sandbox.binaries.isEmpty(), "the message never reached the sandbox whole");
        await().atMost(Duration.ofSeconds(5)).until(() -> gateway.sandgate().metrics().find("sandgate.ingress.websocket.closes")
            .tags("by", "gateway", "code", "1009").counter() != null);
    }

    @Test
    void aSandboxWhoseConnectionIsReset_givesTheBrowserA1011Close() throws Exception
    {
        WebSocketBridgeIT.Browser browser = open("/vnc/3/reset", new ClientUpgradeRequest());
        await().atMost(Duration.ofSeconds(5)).until(() -> browser.texts.contains("hello from raw"));

        assertEquals("1011:sandbox connection lost", browser.closed.get(5, TimeUnit.SECONDS), "not a silent 1006");
    }

    @Test
    void theGatewaysPings_areAnsweredByBothSides_andTheirPongsStayInTheGateway() throws Exception
    {
        int sandboxPings = sandbox.pings.get();
        int sandboxPongs = sandbox.pongs.get();
        WebSocketBridgeIT.Browser browser = open("/vnc/1/idle", new ClientUpgradeRequest());

        // Neither side sends anything: every frame is the gateway's ping or a pong answering it.
        await().atMost(Duration.ofSeconds(5)).until(() -> browser.pings.get() >= 3 && sandbox.pings.get() >= sandboxPings + 3);
        assertEquals(0, browser.pongs.get(), "the sandbox's pongs answered the gateway, not the browser");
        assertEquals(sandboxPongs, sandbox.pongs.get(), "the browser's pongs answered the gateway, not the sandbox");
        assertFalse(browser.closed.isDone());
        browser.session.close();
    }

    @Test
    void aSandboxThatStopsReading_stopsTheBrowser_soTheGatewayBuffersABoundedAmount() throws Exception
    {
        WebSocketBridgeIT.Browser browser = open("/vnc/1/stall", new ClientUpgradeRequest());
        byte[] chunk = new byte[MAX_MESSAGE];
        long sent = 0;
        // Until a send stays unfinished for a second: the browser's socket is full because the
        // gateway stopped reading it, because the sandbox's socket is full.
        while (true)
        {
            Callback.Completable written = new Callback.Completable();
            browser.session.sendBinary(ByteBuffer.wrap(chunk), written);
            try
            {
                written.get(1, TimeUnit.SECONDS);
            }
            catch (TimeoutException x)
            {
                break;
            }
            sent += chunk.length;
            assertTrue(sent < 64L * 1024 * 1024, "the browser could push " + sent + " bytes towards a sandbox that reads nothing");
        }
        assertTrue(sent > 0);
        assertFalse(browser.closed.isDone(), "a stalled sandbox is slow, not gone");
        browser.session.disconnect();
    }

    @Test
    void aSandboxThatAnswersTheUpgradeWithAPage_refusedIt() throws Exception
    {
        RawHttp.Response response = RawHttp.upgrade(gateway.port(), "127.0.0.1", "/vnc/2/websockify");

        assertEquals(502, response.status(), response.body());
        assertTrue(response.body().contains("upstream_refused"), response.body());
    }

    @Test
    void aSandboxWhose101DoesNotAnswerTheBrowsersKey_refusedIt() throws Exception
    {
        RawHttp.Response response = RawHttp.upgrade(gateway.port(), "127.0.0.1", "/vnc/4/websockify");

        assertEquals(502, response.status(), response.body());
        assertTrue(response.body().contains("upstream_refused"), response.body());
    }

    /**
     * A WebSocket server in a few lines, for what a real one never does: it answers every handshake
     * with 101 and a text frame, then resets the connection (a pod killed mid-session); or it answers
     * with an accept value that is not the one for the client's key.
     */
    private static final class RawSandbox implements AutoCloseable
    {
        private final ServerSocket server;
        private final boolean answerRight;

        private RawSandbox(boolean answerRight) throws IOException
        {
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            this.answerRight = answerRight;
            Thread acceptor = new Thread(this::serve, "raw-sandbox");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        static RawSandbox start(boolean answerRight) throws IOException
        {
            return new RawSandbox(answerRight);
        }

        String hostPort()
        {
            return "127.0.0.1:" + server.getLocalPort();
        }

        private void serve()
        {
            while (!server.isClosed())
            {
                try (Socket socket = server.accept())
                {
                    Matcher key = Pattern.compile("(?i)Sec-WebSocket-Key: *(\\S+)").matcher(readHead(socket.getInputStream()));
                    String accept = key.find() ? SandboxHandshake.accept(key.group(1)) : "";
                    OutputStream out = socket.getOutputStream();
                    out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "
                        + (answerRight ? accept : "AAAA" + accept.substring(4)) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    byte[] hello = "hello from raw".getBytes(StandardCharsets.US_ASCII);
                    out.write(new byte[] {(byte)0x81, (byte)hello.length});
                    out.write(hello);
                    out.flush();
                    Thread.sleep(300);
                    // Closing with linger 0 sends a reset: no close frame, no orderly end.
                    socket.setSoLinger(true, 0);
                }
                catch (IOException x)
                {
                    return;
                }
                catch (InterruptedException x)
                {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }

        private static String readHead(InputStream in) throws IOException
        {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n"))
            {
                int b = in.read();
                if (b < 0)
                    break;
                head.write(b);
            }
            return head.toString(StandardCharsets.ISO_8859_1);
        }

        @Override
        public void close() throws IOException
        {
            server.close();
        }
    }
}
