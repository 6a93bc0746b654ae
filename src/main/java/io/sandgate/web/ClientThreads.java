package io.sandgate.web;

import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;

/**
 * The threads of an HTTP client that a component runs for itself: the WebSocket tunnels', the MCP
 * face's, each egress node's. A pool of its own keeps one client's load from starving another client
 * of threads, and its selector leases a thread from it for as long as the client runs. Jetty's
 * default pool keeps eight threads per client even when idle; this one keeps the selector's and one
 * more, and grows to 200 under load as Jetty's does. Named, so that a thread dump says whose threads
 * they are; daemon, the timeouts' scheduler too (Jetty's default one is not), so that a client left
 * running never keeps the JVM alive.
 */
public final class ClientThreads
{
    private ClientThreads()
    {
    }

    /** Gives {@code client}, not started yet, threads of its own named {@code name}; the client starts and stops them. */
    public static void install(HttpClient client, String name)
    {
        QueuedThreadPool threads = new QueuedThreadPool(200, 2);
        threads.setName(name);
        threads.setDaemon(true);
        client.setExecutor(threads);
        client.setScheduler(new ScheduledExecutorScheduler(name + "-scheduler", true));
    }
}
