package io.sandgate.launcher;

import io.sandgate.ingress.embedded.ClientEndPoint;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ThreadPoolBudget;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded runner's thread pool. It differs from Jetty's in one thing: a connection handed to
 * it to be resumed runs at once, on the thread that hands it over, when the server's handlers never
 * block.
 *
 * <p>Why: a handler that answers asynchronously (the ingress proxy completes each response on the
 * thread that read the sandbox's answer) makes Jetty resume the browser's connection, to read its
 * next request, by executing the connection on the pool. On keep-alive traffic that is one thread
 * woken and parked per request, for a read that mostly finds nothing yet and asks the selector to
 * say when there is (docs/performance-notes.md). Reading there and then is what
 * the selector would do itself, and the handlers that run if a request is there never block
 * ({@link OnThreadPool} takes the ones that may to the pool).</p>
 *
 * <p>And a connection resumed so reads nothing itself: it asks the selector to say when the next
 * request comes ({@link ClientEndPoint#resuming}).</p>
 */
final class ServerThreads extends QueuedThreadPool
{
    private static final Logger LOG = LoggerFactory.getLogger(ServerThreads.class);

    private volatile Server server;

    ServerThreads(int maxThreads)
    {
        super(maxThreads);
        setName("sandgate");
        setThreadPoolBudget(new Budget());
    }

    /** The server whose connections may be resumed in place, when its handlers never block. */
    void serve(Server server)
    {
        this.server = server;
    }

    @Override
    public void execute(Runnable job)
    {
        ClientEndPoint.resuming(job);
        Server server = this.server;
        if (job instanceof Connection && server != null && server.isStarted()
            && server.getInvocationType() == Invocable.InvocationType.NON_BLOCKING)
        {
            try
            {
                job.run();
            }
            catch (RuntimeException x)
            {
                // As the pool would: the connection has failed, the thread that resumed it has not.
                LOG.warn("Resuming {} failed", job, x);
            }
            return;
        }
        super.execute(job);
    }

    /**
     * Jetty's budget, whose failure says how many threads had been asked for when the pool ran out,
     * so that the runner can say what to set (see {@link ThreadPlan}). The runner checks the whole
     * budget against a stricter bound once the server has started.
     */
    private final class Budget extends ThreadPoolBudget
    {
        Budget()
        {
            super(ServerThreads.this);
        }

        @Override
        public boolean check(int maxThreads)
        {
            int leased = getLeasedThreads();
            if (leased >= maxThreads)
                throw new TooFewThreads(leased, maxThreads);
            return true;
        }
    }

    /** More threads leased than the pool has: a selector or acceptor would wait for one forever. */
    static final class TooFewThreads extends IllegalStateException
    {
        final int required;

        TooFewThreads(int required, int maxThreads)
        {
            super("Insufficient configured threads: required=" + required + " < max=" + maxThreads);
            this.required = required;
        }
    }
}
