package io.sandgate.launcher;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.sandgate.Sandgate;
import io.sandgate.Surroundings;
import io.sandgate.config.SandgateConfig;
import io.sandgate.config.ServerConfig;
import io.sandgate.egress.EgressConnectHandler;
import io.sandgate.ingress.embedded.ClientConnectionLimit;
import io.sandgate.ingress.embedded.ClientEndPoint;
import io.sandgate.ingress.embedded.HeadTimeout;
import io.sandgate.ingress.embedded.IngressConnector;
import io.sandgate.ingress.embedded.IngressHandler;
import io.sandgate.ingress.embedded.ListenerConnector;
import io.sandgate.ingress.embedded.ServerConnectionLimit;
import io.sandgate.ops.Drain;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.eclipse.jetty.util.thread.ShutdownThread;
import org.slf4j.LoggerFactory;

/**
 * Sandgate on an embedded Jetty: the gateway built once by the composition root, its servlets in
 * one context, or in two when {@code server.internal-port} separates the public listener (ingress
 * and health) from the internal one (MCP, egress with CONNECT, admin, metrics). In front of them,
 * unless {@code server.ingress-front-end} says {@code servlet}, the {@link IngressHandler} serves
 * plain ingress HTTP on Jetty's core API. Tests start it on port 0.
 *
 * <p>SIGTERM drains it ({@link Drain}) as {@code POST /admin/drain} does: Jetty's shutdown hook
 * begins the drain and waits; once the drain has finished, whoever began it, the server stops and
 * {@link #join} returns. {@link #close} stops it at once, without a drain.</p>
 */
public final class EmbeddedServer implements AutoCloseable
{
    private final Server server;
    private final Sandgate sandgate;
    private final ServerConnector connector;
    private final ServerConnector internalConnector;
    private final ServerConnector proxyConnector;
    /** Stopped by Jetty's shutdown hook: SIGTERM. */
    private final DrainOnSignal onSignal = new DrainOnSignal();
    /** Completes once the server has stopped, whatever stopped it. */
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    // Guarded by this.
    private boolean closed;

    private EmbeddedServer(Server server, Sandgate sandgate, ServerConnector connector, ServerConnector internalConnector, ServerConnector proxyConnector)
    {
        this.server = server;
        this.sandgate = sandgate;
        this.connector = connector;
        this.internalConnector = internalConnector;
        this.proxyConnector = proxyConnector;
    }

    public static EmbeddedServer start(SandgateConfig config) throws Exception
    {
        return start(config, () -> config);
    }

    /**
     * @param reloader reads the configuration again from its sources, for admin reloads
     */
    public static EmbeddedServer start(SandgateConfig config, Supplier<SandgateConfig> reloader) throws Exception
    {
        return start(config, reloader, Surroundings.SYSTEM);
    }

    /**
     * As {@link #start(SandgateConfig, Supplier)}, with the time, names and spans taken from
     * {@code surroundings} (a caller's own tracing is the caller's to close, after the server).
     */
    public static EmbeddedServer start(SandgateConfig config, Supplier<SandgateConfig> reloader, Surroundings surroundings) throws Exception
    {
        return start(config, Sandgate.create(config, "", reloader, surroundings));
    }

    /**
     * As {@link #start(SandgateConfig)}, with the server's buffers (its connections', and the core
     * front-end's towards sandboxes) taken from {@code buffers}: Jetty's tracking pool, to find
     * buffers that are never given back.
     */
    public static EmbeddedServer start(SandgateConfig config, ByteBufferPool buffers) throws Exception
    {
        return start(config, Sandgate.create(config, "", () -> config, Surroundings.SYSTEM), buffers);
    }

    private static EmbeddedServer start(SandgateConfig config, Sandgate sandgate) throws Exception
    {
        return start(config, sandgate, null);
    }

    /** Serves a gateway just built, or closes it if the server cannot start. */
    private static EmbeddedServer start(SandgateConfig config, Sandgate sandgate, ByteBufferPool buffers) throws Exception
    {
        try
        {
            return serve(config, sandgate, buffers);
        }
        catch (Exception | Error x)
        {
            sandgate.close();
            throw x;
        }
    }

