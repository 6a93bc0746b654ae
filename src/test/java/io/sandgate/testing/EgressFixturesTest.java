package io.sandgate.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.HttpProxy;
import org.eclipse.jetty.client.HttpResponseException;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.ThrowingConsumer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Proves the egress fixtures behave as their javadoc says, with Jetty's HttpClient configured the
 * way the gateway's egress client will be: an {@link HttpProxy} per egress node and an
 * SslContextFactory trusting the target's test certificate.
 */
class EgressFixturesTest
{
    private static TargetServer target;
    private static Tinyproxy tinyproxy;

    private ForwardProxy proxy;
    private HttpClient client;

    @BeforeAll
    static void startSharedServers()
    {
        // Shared: the target is stateless apart from its request log (cleared per test), and a
        // process start per test would only cost time.
        target = TargetServer.start();
        tinyproxy = Tinyproxy.start("tiny1", target.httpsPort());
    }

    @AfterAll
    static void stopSharedServers() throws Exception
    {
        Fixtures.closeInOrder(tinyproxy, target);
    }

    @BeforeEach
    void setUp() throws Exception
    {
        target.clearRequests();
        proxy = ForwardProxy.start("egress-a");
        client = clientThrough(proxy.port());
    }

    @AfterEach
    void tearDown() throws Exception
    {
        client.stop();
        proxy.close();
    }

    private HttpClient clientThrough(int proxyPort) throws Exception
    {
        HttpClient c = new HttpClient();
        c.setSslContextFactory(target.newClientSslContextFactory());
        c.getProxyConfiguration().addProxy(new HttpProxy("127.0.0.1", proxyPort));
        // Short enough that a refused or hung proxy fails a test quickly.
        c.setConnectTimeout(2_000);
        c.start();
        return c;
    }

    /** Runs {@code use} with a client of its own through {@code proxyPort}, stopped after. */
    private void withClientThrough(int proxyPort, ThrowingConsumer<HttpClient> use) throws Throwable
    {
        HttpClient c = clientThrough(proxyPort);
        try
        {
            use.accept(c);
        }
        finally
        {
            c.stop();
        }
    }

    private ContentResponse get(HttpClient c, String url) throws Exception
    {
        return c.newRequest(url).timeout(5, TimeUnit.SECONDS).send();
    }

    /** Each of {@code expected} is a whole line of the target's echo. */
    private static void assertHasLines(ContentResponse response, String... expected)
    {
        List<String> lines = response.getContentAsString().lines().toList();
        for (String line : expected)
            assertTrue(lines.contains(line), lines::toString);
    }

    // --- ForwardProxy, normal forwarding ---------------------------------------------------------

    @Test
    void forwardProxyCarriesPlainHttpInAbsoluteFormAndAddsVia() throws Exception
    {
        ContentResponse response = get(client, target.httpUrl("/echo?x=1"));

        assertEquals(200, response.getStatus());
        assertHasLines(response, "scheme=http", "path=/echo?x=1", "via=1.1 egress-a");
        TargetServer.Recorded recorded = target.requests().get(0);
        assertEquals("1.1 egress-a", recorded.header("Via"));
        assertEquals(1, recorded.headers().get("User-Agent").size(), "the client's User-Agent, no second one");
        assertEquals(1, proxy.requests());
        assertEquals(0, proxy.connects());
    }

    @Test
    void forwardProxyTunnelsHttpsWithConnect() throws Exception
    {
        ContentResponse response = get(client, target.httpsUrl("/echo"));

        assertEquals(200, response.getStatus());
        // A proxy cannot touch requests inside a TLS tunnel: no Via.
        assertHasLines(response, "scheme=https", "via=");
        assertEquals(1, proxy.requests());
        assertEquals(1, proxy.connects());
        assertEquals("https", target.requests().get(0).scheme());
    }

