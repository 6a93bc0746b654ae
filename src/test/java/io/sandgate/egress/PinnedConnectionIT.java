package io.sandgate.egress;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLHandshakeException;

import io.sandgate.net.Cidr;
import io.sandgate.net.Resolver;
import io.sandgate.net.SsrfGuard;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.TargetServer;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.HttpProxy;
import org.eclipse.jetty.client.HttpResponseException;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.Scheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests for a checked target go through an egress node (a forward proxy) to the checked address,
 * never to a name the node would resolve again, while TLS and Host still carry the name. The
 * client is set up as {@link Egress} sets up its per-node clients.
 */
class PinnedConnectionIT
{
    private static final String PUBLIC = "93.184.216.34";

    private TargetServer target;
    private ForwardProxy node;
    private PinnedHttpClient client;

    @BeforeEach
    void start() throws Exception
    {
        target = TargetServer.start();
        node = ForwardProxy.start("node-a");
        client = client(new PinnedSslContextFactory());
        client.start();
    }

    @AfterEach
    void stop() throws Exception
    {
        if (client != null)
            client.stop();
        Fixtures.closeInOrder(node, target);
    }

    private PinnedHttpClient client(SslContextFactory.Client tls)
    {
        return client(tls, new NodeConnector());
    }

    private PinnedHttpClient client(SslContextFactory.Client tls, ClientConnector connector)
    {
        tls.setTrustStorePath(target.trustStore().toString());
        tls.setTrustStorePassword(target.trustStorePassword());
        tls.setTrustStoreType(target.trustStoreType());
        connector.setSslContextFactory(tls);
        connector.setSelectors(1);
        PinnedHttpClient pinned = new PinnedHttpClient(new HttpClientTransportOverHTTP(connector));
        pinned.getProxyConfiguration().addProxy(new PinnedHttpProxy("127.0.0.1", node.port()));
        pinned.setFollowRedirects(false);
        return pinned;
    }

    private static InetAddress ip(String literal)
    {
        try
        {
            return InetAddress.getByName(literal);
        }
        catch (UnknownHostException x)
        {
            throw new AssertionError(x);
        }
    }

    /** The names answer loopback; loopback is allow-listed, as an internal test network would be. */
    private static SsrfGuard loopbackGuard(String... names)
    {
        Map<String, List<InetAddress>> table = new java.util.HashMap<>();
        for (String name : names)
            table.put(name, List.of(ip("127.0.0.1")));
        Resolver resolver = host ->
        {
            List<InetAddress> answer = table.get(host);
            if (answer == null)
                throw new UnknownHostException(host);
            return answer;
        };
        return new SsrfGuard(List.of(Cidr.parse("127.0.0.0/8")), resolver);
    }

    private static Throwable rootCause(Throwable failure)
    {
        Throwable t = failure;
        while (t.getCause() != null && t.getCause() != t)
            t = t.getCause();
        return t;
    }

    private static boolean causedBy(Throwable failure, Class<? extends Throwable> type)
    {
        for (Throwable t = failure; t != null; t = t.getCause())
        {
            if (type.isInstance(t))
                return true;
        }
        return false;
    }

