package io.sandgate.testing;

import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.component.LifeCycle;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/** The Jetty servers the fixtures run: on loopback only, on ephemeral ports, quick to stop. */
public final class LoopbackServers
{
    private LoopbackServers()
    {
    }

    /**
     * A server whose threads carry the fixture's name. Fixtures hold exchanges open on purpose (an
     * SSE stream waiting to be released, a hung request, a tool waiting for a sampling answer);
     * a short stop timeout makes close() interrupt them, as a dying pod would, instead of waiting
     * Jetty's default 5 s.
     */
    static Server server(String name)
    {
        QueuedThreadPool pool = new QueuedThreadPool();
        pool.setName(name);
        pool.setStopTimeout(500);
        return new Server(pool);
    }

    /** A connector on 127.0.0.1 and a port the kernel picks; plain HTTP/1.1 when no factory is given. */
    static ServerConnector connector(Server server, ConnectionFactory... factories)
    {
        ServerConnector connector = factories.length == 0 ? new ServerConnector(server) : new ServerConnector(server, factories);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        return connector;
    }

    /**
     * Starts a server of a test's own, for a page or a sandbox that no fixture plays: {@code handler}
     * answers on loopback, on a port the kernel picks ({@link #port}). The test stops it.
     */
    public static Server serve(String name, Handler handler)
    {
        Server server = server(name);
        connector(server);
        server.setHandler(handler);
        start(server, () -> LifeCycle.stop(server), name);
        return server;
    }

    /** The port of a server started by {@link #serve}. */
    public static int port(Server server)
    {
        return ((ServerConnector)server.getConnectors()[0]).getLocalPort();
    }

    /**
     * Starts a fixture's server; when that fails, {@code close} releases what the fixture already
     * holds (threads, a bound port) before the failure is thrown, naming {@code what} did not start.
     */
    static void start(Server server, Runnable close, String what)
    {
        try
        {
            server.start();
        }
        catch (Exception e)
        {
            close.run();
            throw new IllegalStateException("Could not start " + what, e);
        }
    }

    /** Stops a fixture's server or connector; a failure names {@code what} did not stop. */
    static void stop(LifeCycle lifeCycle, String what)
    {
        try
        {
            lifeCycle.stop();
        }
        catch (Exception e)
        {
            throw new IllegalStateException("Could not stop " + what, e);
        }
    }
}
