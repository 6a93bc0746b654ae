package io.sandgate.ingress;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.config.ConfigKeys;
import io.sandgate.config.ServerConfig;
import io.sandgate.ingress.websocket.WebSocketBridgeIT;
import io.sandgate.launcher.EmbeddedServer;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.ScriptedSandbox;
import io.sandgate.testing.WebSocketBackend;
import org.awaitility.core.ConditionTimeoutException;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.sandgate.testing.BrowserRequests.get;
import static io.sandgate.testing.BrowserRequests.post;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every buffer the core front-end takes from the server's pool (its request heads towards
 * sandboxes, its reads of their answers, the browsers' connections) and every read buffer of the
 * WebSocket tunnels goes back, however the exchange or the tunnel ends. The pool is Jetty's tracking one; after exchanges that end well and badly the
 * server stops, closing every connection, and nothing may still be taken. A buffer never given
 * back is not an error Jetty reports: its pool forgets it once it is collected, and the gateway
 * allocates a new one each time, which only shows as garbage and lost pooling under load.
 */
class PooledBuffersIT
{
    private static final String BIG = "x".repeat(300_000);
    /** Made once: made per request, 20 MB took the sandbox past the exchange's 1 s idle timeout under load. */
    private static final String HUGE = "h".repeat(20_000_000);