    /**
     * https is tunnelled to the checked address, and Host and TLS name the target; plain http goes
     * in absolute form to the checked address, with the Host that RFC 9112 demands of it (the
     * URI's authority). Either way the node never sees a name it could resolve again.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"https", "http"})
    void nodeIsAskedForTheCheckedAddress(String scheme) throws Exception
    {
        int port = scheme.equals("https") ? target.httpsPort() : target.httpPort();
        String address = "127.0.0.1:" + port;
        PinnedTarget pinned = PinnedTarget.check(loopbackGuard("localhost"), scheme, "localhost", port);

        ContentResponse response = client.newRequest(pinned, "/echo?x=1").timeout(10, TimeUnit.SECONDS).send();

        assertEquals(200, response.getStatus(), response.getContentAsString());
        ForwardProxy.Received asked = scheme.equals("https") ? new ForwardProxy.Received("CONNECT", address, address)
            : new ForwardProxy.Received("GET", "http://" + address + "/echo?x=1", address);
        assertEquals(List.of(asked), node.received());
        TargetServer.Recorded seen = target.requests().get(0);
        assertEquals(scheme, seen.scheme());
        assertEquals("/echo?x=1", seen.pathAndQuery());
        assertEquals(scheme.equals("https") ? "localhost:" + port : address, seen.header("Host"));
    }

    /**
     * Under load a connection released on one thread may take a queued request before the thread
     * that queued it has run the queued listeners. Host was once set there, and about one request
     * in a thousand reached the target with two Host headers (a 400): it must never happen.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"https", "http"})
    void concurrentRequestsOnPooledConnections_eachCarryOneHost(String scheme) throws Exception
    {
        int port = scheme.equals("https") ? target.httpsPort() : target.httpPort();
        PinnedTarget pinned = PinnedTarget.check(loopbackGuard("localhost"), scheme, "localhost", port);
        int requests = 4000;
        Semaphore inFlight = new Semaphore(16);
        CountDownLatch done = new CountDownLatch(requests);
        AtomicInteger failed = new AtomicInteger();
        for (int i = 0; i < requests; i++)
        {
            inFlight.acquire();
            client.newRequest(pinned, "/echo?i=" + i).timeout(20, TimeUnit.SECONDS).send(result ->
            {
                if (result.isFailed() || result.getResponse().getStatus() != 200)
                    failed.incrementAndGet();
                inFlight.release();
                done.countDown();
            });
        }
        assertTrue(done.await(60, TimeUnit.SECONDS));
        assertEquals(0, failed.get(), "requests not answered 200 out of " + requests);
    }

    @Test
    void https_nameNotOnTheCertificate_failsVerification_althoughTheAddressIsOnIt() throws Exception
    {
        // The certificate names 127.0.0.1 and localhost. Verifying against the address would pass;
        // verifying against the name must not.
        PinnedTarget pinned = PinnedTarget.check(loopbackGuard("other.test"), "https", "other.test", target.httpsPort());

        ExecutionException failure = assertThrows(ExecutionException.class,
            () -> client.newRequest(pinned, "/echo").timeout(10, TimeUnit.SECONDS).send());

        assertTrue(causedBy(failure, SSLHandshakeException.class), () -> "expected a TLS verification failure, got " + rootCause(failure));
        assertEquals("CONNECT", node.received().get(0).method());
        assertEquals("127.0.0.1:" + target.httpsPort(), node.received().get(0).target());
        assertEquals(0, target.requestCount());
    }

    @Test
    void https_addressLiteralAsTheName_verifiesAgainstTheAddress() throws Exception
    {
        PinnedTarget pinned = PinnedTarget.check(loopbackGuard(), "https", "127.0.0.1", target.httpsPort());

        ContentResponse response = client.newRequest(pinned, "/echo").timeout(10, TimeUnit.SECONDS).send();

        assertEquals(200, response.getStatus());
        assertEquals("127.0.0.1:" + target.httpsPort(), target.requests().get(0).header("Host"));
    }

    @Test
    void requestOnAFreshTunnel_waitsForTheConnectWriteToComplete() throws Exception
    {
        // Jetty starts the tunnelled exchange (here the TLS handshake) from the thread that read
        // the node's 200; here the thread that wrote the CONNECT is always still inside that write
        // then. Before the NodeConnector, this failed with WritePendingException (one tunnelled
        // plain-http request in ten or twenty on loopback without the pause).
        PinnedHttpClient slow = client(new PinnedSslContextFactory(), new SlowConnectWriter());
        slow.start();
        try
        {
            PinnedTarget pinned = PinnedTarget.check(loopbackGuard("localhost"), "https", "localhost", target.httpsPort());
            for (int i = 0; i < 5; i++)
            {
                // Connection: close, so that every request opens a tunnel of its own.
                ContentResponse response = slow.newRequest(pinned, "/echo")
                    .headers(headers -> headers.put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString()))
                    .timeout(10, TimeUnit.SECONDS).send();
                assertEquals(200, response.getStatus(), response.getContentAsString());
            }
            assertEquals(5, node.connects());
            assertEquals(5, target.requestCount());
        }
        finally
        {
            slow.stop();
        }
    }

    /** Returns from the write of a CONNECT only well after its bytes have reached the node. */
    private static final class SlowConnectWriter extends NodeConnector
    {
        @Override
        protected SerialWriteEndPoint newEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler)
        {
            return new SerialWriteEndPoint(channel, selector, key, scheduler, () -> { })
            {
                @Override
                public boolean flush(ByteBuffer... buffers) throws IOException
                {
                    boolean connect = buffers.length > 0 && StandardCharsets.ISO_8859_1.decode(buffers[0].duplicate()).toString().startsWith("CONNECT ");
                    boolean flushed = super.flush(buffers);
                    if (connect && flushed)
                        pause();
                    return flushed;
                }
            };
        }