    @Test
    void streamEventsArriveOneByOneThroughTheProxy() throws Exception
    {
        // 5 events 300 ms apart take 1.2 s to produce; seeing the first one well before that proves
        // neither the proxy nor the target buffers the stream.
        InputStreamResponseListener listener = new InputStreamResponseListener();
        long start = System.nanoTime();
        client.newRequest(target.httpUrl("/stream?events=5&intervalMs=300")).send(listener);
        Response response = listener.get(5, TimeUnit.SECONDS);
        assertEquals(200, response.getStatus());
        assertTrue(response.getHeaders().get("Content-Type").startsWith("text/event-stream"));
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(listener.getInputStream(), StandardCharsets.UTF_8)))
        {
            assertEquals("id: 1", reader.readLine());
            assertEquals("data: event-1", reader.readLine());
            long firstEventMillis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(firstEventMillis < 900, "first event after " + firstEventMillis + " ms");
            long events = 1 + reader.lines().filter(l -> l.startsWith("data: ")).count();
            assertEquals(5, events);
        }
    }

    @Test
    void targetServesStatusAndBigBodies() throws Exception
    {
        ContentResponse teapot = get(client, target.httpsUrl("/status/418"));
        assertEquals(418, teapot.getStatus());
        assertEquals("https", teapot.getHeaders().get("X-Target"));

        ContentResponse big = get(client, target.httpUrl("/big?bytes=100000"));
        assertEquals(200, big.getStatus());
        assertEquals(100_000, big.getContent().length);
        assertEquals('9', (char) big.getContent()[99_999]);
    }

    // --- ForwardProxy, faults ---------------------------------------------------------------------

    @Test
    void refuseClosesThePortAndOkReopensTheSamePort() throws Throwable
    {
        assertEquals(200, get(client, target.httpUrl("/echo")).getStatus());
        int port = proxy.port();

        proxy.refuse();

        assertThrows(ConnectException.class, () -> rawConnect(port));
        // A fresh client: the first one may still hold the keep-alive connection the proxy just
        // closed, which would fail with "closed" rather than with a refusal.
        withClientThrough(port, fresh ->
        {
            ExecutionException failure = assertThrows(ExecutionException.class,
                    () -> get(fresh, target.httpUrl("/echo")));
            assertInstanceOf(ConnectException.class, failure.getCause(), failure::toString);
        });

        proxy.ok();

        assertEquals(port, proxy.port());
        assertEquals(200, get(client, target.httpUrl("/echo")).getStatus());
        assertEquals(200, get(client, target.httpsUrl("/echo")).getStatus());
    }

    @Test
    void hangAcceptsButNeverAnswers() throws Exception
    {
        proxy.hang();

        // The blocking send() reports its own timeout directly, not wrapped in ExecutionException.
        assertThrows(TimeoutException.class,
                () -> client.newRequest(target.httpUrl("/echo")).timeout(500, TimeUnit.MILLISECONDS).send());
        assertThrows(TimeoutException.class,
                () -> client.newRequest(target.httpsUrl("/echo")).timeout(500, TimeUnit.MILLISECONDS).send());

        // The client gave up on its own clock; the proxy reads each request well before that,
        // but nothing orders the two, so the counters are awaited rather than asserted.
        await().atMost(Duration.ofSeconds(2)).until(() -> proxy.requests() == 2 && proxy.connects() == 1);
        assertEquals(0, target.requestCount());
    }

    @Test
    void delayAddsAtLeastTheBaseDelay() throws Exception
    {
        get(client, target.httpUrl("/echo")); // warm up the connection and both JIT paths

        proxy.delay(Duration.ofMillis(400), Duration.ofMillis(100));

        long start = System.nanoTime();
        assertEquals(200, get(client, target.httpUrl("/echo")).getStatus());
        long plainMillis = (System.nanoTime() - start) / 1_000_000;
        start = System.nanoTime();
        assertEquals(200, get(client, target.httpsUrl("/echo")).getStatus());
        long tunnelMillis = (System.nanoTime() - start) / 1_000_000;

        assertTrue(plainMillis >= 400, "absolute-form took " + plainMillis + " ms");
        assertTrue(tunnelMillis >= 400, "CONNECT took " + tunnelMillis + " ms");
        assertTrue(plainMillis < 3_000 && tunnelMillis < 3_000, plainMillis + " / " + tunnelMillis + " ms");
    }

    @Test
    void dropMidResponseCutsAfterTheHeadersOnPlainHttp() throws Exception
    {
        proxy.dropMidResponse(1_000);

        InputStreamResponseListener listener = new InputStreamResponseListener();
        client.newRequest(target.httpUrl("/big?bytes=100000")).send(listener);
        Response response = listener.get(5, TimeUnit.SECONDS);

        assertEquals(200, response.getStatus(), "headers got through");
        long read = readUntilFailure(listener.getInputStream());
        assertEquals(1_000, read, "exactly the allowed body bytes got through");
        assertEquals(1, target.requestCount());

        // A body shorter than the budget still fails: its end is never sent.
        proxy.dropMidResponse();
        InputStreamResponseListener small = new InputStreamResponseListener();
        client.newRequest(target.httpUrl("/echo")).send(small);
        assertEquals(200, small.get(5, TimeUnit.SECONDS).getStatus());
        readUntilFailure(small.getInputStream());
    }

    @Test
    void dropMidResponseCutsATunnelAfterTheHeaders() throws Exception
    {
        proxy.dropMidResponse();

        InputStreamResponseListener listener = new InputStreamResponseListener();
        client.newRequest(target.httpsUrl("/big?bytes=500000")).send(listener);
        Response response = listener.get(5, TimeUnit.SECONDS);

        assertEquals(200, response.getStatus(), "headers got through the tunnel");
        long read = readUntilFailure(listener.getInputStream());
        assertTrue(read > 0 && read < 500_000, "read " + read + " body bytes before the cut");
        assertEquals(1, proxy.connects());
    }

    @Test
    void error5xxAnswersWithoutReachingTheTarget() throws Exception
    {
        proxy.error5xx(503);

        ContentResponse plain = get(client, target.httpUrl("/echo"));
        assertEquals(503, plain.getStatus());
        assertEquals("1", plain.getHeaders().get(ForwardProxy.ERROR_HEADER));

        // For CONNECT, Jetty's client fails the request and attaches the proxy's answer.
        ExecutionException tunnel = assertThrows(ExecutionException.class,
                () -> get(client, target.httpsUrl("/echo")));
        HttpResponseException refused = assertInstanceOf(HttpResponseException.class, tunnel.getCause(),
                tunnel::toString);
        assertEquals(503, refused.getResponse().getStatus());
        assertEquals("1", refused.getResponse().getHeaders().get(ForwardProxy.ERROR_HEADER));

        assertEquals(0, target.requestCount());
        assertEquals(2, proxy.requests());
        assertEquals(1, proxy.connects());

        proxy.ok();
        assertEquals(200, get(client, target.httpsUrl("/echo")).getStatus());
    }

    // --- Tinyproxy ------------------------------------------------------------------------------

    @Test
    void tinyproxyCarriesPlainHttpAndAddsVia() throws Throwable
    {
        withClientThrough(tinyproxy.port(), viaTiny ->
        {
            ContentResponse response = get(viaTiny, target.httpUrl("/echo"));
            assertEquals(200, response.getStatus(), tinyproxy::log);
            TargetServer.Recorded recorded = target.requests().get(0);
            String via = recorded.header("Via");
            assertNotNull(via);
            assertTrue(via.startsWith("1.1 tiny1 (tinyproxy/"), via);
            // tinyproxy opens one upstream connection per request: HTTP/1.1 with Connection: close.
            assertEquals("close", recorded.header("Connection"));
            assertTrue(response.getHeaders().get("Via").startsWith("1.1 tiny1"), "it tags responses too");
        });
    }

    @Test
    void tinyproxyTunnelsHttpsOnlyToListedConnectPorts() throws Throwable
    {
        withClientThrough(tinyproxy.port(), viaTiny ->
        {
            ContentResponse response = get(viaTiny, target.httpsUrl("/echo"));
            assertEquals(200, response.getStatus(), tinyproxy::log);
            assertHasLines(response, "scheme=https");

            // The plain port is not a ConnectPort, so tinyproxy refuses to open a tunnel to it.
            ExecutionException refused = assertThrows(ExecutionException.class,
                    () -> get(viaTiny, "https://127.0.0.1:" + target.httpPort() + "/echo"));
            HttpResponseException answer = assertInstanceOf(HttpResponseException.class, refused.getCause(),
                    refused::toString);
            assertEquals(403, answer.getResponse().getStatus());
        });
    }

    /** The soak benchmark crashes a node this way; both programs must come back on their address. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"squid", "tinyproxy"})
    void aKilledNodeRefusesConnectionsAndARestartedOneTunnelsOnTheSamePort(String kind) throws Throwable
    {
        try (ProxyProcess node = kind.equals("squid") ? Squid.start(kind, target.httpsPort()) : Tinyproxy.start(kind, target.httpsPort()))
        {
            int port = node.port();
            node.kill();
            assertThrows(ConnectException.class, () -> rawConnect(port));

            node.restart();

            assertEquals(port, node.port());
            withClientThrough(port, viaNode -> assertEquals(200, get(viaNode, target.httpsUrl("/echo")).getStatus(), node::diagnostics));
        }
    }

    private static void rawConnect(int port) throws IOException
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 1_000);
        }
    }

    /** Reads until the stream fails, returning how many bytes came first; fails if it ends cleanly. */
    private static long readUntilFailure(InputStream in)
    {
        byte[] buffer = new byte[8192];
        long[] total = {0};
        assertThrows(IOException.class, () ->
        {
            try (in)
            {
                for (int n; (n = in.read(buffer)) != -1; )
                {
                    total[0] += n;
                }
            }
        }, () -> "the response ended cleanly after " + total[0] + " bytes");
        return total[0];
    }
}
