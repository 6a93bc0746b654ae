package io.sandgate.ingress.embedded;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Keep-alive connections of the embedded runner's listeners stay in their selector's epoll set while
 * their answer is awaited ({@link KeptReadEndPoint}), read from the kernel's own account of that set
 * ({@code /proc/self/fdinfo} of the selector's epoll descriptor), on a real Jetty server with one
 * selector and real sockets. A peer that sends while no one reads is let go of until Jetty reads
 * again, and everything it sent is answered, in order.
 */
class KeptReadEndPointTest
{
    /** Exchanges whose answer the test gives. */
    private final BlockingQueue<Held> held = new LinkedBlockingQueue<>();
    private final List<Socket> sockets = new ArrayList<>();
    private Server server;
    /** The connection of the last {@code /held/watched} exchange, which counts {@link #gone} down if its peer goes. */
    private volatile ProbedEndPoint watched;
    /** The connection of the last exchange. */
    private volatile ProbedEndPoint last;
    private final CountDownLatch gone = new CountDownLatch(1);
    private int port;

    private record Held(String path, Response response, Callback callback)
    {
        void answer(String body)
        {
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length());
            Content.Sink.write(response, true, body, callback);
        }
    }

    @BeforeAll
    static void linux()
    {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/fdinfo")), "needs Linux's /proc");
    }

    @BeforeEach
    void start() throws Exception
    {
        server = new Server();
        ListenerConnector connector = TestListeners.oneSelector(server, ProbedEndPoint::new);
        server.setHandler(new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                Held exchange = new Held(Request.getPathInContext(request), response, callback);
                last = (ProbedEndPoint)request.getConnectionMetaData().getConnection().getEndPoint();
                if (exchange.path().startsWith("/held/watched"))
                {
                    watched = (ProbedEndPoint)request.getConnectionMetaData().getConnection().getEndPoint();
                    watched.onPeerGone(gone::countDown);
                }
                if (exchange.path().startsWith("/held"))
                    held.add(exchange);
                else
                    exchange.answer("now");
                return true;
            }
        });
        server.start();
        port = connector.getLocalPort();
    }

    @AfterEach
    void stop() throws Exception
    {
        for (Socket socket : sockets)
            socket.close();
        server.stop();
    }

    @Test
    void aConnectionAwaitingItsAnswer_staysInTheEpollSet_andIsServedAgain() throws Exception
    {
        Client browser = connect();
        browser.send("/held");
        Held exchange = next();
        // Another exchange through the one selector: it has selected since the request was read,
        // and a select is where the JDK takes a channel without interest out of its epoll set.
        assertEquals("now", connect().exchange("/now"));

        assertTrue(registered(browser), "the connection awaiting its answer left the epoll set");

        exchange.answer("held");
        assertEquals("held", browser.answer());
        assertEquals("now", browser.exchange("/now"));
        assertTrue(registered(browser));
    }

    @Test
    void aPeerSendingWhileItsAnswerIsAwaited_isLetGo_untilJettyReadsAgain_andAllOfItIsAnswered() throws Exception
    {
        Client browser = connect();
        browser.send("/held/1");
        Held first = next();
        // A pipelined request: readable while no one reads. Kept registered, a level-triggered
        // selector would report these bytes on every select until the answer is written.
        browser.send("/held/2");
        await().atMost(10, TimeUnit.SECONDS).until(() -> !registered(browser));

        first.answer("first");
        assertEquals("first", browser.answer());
        Held second = next();
        assertEquals("/held/2", second.path());
        second.answer("second");
        assertEquals("second", browser.answer());
        // Jetty asked to read again: the read interest is kept again.
        assertEquals("now", browser.exchange("/now"));
        assertEquals("now", connect().exchange("/now"));
        assertTrue(registered(browser));
    }

    @Test
    void aPeerClosingItsSideWhileItsAnswerIsAwaited_stillGetsTheAnswer_andTheConnectionCloses() throws Exception
    {
        Client browser = connect();
        browser.send("/held");
        Held exchange = next();
        browser.socket.shutdownOutput();
        await().atMost(10, TimeUnit.SECONDS).until(() -> !registered(browser));

        exchange.answer("held");
        assertEquals("held", browser.answer());
        assertEquals(-1, browser.in.read());
    }

    @Test
    void bytesReadBetweenTheSelectAndTheCheck_areNotTakenForThePeerGone() throws Exception
    {
        Client browser = connect();
        browser.send("/held/watched");
        next();
        // As a thread reading a body does: the bytes the selector reported are read before it looks.
        watched.readBeforeCheck = true;
        browser.socket.getOutputStream().write('x');
        await().atMost(10, TimeUnit.SECONDS).until(() -> watched.checks.get() == 1);
        // Once found empty, the socket is asked again: more bytes are seen, and the peer is still there.
        browser.socket.getOutputStream().write('y');
        await().atMost(10, TimeUnit.SECONDS).alias("the socket was listened to again").until(() -> watched.checks.get() == 2);

        assertEquals(1, gone.getCount(), "bytes read since the select were taken for the peer gone");
        assertEquals(1, watched.taken.get());
    }

    @Test
    void aPeerThatGoesWhileWatched_isFoundGone_onTheSecondReport() throws Exception
    {
        Client browser = connect();
        browser.send("/held/watched");
        Held exchange = next();
        browser.socket.shutdownOutput();

        assertTrue(gone.await(10, TimeUnit.SECONDS), "the peer's going was not seen");
        assertEquals(2, watched.checks.get());
        exchange.answer("held");
        assertEquals("held", browser.answer());
    }

    @Test
    void aPeerWatchedAfterItsBytesWereReportedAndReadDirectly_isStillFoundGone() throws Exception
    {
        Client browser = connect();
        browser.send("/held/body");
        Held exchange = next();
        ProbedEndPoint endPoint = last;
        // A piece of body arriving while no one reads: reported, the kept interest let go...
        browser.socket.getOutputStream().write('x');
        await().atMost(10, TimeUnit.SECONDS).until(() -> !registered(browser));
        // ...then read directly, as the gateway reads a body, with no wish to read that would put it back.
        assertEquals(1, endPoint.getChannel().read(ByteBuffer.allocate(8)));

        endPoint.onPeerGone(gone::countDown);
        browser.socket.shutdownOutput();

        assertTrue(gone.await(10, TimeUnit.SECONDS), "the peer's going was never reported");
        exchange.answer("held");
        assertEquals("held", browser.answer());
    }

    /** An endpoint whose test may read what its socket holds just before the next check of its peer. */
    private static final class ProbedEndPoint extends KeptReadEndPoint
    {
        final AtomicInteger checks = new AtomicInteger();
        final AtomicInteger taken = new AtomicInteger();
        volatile boolean readBeforeCheck;

        ProbedEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler)
        {
            super(channel, selector, key, scheduler);
        }

        @Override
        boolean peerClosed()
        {
            if (readBeforeCheck)
            {
                readBeforeCheck = false;
                try
                {
                    taken.addAndGet(getChannel().read(ByteBuffer.allocate(64)));
                }
                catch (IOException x)
                {
                    throw new UncheckedIOException(x);
                }
            }
            checks.incrementAndGet();
            return super.peerClosed();
        }
    }

    private Held next() throws InterruptedException
    {
        Held exchange = held.poll(10, TimeUnit.SECONDS);
        assertNotNull(exchange, "no request reached the handler");
        return exchange;
    }

    private Client connect() throws IOException
    {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setSoTimeout(10_000);
        sockets.add(socket);
        return new Client(socket, new BufferedInputStream(socket.getInputStream()));
    }

    private record Client(Socket socket, InputStream in)
    {
        void send(String path) throws IOException
        {
            socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        }

        String exchange(String path) throws IOException
        {
            send(path);
            return answer();
        }

        /** The body of the next answer, which must be a 200 with a Content-Length. */
        String answer() throws IOException
        {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n"))
            {
                int b = in.read();
                if (b < 0)
                    throw new IOException("closed after " + head);
                head.write(b);
            }
            String text = head.toString(StandardCharsets.US_ASCII);
            assertTrue(text.startsWith("HTTP/1.1 200 "), text);
            int length = text.lines().filter(line -> line.toLowerCase(Locale.ROOT).startsWith("content-length:"))
                .map(line -> Integer.parseInt(line.substring(line.indexOf(':') + 1).trim())).findFirst().orElseThrow();
            return new String(in.readNBytes(length), StandardCharsets.US_ASCII);
        }
    }

    /**
     * Whether the server's end of {@code client}'s connection is in an epoll set of this process:
     * its socket's inode from /proc/self/net/tcp*, the descriptor with that inode, and the target
     * descriptors ({@code tfd}) the kernel lists for each epoll descriptor.
     */
    private boolean registered(Client client) throws IOException
    {
        String socket = "socket:[" + inode(port, client.socket.getLocalPort()) + "]";
        Integer descriptor = null;
        List<Integer> epolls = new ArrayList<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd")))
        {
            for (Path fd : (Iterable<Path>)fds::iterator)
            {
                String target;
                try
                {
                    target = Files.readSymbolicLink(fd).toString();
                }
                catch (IOException x)
                {
                    continue; // closed meanwhile
                }
                if (target.equals(socket))
                    descriptor = Integer.valueOf(fd.getFileName().toString());
                else if (target.equals("anon_inode:[eventpoll]"))
                    epolls.add(Integer.valueOf(fd.getFileName().toString()));
            }
        }
        assertNotNull(descriptor, "no descriptor for " + socket);
        for (int epoll : epolls)
        {
            for (String line : Files.readAllLines(Path.of("/proc/self/fdinfo/" + epoll)))
            {
                String[] fields = line.trim().split("\\s+");
                if (fields.length > 1 && fields[0].equals("tfd:") && Integer.parseInt(fields[1]) == descriptor)
                    return true;
            }
        }
        return false;
    }

    /** The inode of the socket whose local port is {@code local} and remote port {@code remote}. */
    private static String inode(int local, int remote) throws IOException
    {
        for (String table : List.of("/proc/self/net/tcp", "/proc/self/net/tcp6"))
        {
            for (String line : Files.readAllLines(Path.of(table)))
            {
                String[] fields = line.trim().split("\\s+");
                if (fields.length > 9 && fields[1].contains(":") && port(fields[1]) == local && port(fields[2]) == remote)
                    return fields[9];
            }
        }
        throw new AssertionError("no socket from port " + local + " to " + remote);
    }

    private static int port(String address)
    {
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1), 16);
    }
}
