package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import io.sandgate.testing.RawHttp;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.Scheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A client's connection on a real Jetty server and real sockets: where it is between requests
 * ({@link RequestPhase}), and that once resumed after an answer given asynchronously it reads
 * nothing until the selector reports the next request.
 */
class ClientEndPointTest
{
    private Server server;
    private volatile CountingEndPoint last;
    /** The endpoint's socket reads when the last request reached the handler. */
    private volatile int readsAtHandle;
    private volatile RequestPhase phaseInHandler;
    private int port;

    @BeforeEach
    void start() throws Exception
    {
        // The pool tells the endpoint a connection is resumed, as the embedded runner's does.
        server = new Server(new QueuedThreadPool()
        {
            @Override
            public void execute(Runnable job)
            {
                ClientEndPoint.resuming(job);
                super.execute(job);
            }
        });
        ListenerConnector connector = TestListeners.oneSelector(server, CountingEndPoint::new);
        server.setHandler(new ClientEndPoint.Exchanges(new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                CountingEndPoint endPoint = (CountingEndPoint)request.getConnectionMetaData().getConnection().getEndPoint();
                last = endPoint;
                readsAtHandle = endPoint.socketReads.get();
                phaseInHandler = endPoint.phase();
                // Answered from another thread, as the ingress handler answers when the sandbox does:
                // Jetty then resumes the connection through the pool.
                CompletableFuture.runAsync(() ->
                {
                    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, 2);
                    Content.Sink.write(response, true, "ok", callback);
                });
                return true;
            }
        }));
        server.start();
        port = connector.getLocalPort();
    }

    @AfterEach
    void stop() throws Exception
    {
        server.stop();
    }

    @Test
    void aConnectionResumedAfterAnAsyncAnswer_readsNothingUntilItsNextRequest() throws Exception
    {
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.setSoTimeout(5000);
            InputStream in = socket.getInputStream();
            send(socket, "/first");
            assertEquals(200, RawHttp.read(in).status());
            CountingEndPoint endPoint = last;
            // Resumed and waiting on the selector for the next request.
            await().atMost(Duration.ofSeconds(5)).until(endPoint::isFillInterested);
            assertEquals(readsAtHandle, endPoint.socketReads.get(), "the resumed connection read its socket before asking the selector");
            assertEquals(RequestPhase.BUSY, phaseInHandler, "a request being served is busy");
            assertEquals(RequestPhase.AWAITING, endPoint.phase(), "between requests it awaits the next");

            // The next request is read when it comes, and answered.
            send(socket, "/second");
            assertEquals(200, RawHttp.read(in).status());
        }
    }

    @Test
    void aHeadArriving_isInItsHeadPhase_untilWhole() throws Exception
    {
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.setSoTimeout(5000);
            send(socket, "/first");
            assertEquals(200, RawHttp.read(socket.getInputStream()).status());
            CountingEndPoint endPoint = last;
            await().atMost(Duration.ofSeconds(5)).until(() -> endPoint.phase() == RequestPhase.AWAITING);

            socket.getOutputStream().write("GET /sec".getBytes(StandardCharsets.ISO_8859_1));
            await().atMost(Duration.ofSeconds(5)).until(() -> endPoint.phase() == RequestPhase.HEAD);
            await().atMost(Duration.ofSeconds(5)).until(() -> endPoint.headNanos(System.nanoTime()) > 0);

            socket.getOutputStream().write("ond HTTP/1.1\r\nHost: sandgate\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            assertEquals(200, RawHttp.read(socket.getInputStream()).status());
            assertEquals(-1, endPoint.headNanos(System.nanoTime()), "no head arrives once it is whole");
        }
    }

    private static void send(Socket socket, String path) throws IOException
    {
        socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: sandgate\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
    }

    /** Counts the reads that reach the socket. */
    private static final class CountingEndPoint extends KeptReadEndPoint
    {
        final AtomicInteger socketReads = new AtomicInteger();

        CountingEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler)
        {
            super(channel, selector, key, scheduler);
        }

        @Override
        int readSocket(ByteBuffer buffer) throws IOException
        {
            socketReads.incrementAndGet();
            return super.readSocket(buffer);
        }
    }
}
