package io.sandgate.web;

import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The thread pool of an HTTP client that a component runs for itself: the WebSocket tunnels', the
 * MCP face's, each egress node's. A pool of its own keeps one client's load from starving another
 * client of threads, and its selector leases a thread from it for as long as the client runs. Jetty's
 * default pool keeps eight threads per client even when idle; this one keeps the selector's and one
 * more, and grows to 200 under load as Jetty's does. Named, so that a thread dump says whose threads
 * they are; daemon, so that a client left running never keeps the JVM alive.
 */
public final class ClientThreads
{
    private ClientThreads()
    {
    }

    /** A pool for one client, not started: the client that is given it starts and stops it. */
    public static QueuedThreadPool of(String name)
    {
        QueuedThreadPool threads = new QueuedThreadPool(200, 2);
        threads.setName(name);
        threads.setDaemon(true);
        return threads;
    }
}
