package io.sandgate;

import java.time.Clock;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sandgate.admin.AdminApi;
import io.sandgate.admin.AdminServlet;
import io.sandgate.config.CredentialsConfig;
import io.sandgate.config.EgressConfig;
import io.sandgate.config.SandgateConfig;
import io.sandgate.config.ServerConfig;
import io.sandgate.controlplane.PodWatcher;
import io.sandgate.core.Schedulers;
import io.sandgate.egress.Credentials;
import io.sandgate.egress.Egress;
import io.sandgate.egress.EgressServlet;
import io.sandgate.egress.LeakGuard;
import io.sandgate.ingress.Ingress;
import io.sandgate.ingress.IngressServlet;
import io.sandgate.leak.Redactor;
import io.sandgate.mcp.McpGateway;
import io.sandgate.mcp.McpServlet;
import io.sandgate.secrets.SecretRing;
import io.sandgate.secrets.SecretSources;
import io.sandgate.store.Store;
import io.sandgate.ops.AccessLogFilter;
import io.sandgate.ops.HealthServlet;
import io.sandgate.ops.MetricsServlet;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterRegistration;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletRegistration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: builds every component from one validated configuration and installs the
 * servlets. The WAR's listener and the embedded runner both come through here, so the two
 * artifacts cannot drift apart.
 */
