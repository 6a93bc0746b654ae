package io.sandgate;

import java.net.URI;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sandgate.admin.AdminApi;
import io.sandgate.admin.AgentPolicyApi;
import io.sandgate.admin.AdminServlet;
import io.sandgate.admin.McpPinApi;
import io.sandgate.admin.SandboxApi;
import io.sandgate.config.CredentialsConfig;
import io.sandgate.config.EgressConfig;
import io.sandgate.config.LifecycleConfig;
import io.sandgate.config.SandgateConfig;
import io.sandgate.config.ServerConfig;
import io.sandgate.config.TracingConfig;
import io.sandgate.controlplane.PodWatcher;
import io.sandgate.core.Schedulers;
import io.sandgate.egress.AgentGate;
import io.sandgate.egress.AgentPolicies;
import io.sandgate.egress.Credentials;
import io.sandgate.egress.Egress;
import io.sandgate.egress.EgressServlet;
import io.sandgate.egress.InspectionCa;
import io.sandgate.egress.InspectionCaServlet;
import io.sandgate.egress.LeakGuard;
import io.sandgate.ingress.ActivityRecorder;
import io.sandgate.ingress.Ingress;
import io.sandgate.ingress.SandboxWaker;
import io.sandgate.ingress.lifecycle.HttpSandboxManager;
import io.sandgate.ingress.lifecycle.LifecyclePass;
import io.sandgate.ingress.lifecycle.ReplicaActivity;
import io.sandgate.ingress.lifecycle.SandboxManager;
import io.sandgate.ingress.lifecycle.Wakes;
import io.sandgate.ingress.servlet.IngressServlet;
import io.sandgate.ingress.servlet.SessionFilter;
import io.sandgate.ingress.websocket.BrowserUpgrade;
import io.sandgate.ingress.websocket.WebSocketBridge;
import io.sandgate.leak.Redactor;
import io.sandgate.mcp.McpGateway;
import io.sandgate.mcp.identity.Authenticator;
import io.sandgate.mcp.identity.ResourceMetadataServlet;
import io.sandgate.net.Origins;
import io.sandgate.net.Resolver;
import io.sandgate.net.Sites;
import io.sandgate.ops.AccessLogFilter;
import io.sandgate.ops.Drain;
import io.sandgate.ops.HealthServlet;
import io.sandgate.ops.LogFormats;
import io.sandgate.ops.MetricHistory;
import io.sandgate.ops.MetricsServlet;
import io.sandgate.secrets.SecretRing;
import io.sandgate.secrets.SecretSource;
import io.sandgate.secrets.SecretSources;
import io.sandgate.store.Store;
import io.sandgate.tracing.Tracing;
import io.sandgate.web.AccessLog;
import io.sandgate.web.ClientIdentity;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.ClientLimitFilter;
import io.sandgate.web.GatewayPagesFilter;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterRegistration;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletRegistration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: builds every component from one validated configuration, without a
 * servlet context, and owns their lifecycle; {@link #install} then only registers the servlet
 * glue. The WAR's listener and the embedded runner both come through here, so the two artifacts
 * cannot drift apart.
 */
public final class Sandgate implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Sandgate.class);
    /** Jetty publishes its thread pool under this name; the proxy client shares it when present. */
    private static final String JETTY_EXECUTOR = "org.eclipse.jetty.server.Executor";

    private final SandgateConfig config;
    /** Reads the configuration again from the same sources, for reloads. */
    private final Supplier<SandgateConfig> reloader;
    /** How the egress face resolves target names. */
    private final Resolver resolver;
    /** The time every expiry is judged by: the system's, or a test's that it moves. */
    private final Clock clock;
    private final PrometheusMeterRegistry metrics;
    private final Schedulers schedulers;
    private final Store store;
    /** Where spans go; {@link Tracing#OFF} unless {@code tracing.otlp.endpoint} is set or a test gave its own. */
    private final Tracing tracing;
    /** What was built, closed in reverse order with the gateway. */
    private final Deque<AutoCloseable> built = new ArrayDeque<>();
    /** The faces; null when switched off, and on the control-plane role, which serves operations only. */
    private Ingress ingress;
    private WebSocketBridge webSockets;
    private McpGateway mcp;
    private Egress egress;
    private Credentials credentials;
    /** Who a client is: on the public listener, the only one in a servlet container. */
    private final ClientInfo clients;
    /** Who a client of the internal listener is; the same as {@link #clients} when there is no such listener. */
    private final ClientInfo internalClients;
    /** Requests in progress per client, one count across the listeners and front-ends. */
    private ClientLimitFilter clientLimit;
    /** Counts and logs every request, whichever listener or front-end served it. */
    private final AccessLogFilter accessLog;
    /** Writes routes from the cluster's pods; null unless {@code controlplane.watcher.enabled}. */
    private PodWatcher watcher;
    /** Built once, when a wake or an idle pause first needs it. */
    private SandboxManager sandboxManager;
    /** How this replica leaves: readiness, then its connections closed spread out. */
    private Drain drain;
    /** What the dashboard charts. */
    private MetricHistory history;
    /** One redaction for logs and the admin API; it knows the real keys once the egress face has read them. */
    private volatile Redactor redactor;

    private Sandgate(SandgateConfig config, Supplier<SandgateConfig> reloader, Surroundings surroundings)
    {
        this.config = config;
        this.reloader = reloader;
        this.resolver = surroundings.resolver();
        this.tracing = surroundings.tracing();
        this.clock = surroundings.clock();
        this.metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new JvmMemoryMetrics().bindTo(metrics);
        new JvmGcMetrics().bindTo(metrics);
        new JvmThreadMetrics().bindTo(metrics);
        new ProcessorMetrics().bindTo(metrics);
        this.schedulers = Schedulers.create();
        this.store = Store.create(config, metrics, schedulers, clock);
        this.clients = new ClientInfo(config.ingress().trustedProxies(), config.server().clientIpv6Prefix());
        // Sandboxes and agents, the internal listener's clients, are the cluster's pods: in an IPv6
        // cluster those of one node share its /64, and counting them by it would make them one client.
        this.internalClients = config.server().internalPort().isEmpty() ? clients
            : new ClientInfo(config.ingress().trustedProxies(), config.server().internalClientIpv6Prefix());
        this.redactor = forLogs(Redactor.defaults());
        this.accessLog = new AccessLogFilter(metrics, config.accessLog(), () -> redactor, tracing);
    }

    /**
     * Builds and starts the whole gateway; nothing serves until {@link #install} registers it.
     *
     * @param contextPath where the webapp is deployed ("" at the root)
     * @param reloader reads the configuration again from its sources; admin reloads use it
     */
    public static Sandgate create(SandgateConfig config, String contextPath, Supplier<SandgateConfig> reloader)
    {
        return create(config, contextPath, reloader, Surroundings.SYSTEM);
    }

    /**
     * As {@link #create(SandgateConfig, String, Supplier)}, with the time, names and spans taken
     * from {@code surroundings}: tests move the clock, give names that answer slowly or never, and
     * read spans from an in-memory exporter.
     */
    public static Sandgate create(SandgateConfig config, String contextPath, Supplier<SandgateConfig> reloader, Surroundings surroundings)
    {
        if (surroundings.tracing() != null)
            return build(config, contextPath, reloader, surroundings);
        Tracing tracing = tracing(config.tracing());
        try
        {
            Sandgate sandgate = build(config, contextPath, reloader, surroundings.withTracing(tracing));
            // Built here, so closed with the gateway; a caller's own tracing is the caller's to close.
            sandgate.built.addLast(tracing);
            return sandgate;
        }
        catch (RuntimeException x)
        {
            tracing.close();
            throw x;
        }
    }

    private static Sandgate build(SandgateConfig config, String contextPath, Supplier<SandgateConfig> reloader, Surroundings surroundings)
    {
        LogFormats.use(config.logFormat());
        Sandgate sandgate = new Sandgate(config, reloader, surroundings);
        try
        {
            sandgate.build(contextPath);
            sandgate.drain = sandgate.newDrain();
        }
        catch (RuntimeException x)
        {
            sandgate.close();
            throw x;
        }
        return sandgate;
    }

    /** Spans to the configured collector, or none: without an endpoint nothing of the SDK is started. */
    private static Tracing tracing(TracingConfig config)
    {
        return config.endpoint().map(endpoint -> Tracing.otlp(endpoint, config.sampleRatio(), config.serviceName())).orElse(Tracing.OFF);
    }

    private void build(String contextPath)
    {
        // Reads the meters at each sample, so it charts the faces' meters though they come later.
        history = new MetricHistory(config.history(), metrics, clock);
        built.push(history);
        history.start(schedulers);
        if (config.watcher().enabled())
        {
            watcher = new PodWatcher(config.watcher(), config.ingress(), store.routes(), store.leadership("pod-watcher"), metrics, schedulers);
            built.push(watcher);
            watcher.start();
        }
        if (config.server().role() == ServerConfig.Role.CONTROLPLANE)
            return;
        ServerConfig.Faces faces = config.server().faces();
        if (faces.ingress())
            buildIngress(contextPath);
        if (faces.mcp())
        {
            try
            {
                SecretSource secrets = SecretSources.open(config.egress().credentials(), config.mcp().needsSecrets(), clock, schedulers);
                built.push(secrets);
                SecretRing ring = new SecretRing(secrets, config.egress().credentials().overlap(), clock);
                mcp = new McpGateway(config.mcp(), store.sessions(), internalClients, new Origins(config.server().publicOrigins()), metrics, schedulers, tracing,
                    store.quotas(), store.toolPins(), ring::current, clock);
            }
            catch (Exception x)
            {
                throw new IllegalStateException("Cannot start the MCP face", x);
            }
            built.push(mcp);
        }
        if (faces.egress())
            buildEgress();
        clientLimit = new ClientLimitFilter(config.server().maxConcurrentRequestsPerClient(), clients,
            egress == null ? ClientIdentity.NONE : egress.agents(), metrics);
    }

    private void buildIngress(String contextPath)
    {
        config.ingress().hostPattern().map(pattern -> Sites.sharedSite(pattern, config.server().publicOrigins())).ifPresent(site ->
            LOG.warn("ingress.host-pattern and server.public-origins are one site, {} (by the last labels of their names): every page of the gateway's "
                + "origin, every path-mode sandbox's among them, is same-site with each sandbox's host, and the browser sends it the sandboxes' cookies. "
                + "Serve sandboxes under a registrable domain of their own, such as {id}.sbx.example-sandboxes.com", site));
        if (config.ingress().pathMode() && config.adminToken().isPresent() && config.server().internalPort().isEmpty())
            LOG.warn("The admin dashboard is served on the listener where path-mode sandboxes are, in their origin: a sandbox's page can open it in a "
                + "window and read what is typed there, the admin token included. Set server.internal-port (the admin API moves there), "
                + "or ingress.path-mode: false with ingress.host-pattern");
        ingress = new Ingress(config.ingress(), contextPath, store.routes(), store.redemptions(), clients, waker(), activity(), metrics, clock);
        webSockets = new WebSocketBridge(ingress, config.server().publicOrigins(), metrics, schedulers, BrowserUpgrade.forThisContainer());
        built.push(webSockets);
        try
        {
            webSockets.start();
        }
        catch (Exception x)
        {
            throw new IllegalStateException("Cannot start the WebSocket tunnels' client", x);
        }
    }

    /** The drain closes what outlives a request: the bridged WebSockets and the MCP client streams. */
    private Drain newDrain()
    {
        List<Drain.Connections> connections = new ArrayList<>();
        if (webSockets != null)
            connections.add(new Drain.Connections("websocket", webSockets::openTunnels, webSockets::restarts));
        if (mcp != null)
            connections.add(new Drain.Connections("mcp_stream", mcp::openStreams, mcp::streamEndings));
        return new Drain(config.drain(), connections, schedulers.timer(), schedulers.workers(), metrics);
    }

    /** What a request for a paused sandbox asks: its manager, when one is configured. */
    private SandboxWaker waker()
    {
        LifecycleConfig.Wake wake = config.lifecycle().wake();
        if (!wake.enabled())
            return SandboxWaker.NONE;
        return new Wakes(wake, store.routes(), store.wakeClaims(), sandboxManager(), schedulers.timer(), metrics);
    }

    /**
     * The platform's sandbox manager, one for waking and pausing: the Sandbox resources scaled
     * through the pod watcher's client, or the manager's URLs.
     */
    private SandboxManager sandboxManager()
    {
        if (sandboxManager == null)
        {
            LifecycleConfig lifecycle = config.lifecycle();
            // The configuration has made sure the watcher runs when it is asked to scale (ConfigLoader).
            sandboxManager = lifecycle.wake().kubernetes() ? watcher.sandboxManager(schedulers.workers())
                : new HttpSandboxManager(lifecycle.wake().url().map(URI::create), lifecycle.idle().url().map(URI::create), lifecycle.wake().token(),
                    schedulers.timer());
        }
        return sandboxManager;
    }

    /**
     * Notes each sandbox's traffic on this replica and publishes it to the store; the replica that
     * leads the lifecycle counts sandboxes by state and pauses idle ones.
     */
    private ActivityRecorder activity()
    {
        LifecycleConfig lifecycle = config.lifecycle();
        ReplicaActivity activity = new ReplicaActivity(ReplicaActivity.replicaName(), lifecycle, store.activity(), schedulers.timer(), metrics, clock);
        built.push(activity);
        activity.start();
        LifecyclePass pass = new LifecyclePass(lifecycle, store.routes(), store.activity(), store.pauseClaims(), pauser(),
            store.leadership("sandbox-lifecycle"), activity::inStep, schedulers, metrics, clock);
        built.push(pass);
        pass.start();
        return activity;
    }

    /** Who idle sandboxes are paused by: the sandbox manager, when idle pause is on. */
    private SandboxManager pauser()
    {
        return config.lifecycle().idle().after().isEmpty() ? SandboxManager.NONE : sandboxManager();
    }

    /** {@code redactor}, knowing this gateway's grant parameter, whatever it is named. */
    private Redactor forLogs(Redactor redactor)
    {
        return redactor.withParameter(config.ingress().grantParam());
    }

    private void buildEgress()
    {
        CredentialsConfig credentialsConfig = config.egress().credentials();
        SecretRing ring = new SecretRing(SecretSources.open(credentialsConfig, clock, schedulers), credentialsConfig.overlap(), clock);
        credentials = new Credentials(credentialsConfig, ring, clock, metrics, schedulers);
        built.push(credentials);
        LeakGuard leaks = new LeakGuard(credentials, metrics);
        credentials.onHeldSecretsChange(() -> redactor = forLogs(leaks.redactor()));
        redactor = forLogs(leaks.redactor());
        try
        {
            AgentPolicies policies = new AgentPolicies(credentialsConfig, store.agentPolicies(), schedulers);
            built.push(policies);
            AgentGate agents = new AgentGate(policies, store.agentBudgets(), metrics, schedulers);
            built.push(agents);
            // The CA's secret is read from the credentials' source, once: a new CA needs a restart, as sandboxes must learn it.
            // A generated one is shared through the store only when a route inspects: a gateway that
            // inspects nothing must start while the store is down, as it always could.
            boolean inspects = config.egress().routes().stream().anyMatch(EgressConfig.Route::inspect);
            InspectionCa ca = InspectionCa.of(config.egress().inspect().ca().map(name -> ring.source().get(name).reveal()),
                inspects ? store.inspectionCa() : InspectionCa.SharedCa.inProcess());
            egress = new Egress(config.egress(), store.sticky(), credentials, leaks, agents, metrics, schedulers, resolver, tracing, ca);
        }
        catch (Exception x)
        {
            throw new IllegalStateException("Cannot start the egress face", x);
        }
        built.push(egress);
    }

    /**
     * Which part of the gateway a servlet context serves. The WAR serves everything in one
     * context; the embedded runner with {@code server.internal-port} serves ingress and health on
     * the public port and the rest on the internal one, so that nothing a sandbox or a browser can
     * reach exposes MCP, egress, admin or metrics.
     */
    public enum Listener
    {
        ALL(true, true),
        PUBLIC(true, false),
        INTERNAL(false, true);

        private final boolean ingress;
        private final boolean internal;

        Listener(boolean ingress, boolean internal)
        {
            this.ingress = ingress;
            this.internal = internal;
        }
    }

    /** Registers Sandgate's servlets and filters in a context that is starting; builds nothing. */
    public void install(ServletContext context, Listener listener)
    {
        FilterRegistration.Dynamic access = context.addFilter("sandgate-access", accessLog);
        access.setAsyncSupported(true);
        access.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC), false, "/*");
        SessionFilter sessions = listener.ingress && ingress != null ? new SessionFilter(ingress) : null;
        // Every page but a sandbox's: none of the gateway's may host a script.
        FilterRegistration.Dynamic noScript = context.addFilter("sandgate-no-script", new GatewayPagesFilter(sessions == null ? request -> false : sessions::serves));
        noScript.setAsyncSupported(true);
        noScript.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, "/*");
        installOperations(context, listener);
        if (config.server().role() == ServerConfig.Role.CONTROLPLANE)
        {
            LOG.info("Sandgate control plane ready: store={} watcher={}", config.store().type().name().toLowerCase(Locale.ROOT), config.watcher().enabled());
            return;
        }
        FilterRegistration.Dynamic perClient = context.addFilter("sandgate-client-limit",
            listener == Listener.INTERNAL ? clientLimit.counting(internalClients) : clientLimit);
        perClient.setAsyncSupported(true);
        perClient.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, "/*");
        boolean sharedThreads = context.getAttribute(JETTY_EXECUTOR) != null;
        if (sessions != null)
            installIngress(context, sessions, sharedThreads);
        if (listener.internal && mcp != null)
        {
            ServletRegistration.Dynamic mcpServlet = context.addServlet("sandgate-mcp", mcp.servlet());
            mcpServlet.setAsyncSupported(true);
            mcpServlet.addMapping("/mcp/*");
            ResourceMetadataServlet metadata = mcp.metadataServlet();
            if (metadata != null)
                context.addServlet("sandgate-mcp-metadata", metadata).addMapping(Authenticator.METADATA_PATH + "/*");
        }
        if (listener.internal && egress != null)
            installEgress(context, sharedThreads);
        if (listener != Listener.INTERNAL)
        {
            LOG.info("Sandgate ready: store={} ingress={} access={} mcp servers={} federations={} config={}", config.store().type().name().toLowerCase(Locale.ROOT),
                ingress == null ? "off" : config.ingress().prefix(), config.ingress().access().name().toLowerCase(Locale.ROOT),
                mcp == null ? "off" : config.mcp().servers().size(), mcp == null ? "off" : config.mcp().federations().size(), config.source());
            if (config.adminToken().isEmpty())
                LOG.info("admin.token is not set: the admin API is off");
            if (egress != null && !config.egress().routes().isEmpty())
                LOG.info("Egress: {} routes over pools {}", config.egress().routes().size(), config.egress().pools().keySet());
        }
    }

    private void installIngress(ServletContext context, SessionFilter sessionFilter, boolean sharedThreads)
    {
        String prefix = config.ingress().prefix();
        // After the access log (registered first), so that its note is there when the line is written.
        FilterRegistration.Dynamic session = context.addFilter("sandgate-ingress-session", sessionFilter);
        session.setAsyncSupported(true);
        sessionFilter.mapOn(session);
        ServletRegistration.Dynamic ingressServlet = context.addServlet(IngressServlet.NAME, new IngressServlet(ingress, webSockets));
        ingressServlet.setAsyncSupported(true);
        ingressServlet.setLoadOnStartup(1);
        ingressServlet.addMapping(prefix + "*");
        ingressServlet.setInitParameter("idleTimeout", Long.toString(config.ingress().idleTimeout().toMillis()));
        // No total timeout: a noVNC session or an SSE stream may last all day.
        ingressServlet.setInitParameter("timeout", "0");
        ingressServlet.setInitParameter("maxConnections", Integer.toString(config.ingress().maxConnectionsPerSandbox()));
        if (!sharedThreads)
            ingressServlet.setInitParameter("maxThreads", "200");
    }

    private void installEgress(ServletContext context, boolean sharedThreads)
    {
        ServletRegistration.Dynamic egressServlet = context.addServlet("sandgate-egress", new EgressServlet(egress));
        egressServlet.setAsyncSupported(true);
        egressServlet.setLoadOnStartup(1);
        egressServlet.addMapping("/egress/*");
        // An exact mapping, which the servlet spec prefers to /egress/*: no target host is named ca.pem.
        context.addServlet("sandgate-egress-ca", new InspectionCaServlet(egress.inspection().ca())).addMapping("/egress/ca.pem");
        // Each exchange gets its route's timeout; the client idle timeout bounds silences.
        egressServlet.setInitParameter("timeout", "0");
        egressServlet.setInitParameter("idleTimeout", Long.toString(config.egress().firstByteTimeout().toMillis()));
        if (!sharedThreads)
            egressServlet.setInitParameter("maxThreads", "200");
    }

    /**
     * Applies a re-read configuration's egress routes and pools, then its credentials and agents (so
     * that a revocation takes effect without a restart). A configuration that does not read (a
     * route naming a pool it does not have, an empty pool, a node id twice) throws
     * {@link io.sandgate.config.ConfigException} and changes nothing.
     */
    private int reloadEgress()
    {
        EgressConfig fresh = reloader.get().egress();
        int routes = egress.reload(fresh);
        credentials.reload(fresh.credentials());
        egress.agentGate().policies().reload(fresh.credentials());
        return routes;
    }

    /** Health and readiness on every listener; metrics and the admin API where internal traffic is served. */
    private void installOperations(ServletContext context, Listener listener)
    {
        HealthServlet health = new HealthServlet(store, drain);
        context.addServlet("sandgate-healthz", health).addMapping("/healthz");
        context.addServlet("sandgate-readyz", health).addMapping("/readyz");
        if (!listener.internal)
            return;
        Supplier<Map<String, Integer>> liveIngress = webSockets == null ? Map::of : webSockets::liveSessions;
        List<AdminServlet.Route> adminRoutes = new ArrayList<>(AdminApi.routes(config, clock, store.routes(), store.sessions(), egress, liveIngress,
            webSockets == null ? id -> 0 : webSockets::closeSandbox, this::reloadEgress, history));
        adminRoutes.addAll(SandboxApi.routes(config.ingress(), store.routes(), store.activity()));
        adminRoutes.addAll(AdminApi.drain(drain));
        if (egress != null)
            adminRoutes.addAll(AgentPolicyApi.routes(egress.agentGate().policies()));
        adminRoutes.addAll(mcp == null ? List.of() : McpPinApi.routes(config.mcp(), mcp.pins()));
        context.addServlet("sandgate-admin", new AdminServlet(config.adminToken(), adminRoutes, new Origins(config.server().publicOrigins())))
            .addMapping("/admin/*");
        context.addServlet("sandgate-metrics", new MetricsServlet(metrics)).addMapping("/metrics");
    }

    /** The ingress face; the embedded runner's ingress handler serves it. Null when off, and on the control plane. */
    public Ingress ingress()
    {
        return ingress;
    }

    /** Who a client of the public listener is, or with {@code internal} of the internal one (the same when there is none). */
    public ClientInfo clients(boolean internal)
    {
        return internal ? internalClients : clients;
    }

    /** The per-client limit, for front-ends outside the servlets; null on the control plane. */
    public ClientLimitFilter clientLimit()
    {
        return clientLimit;
    }

    /** Counts and logs requests, for front-ends outside the servlets. */
    public AccessLog accessLog()
    {
        return accessLog;
    }

    /** The egress face; the embedded runner's forward-proxy mode routes through it. Null on the control plane. */
    public Egress egress()
    {
        return egress;
    }

    /** Where spans go, for front-ends outside the servlets. */
    public Tracing tracing()
    {
        return tracing;
    }

    public SandgateConfig config()
    {
        return config;
    }

    public Store store()
    {
        return store;
    }

    public PrometheusMeterRegistry metrics()
    {
        return metrics;
    }

    /** How this replica leaves; the embedded runner attaches its listeners and stops when it has finished. */
    public Drain drain()
    {
        return drain;
    }

    /**
     * Ends long-lived client streams (MCP SSE, WebSocket tunnels with 1001) before a graceful stop,
     * which would otherwise wait for them until its timeout or cut them without a word: their
     * clients reconnect to another replica and resume.
     */
    public void endStreams()
    {
        if (mcp != null)
            mcp.endStreams();
        if (webSockets != null)
            webSockets.endTunnels();
    }

    @Override
    public void close()
    {
        while (!built.isEmpty())
        {
            try
            {
                built.pop().close();
            }
            catch (Exception x)
            {
                LOG.debug("Close failed", x);
            }
        }
        store.close();
        schedulers.close();
        metrics.close();
    }
}
