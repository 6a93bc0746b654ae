package io.sandgate.launcher;

import java.net.URI;
import java.time.Duration;

import io.sandgate.Sandgate;
import io.sandgate.config.SandgateConfig;
import io.sandgate.egress.EgressConnectHandler;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.websocket.jakarta.server.config.JakartaWebSocketServletContainerInitializer;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Sandgate on an embedded Jetty: the same listener and servlets as the WAR, in one process. Tests
 * start it on port 0.
 */
public final class EmbeddedServer implements AutoCloseable
{
    private final Server server;
    private final ServerConnector connector;
    private final ServerConnector proxyConnector;
    private final ServletContextHandler context;

    private EmbeddedServer(Server server, ServerConnector connector, ServerConnector proxyConnector, ServletContextHandler context)
    {
        this.server = server;
        this.connector = connector;
        this.proxyConnector = proxyConnector;
        this.context = context;
    }

    /** The forward-proxy port, or -1 when there is none. */
    public int forwardProxyPort()
    {
        return proxyConnector == null ? -1 : proxyConnector.getLocalPort();
    }

    public static EmbeddedServer start(SandgateConfig config) throws Exception
    {
        return start(config, () -> config);
    }

    /**
     * @param reloader reads the configuration again from its sources, for admin reloads
     */
    public static EmbeddedServer start(SandgateConfig config, java.util.function.Supplier<SandgateConfig> reloader) throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool(config.server().maxThreads());
        threads.setName("sandgate");
        Server server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost(config.server().host());
        connector.setPort(config.server().port());
        server.addConnector(connector);

        ServletContextHandler context = new ServletContextHandler("/");
        // The standard WebSocket container, as a servlet container provides it to the WAR.
        JakartaWebSocketServletContainerInitializer.configure(context, null);
        context.addEventListener(new SandgateListener(config, reloader));
        // CONNECT requests (HTTPS_PROXY clients) are tunnelled through egress nodes; the rest is the webapp.
        EmbeddedServer[] self = new EmbeddedServer[1];
        Handler webapp = new GracefulHandler(context);
        ServerConnector proxyConnector = null;
        if (config.egress().forwardProxyPort().isPresent())
        {
            proxyConnector = new ServerConnector(server, new HttpConnectionFactory(http));
            proxyConnector.setHost(config.server().host());
            proxyConnector.setPort(config.egress().forwardProxyPort().get());
            server.addConnector(proxyConnector);
            webapp = new ForwardProxyPort(proxyConnector, webapp);
        }
        server.setHandler(new EgressConnectHandler(() -> self[0] == null || self[0].sandgate() == null ? null : self[0].sandgate().egress(),
            webapp));
        server.setStopTimeout(config.server().stopTimeout().toMillis());
        server.setStopAtShutdown(true);
        try
        {
            server.start();
        }
        catch (Exception x)
        {
            server.stop();
            throw x;
        }
        EmbeddedServer embedded = new EmbeddedServer(server, connector, proxyConnector, context);
        self[0] = embedded;
        // A failed start must fail here, not leave a server answering 503 to everything.
        if (!context.isAvailable() || embedded.sandgate() == null)
        {
            server.stop();
            throw new IllegalStateException("Sandgate failed to start; see the log above");
        }
        return embedded;
    }

    public int port()
    {
        return connector.getLocalPort();
    }

    public URI uri()
    {
        return URI.create("http://127.0.0.1:" + port());
    }

    public Sandgate sandgate()
    {
        return (Sandgate)context.getServletContext().getAttribute(SandgateListener.ATTRIBUTE);
    }

    public void join() throws InterruptedException
    {
        server.join();
    }

    @Override
    public void close() throws Exception
    {
        Sandgate sandgate = sandgate();
        if (sandgate != null)
            sandgate.endStreams();
        try
        {
            server.stop();
        }
        catch (java.util.concurrent.TimeoutException x)
        {
            // Jetty finishes stopping and then reports that the graceful wait ran out: exchanges
            // still open after server.stop-timeout were cut, which is what the timeout is for.
            org.slf4j.LoggerFactory.getLogger(EmbeddedServer.class).info("Stopped; exchanges still open after {} were cut", Duration.ofMillis(server.getStopTimeout()));
        }
    }
}