public final class Sandgate implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Sandgate.class);
    /** Jetty publishes its thread pool under this name; the proxy client shares it when present. */
    private static final String JETTY_EXECUTOR = "org.eclipse.jetty.server.Executor";

    private final SandgateConfig config;
    private final PrometheusMeterRegistry metrics;
    private final Store store;
    /** The gateway's background threads, shared by every component. */
    private final Schedulers schedulers = Schedulers.create();
    /** Reads the configuration again from the same sources, for reloads. */
    private final Supplier<SandgateConfig> reloader;
    /** Faces started by {@link #install}, closed with the gateway. */
    private final List<AutoCloseable> started = new CopyOnWriteArrayList<>();
    private volatile Egress egress;
    private volatile Credentials credentials;
    /** One redaction for logs and the admin API; it knows the real keys once the egress face has read them. */
    private volatile Redactor redactor = Redactor.defaults();

    private Sandgate(SandgateConfig config, Supplier<SandgateConfig> reloader, PrometheusMeterRegistry metrics, Store store)
    {
        this.config = config;
        this.reloader = reloader;
        this.metrics = metrics;
        this.store = store;
    }

    public static Sandgate create(SandgateConfig config)
    {
        return create(config, () -> config);
    }

    /**
     * @param reloader reads the configuration again from its sources; admin reloads use it
     */
    public static Sandgate create(SandgateConfig config, Supplier<SandgateConfig> reloader)
    {
        PrometheusMeterRegistry metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new JvmMemoryMetrics().bindTo(metrics);
        new JvmGcMetrics().bindTo(metrics);
        new JvmThreadMetrics().bindTo(metrics);
        new ProcessorMetrics().bindTo(metrics);
        return new Sandgate(config, reloader, metrics, Store.create(config, metrics));
    }

    /** Registers Sandgate's servlets and filter in a context that is starting. */
    public void install(ServletContext context)
    {
        if (config.watcher().enabled())
        {
            PodWatcher watcher = new PodWatcher(config.watcher(), config.ingress(), store.routes(), store.leadership("pod-watcher"), metrics);
            started.add(watcher);
            watcher.start();
        }
        if (config.server().role() == ServerConfig.Role.CONTROLPLANE)
        {
            installOperations(context, null, Map::of);
            LOG.info("Sandgate control plane ready: store={} watcher={}", config.store().type().name().toLowerCase(Locale.ROOT), config.watcher().enabled());
            return;
        }
        Ingress ingress = new Ingress(config.ingress(), context.getContextPath(), store.routes(), metrics, Clock.systemUTC());
        FilterRegistration.Dynamic access = context.addFilter("sandgate-access", new AccessLogFilter(metrics, config.accessLog(), () -> redactor));
        access.setAsyncSupported(true);
        access.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, "/*");

        String prefix = config.ingress().prefix();
        ServletRegistration.Dynamic ingressServlet = context.addServlet("sandgate-ingress", new IngressServlet(ingress, metrics));
        ingressServlet.setAsyncSupported(true);
        ingressServlet.setLoadOnStartup(1);
        ingressServlet.addMapping(prefix + "*");
        ingressServlet.setInitParameter("idleTimeout", Long.toString(config.ingress().idleTimeout().toMillis()));
        // No total timeout: a noVNC session or an SSE stream may last all day.
        ingressServlet.setInitParameter("timeout", "0");
        ingressServlet.setInitParameter("maxConnections", Integer.toString(config.ingress().maxConnectionsPerSandbox()));
        if (context.getAttribute(JETTY_EXECUTOR) == null)
            ingressServlet.setInitParameter("maxThreads", "200");

        McpGateway mcp;
        try
        {
            mcp = new McpGateway(config.mcp(), store.sessions(), ingress.clients(), metrics);
        }
        catch (Exception x)
        {
            throw new IllegalStateException("Cannot start the MCP face", x);
        }
        started.add(mcp);
        ServletRegistration.Dynamic mcpServlet = context.addServlet("sandgate-mcp", new McpServlet(mcp));
        mcpServlet.setAsyncSupported(true);
        mcpServlet.addMapping("/mcp/*");

        CredentialsConfig credentialsConfig = config.egress().credentials();
        credentials = new Credentials(credentialsConfig,
            new SecretRing(SecretSources.open(credentialsConfig, Clock.systemUTC()), credentialsConfig.overlap(), Clock.systemUTC()), Clock.systemUTC(), metrics,
            schedulers);
        started.add(credentials);
        LeakGuard leaks = new LeakGuard(credentials, metrics);
        credentials.onHeldKeysChange(() -> redactor = leaks.redactor());
        redactor = leaks.redactor();
        Egress egress;
        try
        {
            egress = new Egress(config.egress(), store.sticky(), credentials, leaks, metrics, schedulers);
        }
        catch (Exception x)
        {
            throw new IllegalStateException("Cannot start the egress face", x);
        }
        started.add(egress);
        this.egress = egress;
        ServletRegistration.Dynamic egressServlet = context.addServlet("sandgate-egress", new EgressServlet(egress));
        egressServlet.setAsyncSupported(true);
        egressServlet.setLoadOnStartup(1);
        egressServlet.addMapping("/egress/*");
        // Each exchange gets its route's timeout; the client idle timeout bounds silences.
        egressServlet.setInitParameter("timeout", "0");
        egressServlet.setInitParameter("idleTimeout", Long.toString(config.egress().firstByteTimeout().toMillis()));
        if (context.getAttribute(JETTY_EXECUTOR) == null)
            egressServlet.setInitParameter("maxThreads", "200");

        installOperations(context, egress, ingress::liveSessions);
        LOG.info("Sandgate ready: store={} ingress={} access={} mcp servers={} config={}", config.store().type().name().toLowerCase(Locale.ROOT),
            prefix, config.ingress().access().name().toLowerCase(Locale.ROOT), config.mcp().servers().size(), config.source());
        if (config.adminToken().isEmpty())
            LOG.info("admin.token is not set: the admin API is off");
        if (!config.egress().routes().isEmpty())
            LOG.info("Egress: {} routes over pools {}", config.egress().routes().size(), config.egress().pools().keySet());
    }

    /**
     * Applies a re-read configuration's egress routes, then its credentials and agents (so that a
     * revocation takes effect without a restart). A table naming an unknown pool changes nothing.
     */
    private int reloadEgress()
    {
        EgressConfig fresh = reloader.get().egress();
        int routes = egress.reloadRoutes(fresh.routes());
        credentials.reload(fresh.credentials());
        return routes;
    }

    /** Health, readiness, metrics and the admin API: every role serves these. */
    private void installOperations(ServletContext context, Egress egress, Supplier<Map<String, Integer>> liveIngress)
    {
        context.addServlet("sandgate-admin", new AdminServlet(config.adminToken(),
            AdminApi.routes(config, store.routes(), store.sessions(), egress, liveIngress, this::reloadEgress))).addMapping("/admin/*");
        HealthServlet health = new HealthServlet(store);
        context.addServlet("sandgate-healthz", health).addMapping("/healthz");
        context.addServlet("sandgate-readyz", health).addMapping("/readyz");
        context.addServlet("sandgate-metrics", new MetricsServlet(metrics)).addMapping("/metrics");
    }

    /** The egress face once installed; the embedded runner's forward-proxy mode routes through it. */
    public Egress egress()
    {
        return egress;
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

    /**
     * Ends long-lived client streams (MCP SSE) before a graceful stop, which would otherwise wait
     * for them until its timeout: their clients reconnect to another replica and resume.
     */
    public void endStreams()
    {
        for (AutoCloseable closeable : started)
        {
            if (closeable instanceof McpGateway mcp)
                mcp.endStreams();
        }
    }

    @Override
    public void close()
    {
        for (AutoCloseable closeable : started)
        {
            try
            {
                closeable.close();
            }
            catch (Exception x)
            {
                LOG.debug("Close failed", x);
            }
        }
        schedulers.close();
        store.close();
        metrics.close();
    }
}
