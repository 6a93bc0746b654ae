package io.sandgate.testing;

import java.lang.reflect.Field;
import java.util.function.Consumer;

import io.sandgate.Sandgate;
import io.sandgate.launcher.EmbeddedServer;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.Invocable;

/**
 * One gateway on embedded Jetty, started from a {@link GatewayConfig}. Tests get these from a
 * {@link GatewayExtension}, which closes them; programs that are not tests (benchmarks) and
 * fixtures made of several gateways start them with {@link #start(Consumer)} and close them.
 */
public final class RunningGateway implements Gateway, AutoCloseable
{
    private final EmbeddedServer server;
    private boolean closed;

    private RunningGateway(EmbeddedServer server)
    {
        this.server = server;
    }

    /**
     * Starts a gateway and returns once it serves. An admin reload runs {@code configuration}
     * again, so a test that changes what the lambda reads and then reloads gets the new values,
     * as an operator who edits the YAML file and reloads would.
     */
    public static RunningGateway start(Consumer<GatewayConfig> configuration) throws Exception
    {
        GatewayConfig config = configure(configuration);
        return new RunningGateway(EmbeddedServer.start(config.build(), () -> configure(configuration).build(), config.surroundings()));
    }

    private static GatewayConfig configure(Consumer<GatewayConfig> configuration)
    {
        GatewayConfig config = new GatewayConfig();
        configuration.accept(config);
        return config;
    }

    @Override
    public int port()
    {
        return server.port();
    }

    @Override
    public int internalPort()
    {
        return server.internalPort();
    }

    @Override
    public int forwardProxyPort()
    {
        return server.forwardProxyPort();
    }

    @Override
    public Sandgate sandgate()
    {
        return server.sandgate();
    }

    /**
     * Sets the send buffer of the connections the public listener accepts from now on; -1 leaves
     * it to the kernel again. On loopback the kernel grows a send buffer to megabytes, which a
     * client that stops reading makes the gateway fill before a write waits: a test that needs
     * such a write sets a small one for that client's connection. Reached by reflection, so that
     * the gateway keeps no switch of its own for it.
     */
    public void acceptedSendBufferSize(int bytes) throws ReflectiveOperationException
    {
        Field connector = EmbeddedServer.class.getDeclaredField("connector");
        connector.setAccessible(true);
        ((ServerConnector)connector.get(server)).setAcceptedSendBufferSize(bytes);
    }

    /**
     * Puts {@code wrapper} in front of the gateway's handlers while it runs, as a deployment that
     * adds a handler would (behind only the outermost one, which keeps each connection's phase);
     * returns it. The outermost handler is not dynamic (that would make the server hand every
     * request to another thread), so the wrapper goes in by reflection, as above, and is started
     * here; the handlers it wraps stay the outermost one's, stopped with the server.
     */
    public <H extends Handler.Wrapper> H wrapHandler(H wrapper) throws Exception
    {
        Field serverField = EmbeddedServer.class.getDeclaredField("server");
        serverField.setAccessible(true);
        Server jetty = (Server)serverField.get(server);
        Handler.Wrapper outermost = (Handler.Wrapper)jetty.getHandler();
        Field handlerField = Handler.Wrapper.class.getDeclaredField("_handler");
        handlerField.setAccessible(true);
        wrapper.setServer(jetty);
        wrapper.setHandler(outermost.getHandler());
        wrapper.start();
        handlerField.set(outermost, wrapper);
        return wrapper;
    }

    @Override
    public int connectedEndPoints()
    {
        try
        {
            Field serverField = EmbeddedServer.class.getDeclaredField("server");
            serverField.setAccessible(true);
            int open = 0;
            for (org.eclipse.jetty.server.Connector connector : ((Server)serverField.get(server)).getConnectors())
                open += connector.getConnectedEndPoints().size();
            return open;
        }
        catch (ReflectiveOperationException x)
        {
            throw new IllegalStateException(x);
        }
    }

    /** Whether the gateway's server says its handlers may block, which decides where Jetty runs each request. */
    public Invocable.InvocationType invocationType() throws ReflectiveOperationException
    {
        Field serverField = EmbeddedServer.class.getDeclaredField("server");
        serverField.setAccessible(true);
        return ((Server)serverField.get(server)).getInvocationType();
    }

    /** Stops the gateway; a second call does nothing, so a test may stop one its extension also stops. */
    @Override
    public synchronized void close() throws Exception
    {
        if (closed)
            return;
        closed = true;
        closeIdleConnectionsSoon();
        server.close();
    }

    /**
     * On stop, Jetty closes a kept-alive connection between exchanges only once it has been idle
     * for the connector's shutdown idle timeout (1 s by default), which a test gateway's stop timeout
     * (1 s) then waits out whole; nearly every test's client keeps such a connection, so nearly
     * every stop took a second. A test gateway closes connections idle for 200 ms instead: an
     * exchange that sends and receives nothing for that long is cut then rather than at the stop
     * timeout, and the gateway is stopping either way.
     */
    private void closeIdleConnectionsSoon() throws ReflectiveOperationException
    {
        Field serverField = EmbeddedServer.class.getDeclaredField("server");
        serverField.setAccessible(true);
        for (org.eclipse.jetty.server.Connector connector : ((Server)serverField.get(server)).getConnectors())
        {
            if (connector instanceof AbstractConnector abstractConnector)
                abstractConnector.setShutdownIdleTimeout(200);
        }
    }

    @Override
    public String toString()
    {
        return "gateway " + uri();
    }
}