        private static void pause()
        {
            try
            {
                // Long enough for the node to answer and the 200 to be read meanwhile.
                Thread.sleep(100);
            }
            catch (InterruptedException x)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void http_absoluteFormWithAHostOtherThanItsAuthority_isRejectedByTheNode() throws Exception
    {
        // Why plain http carries the address as Host: a node takes the host from the absolute URI
        // (RFC 9112 3.2.2), and Jetty's refuses a Host header that says otherwise.
        HttpClient plain = new HttpClient();
        plain.getProxyConfiguration().addProxy(new HttpProxy("127.0.0.1", node.port()));
        plain.start();
        try
        {
            ContentResponse response = plain.newRequest(target.httpUrl("/echo"))
                .headers(headers -> headers.put("Host", "localhost:" + target.httpPort()))
                .timeout(10, TimeUnit.SECONDS).send();
            assertEquals(400, response.getStatus());
            assertEquals(0, target.requestCount());
        }
        finally
        {
            plain.stop();
        }
    }

    @Test
    void hostHeaderSetByTheCaller_isReplacedByThePinnedName() throws Exception
    {
        // A proxy servlet copies the agent's headers; whatever Host they carried, the pinned name wins.
        PinnedTarget pinned = PinnedTarget.check(loopbackGuard("localhost"), "https", "localhost", target.httpsPort());

        ContentResponse response = client.newRequest(pinned, "/echo")
            .headers(headers -> headers.put("Host", "elsewhere.test"))
            .timeout(10, TimeUnit.SECONDS).send();

        assertEquals(200, response.getStatus());
        assertEquals("localhost:" + target.httpsPort(), target.requests().get(0).header("Host"));
    }

    @Test
    void rebindingName_nodeSeesOnlyTheCheckedPublicAddress_andLoopbackIsNeverContacted() throws Exception
    {
        AtomicInteger lookups = new AtomicInteger();
        Resolver rebinding = host -> List.of(ip(lookups.getAndIncrement() == 0 ? PUBLIC : "127.0.0.1"));
        SsrfGuard guard = new SsrfGuard(List.of(), rebinding);
        // The node answers for itself, so nothing leaves this machine; what matters is what it was asked.
        node.error5xx(502);

        PinnedTarget pinned = PinnedTarget.check(guard, "https", "rebind.test", target.httpsPort());
        for (int attempt = 0; attempt < 2; attempt++)
        {
            // A retry reuses the pinned target: the name is not resolved again, so it cannot rebind.
            ExecutionException failure = assertThrows(ExecutionException.class,
                () -> client.newRequest(pinned, "/echo").timeout(10, TimeUnit.SECONDS).send());
            assertInstanceOf(HttpResponseException.class, failure.getCause(), () -> String.valueOf(failure.getCause()));
        }

        // Had the name been resolved again, it would now be loopback, which the guard refuses.
        assertThrows(SsrfGuard.Refused.class, () -> PinnedTarget.check(guard, "https", "rebind.test", target.httpsPort()));

        ForwardProxy.Received checked = new ForwardProxy.Received("CONNECT", PUBLIC + ":" + target.httpsPort(), PUBLIC + ":" + target.httpsPort());
        assertEquals(List.of(checked, checked), node.received());
        assertEquals(0, target.requestCount(), "the loopback target must never be reached");
        assertEquals(2, lookups.get(), "one lookup per check; sending never resolves the name");
    }

    @Test
    void connectRequestHead_opensTheTunnelToTheCheckedAddress() throws Exception
    {
        // What EgressConnectHandler writes to the node for a CONNECT from an agent.
        PinnedTarget pinned = PinnedTarget.check(loopbackGuard("localhost"), "https", "localhost", target.httpsPort());
        try (Socket socket = new Socket("127.0.0.1", node.port()))
        {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(pinned.connectRequestHead());
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] head = new byte[12];
            int read = 0;
            while (read < head.length)
            {
                int n = in.read(head, read, head.length - read);
                if (n < 0)
                    break;
                read += n;
            }
            assertEquals("HTTP/1.1 200", new String(head, 0, read, StandardCharsets.ISO_8859_1));
        }
        assertEquals(List.of(new ForwardProxy.Received("CONNECT", "127.0.0.1:" + target.httpsPort(), "127.0.0.1:" + target.httpsPort())),
            node.received());
    }

