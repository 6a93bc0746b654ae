package io.sandgate.launcher;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.ByteArrayEndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.LocalConnector;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Invocable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When the pool runs a resumed connection on the thread that resumes it: only when the server's
 * handlers never block, and only connections; and when a resumed HTTP connection is not run at
 * all, only asked to wait for its next request.
 */
class ServerThreadsTest
{
    private final ServerThreads threads = new ServerThreads(8);
    private final Server server = new Server(threads);
    private final LocalConnector connector = new LocalConnector(server);

    @AfterEach
    void stop() throws Exception
    {
        server.stop();
    }

    @Test
    void aConnectionResumed_runsOnTheResumingThread_whenNoHandlerBlocks() throws Exception
    {
        start(Invocable.InvocationType.NON_BLOCKING);
        assertEquals(Thread.currentThread().getName(), threadThatRuns(new Resumed()));
    }

    @Test
    void aConnectionResumed_goesToThePool_whenAHandlerMayBlock() throws Exception
    {
        start(Invocable.InvocationType.BLOCKING);
        assertNotEquals(Thread.currentThread().getName(), threadThatRuns(new Resumed()));
    }

    @Test
    void otherJobs_goToThePool() throws Exception
    {
        start(Invocable.InvocationType.NON_BLOCKING);
        CompletableFuture<String> ran = new CompletableFuture<>();
        threads.execute(() -> ran.complete(Thread.currentThread().getName()));
        assertNotEquals(Thread.currentThread().getName(), ran.get(5, TimeUnit.SECONDS));
    }

    @Test
    void aResumedConnectionThatThrows_leavesTheResumingThreadStanding() throws Exception
    {
        start(Invocable.InvocationType.NON_BLOCKING);
        Resumed failing = new Resumed()
        {
            @Override
            public void run()
            {
                throw new IllegalStateException("the connection's own failure");
            }
        };
        threads.execute(failing);
    }

    @Test
    void anHttpConnectionResumedWithNothingBuffered_waitsForItsNextRequestWithoutReading() throws Exception
    {
        start(Invocable.InvocationType.NON_BLOCKING);
        CountingEndPoint endPoint = new CountingEndPoint();
        HttpConnection http = endPoint.httpConnection(connector);

        threads.execute(http);

        assertEquals(0, endPoint.fills.get(), "the resumed connection read its socket");
        assertTrue(http.isFillInterested());
        // Read on the selector, as Jetty's own read interest would be, not handed to another thread.
        assertEquals(Invocable.InvocationType.NON_BLOCKING, endPoint.readInterestType());
        // The next request, when it comes, is read and answered (the handler declines it: 404).
        endPoint.addInput("GET /next HTTP/1.1\r\nHost: sandgate\r\n\r\n");
        String answer = BufferUtil.toString(endPoint.waitForOutput(5, TimeUnit.SECONDS));
        assertTrue(answer.startsWith("HTTP/1.1 404 "), answer);
    }

    @Test
    void aClosedHttpConnectionResumed_runsAsJettyResumesIt() throws Exception
    {
        start(Invocable.InvocationType.NON_BLOCKING);
        CountingEndPoint endPoint = new CountingEndPoint();
        HttpConnection http = endPoint.httpConnection(connector);
        endPoint.close();

        threads.execute(http);

        // It ran, and so read (finding the end), releasing what it holds; it is not left waiting.
        assertTrue(endPoint.fills.get() > 0);
        assertFalse(http.isFillInterested());
    }

    private void start(Invocable.InvocationType handlers) throws Exception
    {
        threads.serve(server);
        server.setHandler(new Handler.Abstract(handlers)
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                return false;
            }
        });
        server.addConnector(connector);
        server.start();
        assertEquals(handlers, server.getInvocationType());
    }

    private String threadThatRuns(Resumed connection) throws Exception
    {
        threads.execute(connection);
        return connection.ranOn.get(5, TimeUnit.SECONDS);
    }

    /** A connection as Jetty resumes one: executed, to read on. */
    private class Resumed extends AbstractConnection implements Runnable
    {
        final CompletableFuture<String> ranOn = new CompletableFuture<>();

        Resumed()
        {
            super(new ByteArrayEndPoint(), threads);
        }

        @Override
        public void onFillable()
        {
        }

        @Override
        public void run()
        {
            ranOn.complete(Thread.currentThread().getName());
        }
    }

    /** An endpoint that counts the reads asked of it. */
    private static class CountingEndPoint extends ByteArrayEndPoint
    {
        final AtomicInteger fills = new AtomicInteger();

        @Override
        public int fill(ByteBuffer buffer) throws IOException
        {
            fills.incrementAndGet();
            return super.fill(buffer);
        }

        HttpConnection httpConnection(LocalConnector connector)
        {
            HttpConnection http = new HttpConnection(new HttpConfiguration(), connector, this);
            setConnection(http);
            return http;
        }

        Invocable.InvocationType readInterestType()
        {
            return getFillInterest().getCallbackInvocationType();
        }
    }
}