    /** @param buffers the server's buffer pool; null for Jetty's default */
    private static EmbeddedServer serve(SandgateConfig config, Sandgate sandgate, ByteBufferPool buffers) throws Exception
    {
        int maxThreads = config.server().maxThreads();
        int cores = Runtime.getRuntime().availableProcessors();
        ThreadPlan plan = ThreadPlan.of(cores, maxThreads);
        ServerThreads threads = new ServerThreads(maxThreads);
        threads.setReservedThreads(plan.reservedThreads());
        Server server = new Server(threads, null, buffers);
        threads.serve(server);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        // No per-connection cache of request header lines: matching each line against it (a trie
        // walked byte by byte; the session cookie's line is long) costs more than making each
        // value's String (docs/performance-notes.md).
        http.setHeaderCacheSize(0);
        ClientConnectionLimit limit = new ClientConnectionLimit(config.server().maxConnectionsPerClient(), sandgate.clients(false), sandgate.metrics());
        ClientConnectionLimit internalLimit = limit.counting(sandgate.clients(true));
        ServerConnectionLimit serverLimit = new ServerConnectionLimit(maxConnections(config.server()), sandgate.metrics());
        // The public listener's selectors also carry the core front-end's connections to sandboxes.
        HttpConnectionFactory publicHttp = new HttpConnectionFactory(http);
        IngressConnector connector = listen(server, new IngressConnector(server, plan.publicSelectors(), limit, serverLimit, publicHttp),
            config.server(), config.server().port());
        ServerConnector internal = config.server().internalPort().map(port -> connector(server, http, internalLimit, serverLimit, config.server(), port, plan))
            .orElse(null);
        ServerConnector proxy = config.egress().forwardProxyPort().map(port -> connector(server, http, internalLimit, serverLimit, config.server(), port, plan))
            .orElse(null);
        server.addBean(new HeadTimeout(server, config.server().headTimeout(), sandgate.metrics()));

        Handler internalFaces;
        Handler publicFaces;
        if (internal == null)
        {
            internalFaces = context(sandgate, Sandgate.Listener.ALL);
            publicFaces = internalFaces;
        }
        else
        {
            internalFaces = context(sandgate, Sandgate.Listener.INTERNAL);
            publicFaces = context(sandgate, Sandgate.Listener.PUBLIC);
        }
        // CONNECT (HTTPS_PROXY clients) and absolute-form requests are egress: internal only.
        if (proxy != null)
            internalFaces = new ForwardProxyPort(proxy, internalFaces);
        if (sandgate.egress() != null)
            internalFaces = new EgressConnectHandler(sandgate::egress, internalFaces);
        Handler root = internal == null ? internalFaces : new ByConnector(publicFaces, internalFaces, connector);
        if (sandgate.ingress() != null && config.server().ingressFrontEnd() == ServerConfig.IngressFrontEnd.CORE)
        {
            // Plain ingress HTTP on the core API; everything else (WebSocket upgrades included) on
            // the servlets, which may block and so run on the pool.
            IngressHandler ingress = new IngressHandler(sandgate.ingress(), sandgate.clientLimit(), sandgate.accessLog(), sandgate.tracing(), connector,
                sandgate.metrics());
            root = new Handler.Sequence(ingress, new OnThreadPool(root));
        }
        GracefulHandler graceful = new GracefulHandler(root);
        // Outermost: each request's connection is busy from its head to its end, for the limits above.
        server.setHandler(new ClientEndPoint.Exchanges(graceful));
        server.setErrorHandler(ErrorPages.forServer());
        server.setStopTimeout(config.server().stopTimeout().toMillis());
        try
        {
            server.start();
            ThreadPlan.checkLeft(maxThreads, threads.getThreadPoolBudget().getLeasedThreads(), cores);
        }
        catch (Exception x)
        {
            server.stop();
            ServerThreads.TooFewThreads tooFew = tooFewThreads(x);
            if (tooFew != null)
                throw ThreadPlan.tooFewToStart(maxThreads, tooFew.required, cores);
            throw x;
        }
        // A failed start must fail here, not leave a server answering 503 to everything.
        if (!server.isStarted() || !contextsAvailable(server))
        {
            server.stop();
            throw new IllegalStateException("Sandgate failed to start; see the log above");
        }
        EmbeddedServer embedded = new EmbeddedServer(server, sandgate, connector, internal, proxy);
        embedded.drainWith(graceful);
        return embedded;
    }

    /**
     * Once its grace is over, a drain has Jetty's graceful handler refuse new requests (503 with
     * {@code Connection: close}) and learns from it when those in flight have ended; once the drain
     * has finished, the server stops. SIGTERM begins one through Jetty's shutdown hook.
     */
    private void drainWith(GracefulHandler graceful) throws Exception
    {
        Drain drain = sandgate.drain();
        drain.attach(graceful::shutdown);
        drain.finished().thenRun(() ->
        {
            // Not on the drain's timer: stopping the gateway stops that timer.
            Thread stopper = new Thread(this::stopAfterDrain, "sandgate-drain-stop");
            stopper.start();
        });
        onSignal.start();
        ShutdownThread.register(onSignal);
    }

    private void stopAfterDrain()
    {
        // The drain's timeout bounds the whole leave: exchanges still open when it passed are cut,
        // not waited for again.
        server.setStopTimeout(Math.min(server.getStopTimeout(), sandgate.drain().remaining().toMillis()));
        try
        {
            close();
        }
        catch (Exception x)
        {
            LoggerFactory.getLogger(EmbeddedServer.class).warn("Stopping after the drain failed", x);
        }
    }

    /** What Jetty's shutdown hook stops on SIGTERM: a drain, which the hook waits out until the server has stopped. */
    private final class DrainOnSignal extends AbstractLifeCycle
    {
        @Override
        protected void doStop() throws Exception
        {
            synchronized (EmbeddedServer.this)
            {
                if (closed)
                    return;
            }
            Drain drain = sandgate.drain();
            drain.begin(Drain.Cause.SIGNAL);
            Duration bound = drain.remaining().plusMillis(server.getStopTimeout()).plusSeconds(5);
            try
            {
                stopped.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            }
            catch (TimeoutException x)
            {
                LoggerFactory.getLogger(EmbeddedServer.class).warn("Not stopped {} after SIGTERM; exiting anyway", bound);
            }
        }
    }