    @Test
    void everyBufferTaken_isGivenBack_whateverBecameOfTheExchanges() throws Exception
    {
        ArrayByteBufferPool.Tracking pool = new ArrayByteBufferPool.Tracking();
        try (ScriptedSandbox sandbox = ScriptedSandbox.start(PooledBuffersIT::answer);
             ServerSocket early = earlyAnswers())
        {
            EmbeddedServer server = EmbeddedServer.start(gatewayConfig()
                .set("ingress.cookie.secret", "pooled-buffers-secret-0123456789abcdef")
                .set("ingress.static-routes", Map.of("7", sandbox.hostPort(), "8", "127.0.0.1:" + early.getLocalPort()))
                .set("ingress.idle-timeout", "1s")
                .build(), pool);
            try
            {
                URI uri = server.uri();
                for (int i = 0; i < 20; i++)
                    assertEquals(200, get(uri, "/vnc/7/ok").statusCode());
                assertEquals(BIG.length(), get(uri, "/vnc/7/big").body().length());
                assertEquals("got 200000", post(uri, "/vnc/7/echo", HttpRequest.BodyPublishers.ofString("b".repeat(200_000))).body());
                assertEquals(502, get(uri, "/vnc/7/garbage").statusCode());
                assertEquals(404, get(uri, "/vnc/9/ok").statusCode());
                // An answer cut short by the sandbox: the browser gets a broken answer, or none.
                assertTrue(RawHttp.get(server.port(), "127.0.0.1", "/vnc/7/cut").status() > 0);
                // Bytes past the end of an answer: the link closes with them unread.
                assertEquals("ok", get(uri, "/vnc/7/trailing").body());
                // A sandbox that stops in the middle of an answer's head, until the exchange times out.
                assertTrue(RawHttp.get(server.port(), "127.0.0.1", "/vnc/7/stall").status() > 0);
                // A browser that leaves in the middle of a long answer.
                try (Socket socket = new Socket("127.0.0.1", server.port()))
                {
                    // Bounded: on a loaded machine the sandbox may miss the exchange's idle timeout, and a
                    // short 504 on a kept-alive connection would hold the read until the server's idle end.
                    socket.setSoTimeout(5000);
                    socket.getOutputStream().write("GET /vnc/7/huge HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    socket.getInputStream().readNBytes(1000);
                }
                catch (SocketTimeoutException slow)
                {
                    // The browser leaves all the same.
                }
                // A sandbox that answers before the browser's body is through, and resets the connection.
                try
                {
                    post(uri, "/vnc/8/upload", HttpRequest.BodyPublishers.ofString("u".repeat(4_000_000)));
                }
                catch (IOException refused)
                {
                    // The browser may see the reset rather than the answer: either ends the exchange.
                }
                // A browser that leaves in the middle of its body.
                try (Socket socket = new Socket("127.0.0.1", server.port()))
                {
                    OutputStream out = socket.getOutputStream();
                    out.write(("POST /vnc/7/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n" + "c".repeat(5000))
                        .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
                // And the connections still serve.
                assertEquals(200, get(uri, "/vnc/7/ok").statusCode());
            }
            finally
            {
                server.close();
            }
        }
        assertNoLeaks(pool);
    }

    /**
     * A sandbox that answers while the browser's body is still coming ends the exchange while the
     * gateway may be reading that body for it; the server then reads the rest itself. Both reading
     * the connection at once lost a buffer in a few uploads per thousand (the connection's request
     * buffer taken twice, one of them never given back). A race, so many uploads, four at a time:
     * without the pump stopped first, this failed in about one run of three (a stricter test would
     * have to pause the server's read from inside it), with it in none of fifteen. The servlets
     * (the WAR's front-end, Jetty's proxy servlet) are run the same way.
     */
    @ParameterizedTest
    @EnumSource(ServerConfig.IngressFrontEnd.class)
    void anAnswerAheadOfTheBody_leavesNoBufferTaken(ServerConfig.IngressFrontEnd frontEnd) throws Exception
    {
        ArrayByteBufferPool.Tracking pool = new ArrayByteBufferPool.Tracking();
        ExecutorService browsers = Executors.newFixedThreadPool(4);
        try (ServerSocket sandbox = answersAheadOfTheBody())
        {
            EmbeddedServer server = EmbeddedServer.start(gatewayConfig()
                .set("ingress.cookie.secret", "pooled-buffers-secret-0123456789abcdef")
                .set("ingress.static-routes", Map.of("8", "127.0.0.1:" + sandbox.getLocalPort()))
                .set(ConfigKeys.SERVER_INGRESS_FRONT_END.name(), frontEnd.name().toLowerCase(Locale.ROOT))
                .build(), pool);
            try
            {
                String body = "u".repeat(1_000_000);
                List<Future<Integer>> answered = new ArrayList<>();
                for (int b = 0; b < 4; b++)
                    answered.add(browsers.submit(() ->
                    {
                        int ok = 0;
                        for (int i = 0; i < 150; i++)
                        {
                            try
                            {
                                if ("early".equals(post(server.uri(), "/vnc/8/upload", HttpRequest.BodyPublishers.ofString(body)).body()))
                                    ok++;
                            }
                            catch (IOException cut)
                            {
                                // The server closes a connection whose body it could not finish reading; the browser may see that first.
                            }
                        }
                        return ok;
                    }));
                int ok = 0;
                for (Future<Integer> browser : answered)
                    ok += browser.get(2, TimeUnit.MINUTES);
                assertTrue(ok > 0, "some uploads had the sandbox's early answer");
            }
            finally
            {
                server.close();
            }
        }
        finally
        {
            browsers.shutdownNow();
        }
        assertNoLeaks(pool);
    }

    @Test
    void everyBufferATunnelTakes_isGivenBack_howeverTheTunnelEnds() throws Exception
    {
        AtomicLong acquired = new AtomicLong();
        ArrayByteBufferPool.Tracking pool = new ArrayByteBufferPool.Tracking()
        {
            @Override
            public RetainableByteBuffer.Mutable acquire(int size, boolean direct)
            {
                acquired.incrementAndGet();
                return super.acquire(size, direct);
            }
        };
        WebSocketClient client = new WebSocketClient();
        client.start();
        try (WebSocketBackend sandbox = WebSocketBackend.start("s1"))
        {
            EmbeddedServer server = EmbeddedServer.start(gatewayConfig()
                .set("ingress.cookie.secret", "pooled-buffers-secret-0123456789abcdef")
                .set("ingress.static-routes", Map.of("1", sandbox.hostPort()))
                .set("ingress.websocket.max-message-size", "4096")
                .build(), pool);
            try
            {
                String origin = "http://127.0.0.1:" + server.port();
                URI uri = URI.create("ws://127.0.0.1:" + server.port() + "/vnc/1/ws");
                // The browser closes.
                WebSocketBridgeIT.Browser browser = tunnel(client, uri, origin);
                long before = acquired.get();
                browser.session.sendText("one", Callback.NOOP);
                await().atMost(Duration.ofSeconds(5)).until(() -> browser.texts.contains("echo:one"));
                assertTrue(acquired.get() > before, "the tunnel's reads come from the server's pool");
                browser.session.close(1000, "bye", Callback.NOOP);
                browser.closed.get(5, TimeUnit.SECONDS);
                // The sandbox closes.
                WebSocketBridgeIT.Browser closedBySandbox = tunnel(client, uri, origin);
                closedBySandbox.session.sendText("close:1000:done", Callback.NOOP);
                assertEquals("1000:done", closedBySandbox.closed.get(5, TimeUnit.SECONDS));
                // The sandbox dies without a close frame.
                WebSocketBridgeIT.Browser orphaned = tunnel(client, uri, origin);
                orphaned.session.sendText("die", Callback.NOOP);
                assertEquals("1011:sandbox connection lost", orphaned.closed.get(5, TimeUnit.SECONDS));
                // A message over the limit.
                WebSocketBridgeIT.Browser oversized = tunnel(client, uri, origin);
                oversized.session.sendText("x".repeat(10_000), Callback.NOOP);
                assertEquals("1009:message too big", oversized.closed.get(5, TimeUnit.SECONDS));
                // A browser that goes without a close frame, the sandbox's first message on its way.
                try (Socket socket = new Socket("127.0.0.1", server.port()))
                {
                    socket.getOutputStream().write(("GET /vnc/1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: " + origin + "\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                    assertTrue(new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII).endsWith("101"));
                }
                await().atMost(Duration.ofSeconds(5)).until(() -> server.sandgate().metrics().find("sandgate.ingress.websocket.sessions").gauge().value() == 0);
            }
            finally
            {
                server.close();
            }
        }
        finally
        {
            client.stop();
        }
        assertNoLeaks(pool);
    }

    private static WebSocketBridgeIT.Browser tunnel(WebSocketClient client, URI uri, String origin) throws Exception
    {
        WebSocketBridgeIT.Browser browser = new WebSocketBridgeIT.Browser();
        ClientUpgradeRequest request = new ClientUpgradeRequest();
        request.setHeader("Origin", origin);
        client.connect(browser, uri, request).get(5, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(5)).until(() -> browser.texts.contains("hello from s1"));
        return browser;
    }

    /** A sandbox that reads a request's head, answers 413 at once, and resets the connection. */
    private static ServerSocket earlyAnswers() throws IOException
    {
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() ->
        {
            while (!server.isClosed())
            {
                try (Socket socket = server.accept())
                {
                    InputStream in = socket.getInputStream();
                    for (int matched = 0; matched < 4; )
                    {
                        int b = in.read();
                        if (b < 0)
                            break;
                        matched = b == "\r\n\r\n".charAt(matched) ? matched + 1 : (b == '\r' ? 1 : 0);
                    }
                    socket.getOutputStream().write("HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                    socket.setSoLinger(true, 0);
                }
                catch (IOException x)
                {
                    // Closed by the test, or the gateway went first.
                }
            }
        }, "early-answers");
        acceptor.setDaemon(true);
        acceptor.start();
        return server;
    }

    /** A keep-alive sandbox that answers a request once 100 KB of its body are in, then reads the rest, as a server refusing an upload early may. */
    private static ServerSocket answersAheadOfTheBody() throws IOException
    {
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        ExecutorService connections = Executors.newCachedThreadPool(runnable ->
        {
            Thread thread = new Thread(runnable, "answers-ahead");
            thread.setDaemon(true);
            return thread;
        });
        connections.execute(() ->
        {
            while (!server.isClosed())
            {
                try
                {
                    Socket socket = server.accept();
                    connections.execute(() -> answerAhead(socket));
                }
                catch (IOException x)
                {
                    // Closed by the test.
                }
            }
        });
        return server;
    }

    private static void answerAhead(Socket socket)
    {
        try (socket)
        {
            InputStream in = socket.getInputStream();
            while (true)
            {
                StringBuilder head = new StringBuilder();
                for (int matched = 0; matched < 4; )
                {
                    int b = in.read();
                    if (b < 0)
                        return;
                    head.append((char)b);
                    matched = b == "\r\n\r\n".charAt(matched) ? matched + 1 : (b == '\r' ? 1 : 0);
                }
                Matcher length = Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
                long remaining = length.find() ? Long.parseLong(length.group(1)) : 0;
                long first = Math.min(remaining, 100_000);
                in.skipNBytes(first);
                socket.getOutputStream().write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nearly".getBytes(StandardCharsets.US_ASCII));
                in.skipNBytes(remaining - first);
            }
        }
        catch (IOException x)
        {
            // The gateway closed the connection: an exchange it could not finish.
        }
    }

    private static boolean answer(ScriptedSandbox.Received request, OutputStream out) throws IOException
    {
        String line = request.requestLine();
        if (line.contains(" /big "))
            return ScriptedSandbox.ok(out, BIG);
        if (line.contains(" /echo "))
            return ScriptedSandbox.ok(out, "got " + request.body().length);
        if (line.contains(" /garbage "))
        {
            ScriptedSandbox.raw(out, "NOT HTTP AT ALL\r\n\r\n");
            return false;
        }
        if (line.contains(" /trailing "))
            return ScriptedSandbox.raw(out, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokAND MORE");
        if (line.contains(" /huge "))
            return ScriptedSandbox.ok(out, HUGE);
        if (line.contains(" /stall "))
        {
            // Half a head, then silence past the exchange's idle timeout (1 s), as a wedged sandbox.
            ScriptedSandbox.raw(out, "HTTP/1.1 200 OK\r\nContent-Le");
            try
            {
                Thread.sleep(3000);
            }
            catch (InterruptedException x)
            {
                Thread.currentThread().interrupt();
            }
            return false;
        }
        if (line.contains(" /cut "))
        {
            ScriptedSandbox.raw(out, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nonly this");
            return false;
        }
        return ScriptedSandbox.ok(out, "ok");
    }

    /**
     * Stops as a deployed gateway does, waiting for its exchanges: these tests count the buffers of
     * exchanges that ended, and a test gateway's 1 s stop cuts some mid-way. (A connection handed
     * over to Jetty's and cut by the stop then can keep its request buffer: a leak at shutdown only.)
     */
    private static GatewayConfig gatewayConfig()
    {
        return new GatewayConfig().set("server.stop-timeout", "10s");
    }

    /**
     * A connection cut as the server stops gives its buffers back when its close completes, on a
     * selector's thread, which may be just after {@code stop()} returned: a buffer given back late
     * is none lost, one never given back stays in the pool's list.
     */
    private static void assertNoLeaks(ArrayByteBufferPool.Tracking pool)
    {
        try
        {
            await().atMost(Duration.ofSeconds(5)).until(() -> pool.getLeaks().isEmpty());
        }
        catch (ConditionTimeoutException leaked)
        {
            fail(pool.dumpLeaks());
        }
    }
}