    @Test
    void tagThatDoesNotMatchTheUri_isAbortedBeforeAnythingIsSent() throws Exception
    {
        PinnedTarget pinned = new PinnedTarget("https", "localhost", ip("127.0.0.2"), target.httpsPort());

        ExecutionException failure = assertThrows(ExecutionException.class,
            () -> client.newRequest(target.httpsUrl("/echo")).tag(pinned).timeout(10, TimeUnit.SECONDS).send());

        assertInstanceOf(IllegalStateException.class, rootCause(failure));
        assertEquals(List.of(), node.received());
    }

    @Test
    void clientWithAPlainSslContextFactory_refusesToStart() throws Exception
    {
        HttpClient plain = client(new SslContextFactory.Client());
        try
        {
            IllegalStateException x = assertThrows(IllegalStateException.class, plain::start);
            assertTrue(x.getMessage().contains("PinnedSslContextFactory"), x.getMessage());
        }
        finally
        {
            plain.stop();
        }
    }

    @Test
    void pinnedTarget_formatsIpv6AndDefaultPorts() throws Exception
    {
        PinnedTarget v6 = new PinnedTarget("HTTPS", "[2606:2800:220:1::1]", ip("2606:2800:220:1::1"), 443);
        assertEquals("2606:2800:220:1::1", v6.name());
        assertEquals("[2606:2800:220:1:0:0:0:1]:443", v6.authority());
        assertEquals("[2606:2800:220:1::1]", v6.hostHeader());
        assertEquals("https://[2606:2800:220:1:0:0:0:1]:443/a?b=c", v6.uri("/a?b=c").toString());
        assertTrue(v6.isAddressOf("[2606:2800:220:1::1]", 443));

        PinnedTarget http = PinnedTarget.check(new SsrfGuard(List.of(), host -> List.of(ip(PUBLIC))), "http", "Example.COM", -1);
        assertEquals(80, http.port());
        assertEquals("example.com", http.hostHeader());
        assertEquals("CONNECT " + PUBLIC + ":80 HTTP/1.1\r\nHost: " + PUBLIC + ":80\r\n\r\n",
            new String(http.connectRequestHead(), StandardCharsets.ISO_8859_1));
        assertThrows(IllegalArgumentException.class, () -> new PinnedTarget("ftp", "a", ip(PUBLIC), 21));
        assertThrows(IllegalArgumentException.class, () -> new PinnedTarget("http", "a", ip(PUBLIC), 0));
    }
}
