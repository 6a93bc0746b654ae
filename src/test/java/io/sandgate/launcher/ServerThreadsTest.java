package io.sandgate.launcher;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.ByteArrayEndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.LocalConnector;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Invocable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * When the pool runs a resumed connection on the thread that resumes it: only when the server's
 * handlers never block, and only connections. (What a resumed connection reads is its endpoint's:
 * {@code ClientEndPointTest}.)
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
}
