package io.sandgate.launcher;

import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.Callback;
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
 * say when there is: a third of the gateway's CPU on 1 KB requests. Reading there and then is what
 * the selector would do itself, and the handlers that run if a request is there never block
 * ({@link OnThreadPool} takes the ones that may to the pool).</p>
 *
 * <p>And a connection resumed with no request already in its buffer is not read at all: it asks
 * the selector to say when the next request comes. Jetty's resume reads the socket twice (a retry
 * meant for TLS) before asking, and right after an answer the next request is seldom there yet: on
 * 1 KB keep-alive traffic those were two reads of the eight system calls per request, both finding
 * nothing.</p>
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
        Server server = this.server;
        if (job instanceof HttpConnection http && awaitsNextRequest(http))
        {
            http.fillInterested(new NextRequest(http, server == null ? Invocable.InvocationType.BLOCKING : server.getInvocationType()));
            return;
        }
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
     * The connection is open, holds no bytes of a next request and is not reading: resuming it
     * would only read, find nothing and ask the selector. A closed one runs, to be released as Jetty
     * releases it.
     */
    private static boolean awaitsNextRequest(HttpConnection http)
    {
        return http.isRequestBufferEmpty() && http.getEndPoint().isOpen() && !http.isFillInterested();
    }

    /**
     * What Jetty's own read interest does when the next request comes (its callback is private): the
     * connection reads it, on the selector when no handler blocks, since the callback says so. The
     * connection's generic callback would say it may block, and every request would be handed to
     * another thread.
     */
    private record NextRequest(HttpConnection http, Invocable.InvocationType invocationType) implements Callback
    {
        @Override
        public void succeeded()
        {
            http.onFillable();
        }

        @Override
        public void failed(Throwable x)
        {
            http.onFillInterestedFailed(x);
        }

        @Override
        public Invocable.InvocationType getInvocationType()
        {
            return invocationType;
        }
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