    private static ServerConnector connector(Server server, HttpConfiguration http, ClientConnectionLimit limit, ServerConnectionLimit serverLimit,
                                             ServerConfig config, int port, ThreadPlan plan)
    {
        return listen(server, new ListenerConnector(server, plan.listenerSelectors(), limit, serverLimit, new HttpConnectionFactory(http)), config, port);
    }

    /** {@code server.max-connections}, or the cap the process's descriptor limit allows, which the log says. */
    private static int maxConnections(ServerConfig config)
    {
        if (config.maxConnections().isPresent())
            return config.maxConnections().get();
        int derived = ServerConnectionLimit.forThisProcess();
        LoggerFactory.getLogger(EmbeddedServer.class).info("server.max-connections: {}, from a limit of {} file descriptors",
            derived, ServerConnectionLimit.descriptorLimit());
        return derived;
    }

    /** The pool's refusal to lease, wherever the server's start put it (connectors' failures come collected). */
    private static ServerThreads.TooFewThreads tooFewThreads(Throwable x)
    {
        for (Throwable t = x; t != null; t = t.getCause())
        {
            if (t instanceof ServerThreads.TooFewThreads tooFew)
                return tooFew;
            for (Throwable suppressed : t.getSuppressed())
            {
                if (suppressed instanceof ServerThreads.TooFewThreads tooFew)
                    return tooFew;
            }
        }
        return null;
    }

    private static <C extends ServerConnector> C listen(Server server, C connector, ServerConfig config, int port)
    {
        connector.setHost(config.host());
        connector.setPort(port);
        // Jetty's default is 30 s: below a load balancer's (60 s on AWS), which then sends requests
        // on connections the gateway is closing, and they fail.
        connector.setIdleTimeout(config.idleTimeout().toMillis());
        server.addConnector(connector);
        return connector;
    }

    private static ServletContextHandler context(Sandgate sandgate, Sandgate.Listener listener)
    {
        ServletContextHandler context = new ServletContextHandler("/");
        context.setErrorHandler(ErrorPages.forServlets());
        context.addEventListener(new SandgateListener(sandgate, listener));
        return context;
    }

    private static boolean contextsAvailable(Server server)
    {
        for (ServletContextHandler context : server.getDescendants(ServletContextHandler.class))
        {
            if (!context.isAvailable())
                return false;
        }
        return true;
    }

    /** Sends what arrives on the public connector to the public faces and the rest to the internal ones. */
    private static final class ByConnector extends Handler.Abstract
    {
        private final Handler publicFaces;
        private final Handler internalFaces;
        private final Connector publicConnector;

        ByConnector(Handler publicFaces, Handler internalFaces, Connector publicConnector)
        {
            this.publicFaces = publicFaces;
            this.internalFaces = internalFaces;
            this.publicConnector = publicConnector;
            addBean(publicFaces);
            addBean(internalFaces);
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            Handler faces = request.getConnectionMetaData().getConnector() == publicConnector ? publicFaces : internalFaces;
            return faces.handle(request, response, callback);
        }

        @Override
        public void setServer(Server server)
        {
            super.setServer(server);
            publicFaces.setServer(server);
            internalFaces.setServer(server);
        }
    }

    /** The public port: ingress and health, and everything else when there is no internal port. */
    public int port()
    {
        return connector.getLocalPort();
    }

    public URI uri()
    {
        return URI.create("http://127.0.0.1:" + port());
    }

    /** The internal port (MCP, egress, admin, metrics), or the public one when they are not apart. */
    public int internalPort()
    {
        return internalConnector == null ? port() : internalConnector.getLocalPort();
    }

    public URI internalUri()
    {
        return URI.create("http://127.0.0.1:" + internalPort());
    }

    /** The forward-proxy port, or -1 when there is none. */
    public int forwardProxyPort()
    {
        return proxyConnector == null ? -1 : proxyConnector.getLocalPort();
    }

    public Sandgate sandgate()
    {
        return sandgate;
    }

    public void join() throws InterruptedException
    {
        server.join();
    }

    /** Stops the server and closes the gateway now; a second call, or one after a drain stopped it, does nothing. */
    @Override
    public synchronized void close() throws Exception
    {
        if (closed)
            return;
        closed = true;
        ShutdownThread.deregister(onSignal);
        sandgate.endStreams();
        try
        {
            server.stop();
        }
        catch (TimeoutException x)
        {
            // Jetty finishes stopping and then reports that the graceful wait ran out: exchanges
            // still open after server.stop-timeout were cut, which is what the timeout is for.
            LoggerFactory.getLogger(EmbeddedServer.class).info("Stopped; exchanges still open after {} were cut", Duration.ofMillis(server.getStopTimeout()));
        }
        finally
        {
            sandgate.close();
            stopped.complete(null);
        }
    }
}
