package io.sandgate.ingress.embedded;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.sandgate.testing.BrowserRequests;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.ScriptedSandbox;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.sandgate.testing.BrowserRequests.get;
import static io.sandgate.testing.BrowserRequests.post;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The core front-end's own connections to sandboxes ({@link SandboxLink}, {@link SandboxLinks}),
 * against a sandbox on a raw socket that answers byte for byte as each test scripts it: bodies both
 * ways, and the connection handling a pool must get right (a kept connection closed as it is taken,
 * {@code Connection: close}, a full pool). The answers a well-behaved server rarely gives are
 * {@code SandboxAnswersIT}'s, for both front-ends.
 */
class SandboxLinkIT
{
    private static final String SECRET = "it-secret-0123456789abcdef-0123456789";

    private static ScriptedSandbox sandbox;
    /** Its own sandbox, so that no other test's connections are in its pool. */
    private static ScriptedSandbox laned;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.cookie.secret", SECRET)
        .set("ingress.max-connections-per-sandbox", 2)
        .set("ingress.static-routes", Map.of("7", sandbox.hostPort(), "8", laned.hostPort())));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox = ScriptedSandbox.start((request, out) -> ScriptedSandbox.ok(out, "hello"));
        laned = ScriptedSandbox.start((request, out) -> ScriptedSandbox.ok(out, "hello"));
    }

    @AfterAll
    static void stop() throws Exception
    {
        sandbox.close();
        laned.close();
    }

    @BeforeEach
    void plainAnswers()
    {
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, "hello"));
    }

    @Test
    void bodyWithALength_arrivesWhole_andItsEchoComesBack() throws Exception
    {
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, "got " + request.body().length + " " + Arrays.hashCode(request.body())));
        byte[] body = new byte[300_000];
        new Random(7).nextBytes(body);

        HttpResponse<String> response = post(gateway.uri(), "/vnc/7/upload", HttpRequest.BodyPublishers.ofByteArray(body));

        assertEquals(200, response.statusCode(), response.body());
        assertEquals("got 300000 " + Arrays.hashCode(body), response.body());
        ScriptedSandbox.Received received = last();
        assertEquals("300000", received.header("Content-Length"));
        assertNull(received.header("Transfer-Encoding"));
    }

    @Test
    void bodyOfUnknownLength_goesOnChunked_andArrivesWhole() throws Exception
    {
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, "got " + request.body().length + " " + Arrays.hashCode(request.body())));
        byte[] body = new byte[100_000];
        new Random(11).nextBytes(body);

        // A stream publisher has no length: the JDK client sends it chunked.
        HttpResponse<String> response = post(gateway.uri(), "/vnc/7/upload", HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)));

        assertEquals(200, response.statusCode(), response.body());
        assertEquals("got 100000 " + Arrays.hashCode(body), response.body());
        ScriptedSandbox.Received received = last();
        assertEquals("chunked", received.header("Transfer-Encoding"));
        assertNull(received.header("Content-Length"));
    }



    /**
     * A body sent in many small pieces, each in its own packet, on one connection: each piece goes
     * on as it comes, and the selector's reports of pieces the gateway has already read are not taken
     * for the browser having gone (the race itself is {@code KeptReadEndPointTest}'s).
     */
    @Test
    void bodyArrivingPieceByPiece_isNotMistakenForTheBrowserLeaving() throws Exception
    {
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, "got " + request.body().length));
        byte[] piece = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
        int pieces = 400;
        try (Socket socket = new Socket())
        {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress("127.0.0.1", gateway.port()));
            socket.setSoTimeout(30_000);
            for (int round = 0; round < 10; round++)
            {
                var out = socket.getOutputStream();
                out.write("POST /vnc/7/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                for (int i = 0; i < pieces; i++)
                {
                    out.write(("20\r\n" + new String(piece, StandardCharsets.US_ASCII) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
                out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                RawHttp.Response answer = RawHttp.read(socket.getInputStream());
                assertEquals(200, answer.status(), "round " + round + ": " + answer.body());
                assertEquals("got " + pieces * piece.length, answer.body());
            }
        }
    }

    @Test
    void connectionClose_isHonoured_evenWhenTheSandboxKeepsTheSocketOpen() throws Exception
    {
        // Read on: a gateway that kept the connection would send its next request here and wait for ever.
        sandbox.script((request, out) -> ScriptedSandbox.raw(out, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\none"));
        assertEquals("one", get(gateway.uri(), "/vnc/7/a").body());
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, "two on " + request.connection()));

        HttpResponse<String> second = get(gateway.uri(), "/vnc/7/b");

        assertEquals(200, second.statusCode());
        assertTrue(sandbox.received().stream().filter(r -> r.requestLine().startsWith("GET /b ")).allMatch(r -> r.number() == 1),
            "the second request came on a new connection");
    }

    @Test
    void headAnswer_withALength_endsWithoutABody_andTheConnectionCarriesTheNext() throws Exception
    {
        sandbox.script((request, out) ->
        {
            if (request.requestLine().startsWith("HEAD"))
                return ScriptedSandbox.raw(out, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
            return ScriptedSandbox.ok(out, "after head on " + request.connection() + " #" + request.number());
        });
        HttpResponse<Void> head = BrowserRequests.CLIENT.send(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/7/big"))
            .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding());
        assertEquals(200, head.statusCode());
        assertEquals("1000", head.headers().firstValue("Content-Length").orElse(null));

        String next = get(gateway.uri(), "/vnc/7/x").body();

        assertTrue(next.startsWith("after head on ") && !next.endsWith("#1"), "the HEAD's connection carried the next request: " + next);
    }

    @Test
    void fullPool_requestsWaitForAConnection_andAllAreAnswered() throws Exception
    {
        CountDownLatch release = new CountDownLatch(1);
        sandbox.script((request, out) ->
        {
            hold(release);
            return ScriptedSandbox.ok(out, request.requestLine());
        });
        int connectionsBefore = sandbox.connections();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 12; i++)
            calls.add(BrowserRequests.CLIENT.sendAsync(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/7/q" + i)).build(),
                HttpResponse.BodyHandlers.ofString()));
        // The metrics see the full pool: its 2 connections busy, the other 10 requests waiting.
        await().atMost(Duration.ofSeconds(5)).until(() -> links("busy") == 2 && links("waiting") == 10);
        release.countDown();

        for (int i = 0; i < calls.size(); i++)
        {
            HttpResponse<String> response = calls.get(i).get(20, TimeUnit.SECONDS);
            assertEquals(200, response.statusCode());
            assertEquals("GET /q" + i + " HTTP/1.1", response.body());
        }
        assertTrue(sandbox.connections() - connectionsBefore <= 2, "at most the pool's 2 connections were opened: " + (sandbox.connections() - connectionsBefore));
        await().atMost(Duration.ofSeconds(5)).until(() -> links("busy") == 0 && links("waiting") == 0 && links("idle") == 2);
    }

    /**
     * A sandbox connection is opened on the selector of the browser connection that asked for it
     * ({@link IngressConnector}), and kept for that selector's requests: a browser connection takes
     * back the sandbox connection opened for it, not the one returned to the pool last, which is on
     * the other selector. Two browser connections opened one after the other are on different
     * selectors (accepted in turn), of which the gateway has one per core.
     */
    @Test
    void aBrowserConnection_takesBackTheSandboxConnectionOpenedOnItsSelector_notTheOneReturnedLast() throws Exception
    {
        assumeTrue(Runtime.getRuntime().availableProcessors() >= 2, "one selector: every connection is on it");
        CountDownLatch bothArrived = new CountDownLatch(2);
        CountDownLatch firstAnswered = new CountDownLatch(1);
        laned.script((request, out) ->
        {
            String path = request.requestLine().split(" ")[1];
            if (path.equals("/first") || path.equals("/second"))
            {
                // Both requests held at once: each takes a connection of its own.
                bothArrived.countDown();
                hold(bothArrived);
            }
            if (path.equals("/second"))
                hold(firstAnswered);
            return ScriptedSandbox.ok(out, "sandbox connection " + request.connection());
        });
        double idle = links("idle");
        try (ScriptedSandbox closedAfter = laned; RawHttp.Kept a = new RawHttp.Kept(gateway.port(), "gateway"); RawHttp.Kept b = new RawHttp.Kept(gateway.port(), "gateway"))
        {
            CompletableFuture<String> viaA = CompletableFuture.supplyAsync(() -> body(a, "/vnc/8/first"));
            CompletableFuture<String> viaB = CompletableFuture.supplyAsync(() -> body(b, "/vnc/8/second"));
            String first = viaA.get(10, TimeUnit.SECONDS);
            // The first sandbox connection is back in the pool before the second answers, which is so returned last.
            await().atMost(Duration.ofSeconds(5)).until(() -> links("idle") == idle + 1);
            firstAnswered.countDown();
            String second = viaB.get(10, TimeUnit.SECONDS);
            assertNotEquals(first, second);

            assertEquals(first, body(a, "/vnc/8/first-again"));
            assertEquals(second, body(b, "/vnc/8/second-again"));
            assertEquals(first, body(a, "/vnc/8/first-once-more"));
            assertEquals(2, laned.connections());
        }
        // The sandbox closed: its connections leave the pool, whose counts the other tests read.
        await().atMost(Duration.ofSeconds(5)).until(() -> links("idle") == idle);
    }

    /**
     * Answers longer than a browser's socket can take at once go to it in pieces, each handed over
     * to the browser's write callback, which parses on: four browsers at once with small receive
     * windows, each answer distinct and longer than the kernel's send buffer (so that writes wait),
     * each arriving whole and in order.
     */
    @Test
    void longAnswers_toBrowsersThatCannotTakeThemAtOnce_arriveWhole_fourAtATime() throws Exception
    {
        sandbox.script((request, out) ->
        {
            byte[] body = blob(Integer.parseInt(request.requestLine().split(" ")[1].substring("/blob/".length())));
            out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            return true;
        });
        List<CompletableFuture<byte[]>> browsers = new ArrayList<>();
        for (int i = 0; i < 4; i++)
        {
            int seed = i;
            browsers.add(CompletableFuture.supplyAsync(() -> download("/vnc/7/blob/" + seed)));
        }
        for (int i = 0; i < browsers.size(); i++)
            assertArrayEquals(blob(i), browsers.get(i).get(60, TimeUnit.SECONDS), "answer " + i);
    }

    /** Eight megabytes of its own for each seed. */
    private static byte[] blob(int seed)
    {
        byte[] bytes = new byte[8 * 1024 * 1024];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    /** A GET on a connection whose receive window is small, so that the gateway's writes wait; the answer's body. */
    private static byte[] download(String path)
    {
        try (Socket socket = new Socket())
        {
            socket.setReceiveBufferSize(4096);
            socket.connect(new InetSocketAddress("127.0.0.1", gateway.port()));
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            StringBuilder head = new StringBuilder();
            while (!head.toString().endsWith("\r\n\r\n"))
            {
                int b = in.read();
                if (b < 0)
                    throw new IOException("closed within the head: " + head);
                head.append((char)b);
            }
            assertTrue(head.toString().startsWith("HTTP/1.1 200 "), head.toString());
            String length = head.toString().lines().filter(line -> line.regionMatches(true, 0, "Content-Length:", 0, 15)).findFirst().orElseThrow();
            byte[] body = new byte[Integer.parseInt(length.substring(15).trim())];
            int read = 0;
            // Small reads, as a browser busy with other work takes them.
            while (read < body.length)
            {
                int n = in.read(body, read, Math.min(1024, body.length - read));
                if (n < 0)
                    throw new IOException("closed after " + read + " of " + body.length + " bytes");
                read += n;
            }
            return body;
        }
        catch (IOException x)
        {
            throw new UncheckedIOException(x);
        }
    }

    /** In a sandbox's script: waits until the test lets it answer. */
    private static void hold(CountDownLatch latch) throws IOException
    {
        try
        {
            if (!latch.await(10, TimeUnit.SECONDS))
                throw new IOException("the test did not go on");
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException();
        }
    }

    private static String body(RawHttp.Kept connection, String path)
    {
        try
        {
            return connection.get(path).body();
        }
        catch (IOException x)
        {
            throw new UncheckedIOException(x);
        }
    }

    private static double links(String state)
    {
        return gateway.sandgate().metrics().get("sandgate.ingress.sandbox.connections").tag("state", state).gauge().value();
    }

    private static ScriptedSandbox.Received last()
    {
        List<ScriptedSandbox.Received> received = sandbox.received();
        return received.get(received.size() - 1);
    }

}
