package io.sandgate.egress;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.sandgate.config.EgressConfig;
import io.sandgate.net.Resolver;
import io.sandgate.net.SsrfGuard;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The egress face without the servlet: the route table, the pools with their node states, one
 * HttpClient per node (its own connection pool, the node as its HTTP forward proxy, CONNECT for
 * https targets), the probes, sticky pins and the retry budget.
 */
public final class Egress implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Egress.class);

    private final EgressConfig config;
    private final StickySessions sticky;
    private final MeterRegistry registry;
    private final Map<String, PoolState> pools = new LinkedHashMap<>();
    /** The route table: replaced whole on reload, read without locks on every request. */
    private volatile List<EgressConfig.Route> routes;
    private final Map<String, HttpClient> clients = new LinkedHashMap<>();
    private final Map<String, HttpClient> probeClients = new LinkedHashMap<>();
    private final RetryBudget budget;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "sandgate-egress-health"));
    private final ExecutorService probes = Executors.newCachedThreadPool(r -> daemon(r, "sandgate-egress-probe"));
    /** Per-exchange deadlines, cancelled when the exchange ends so none lingers for its full timeout. */
    private final java.util.concurrent.ScheduledThreadPoolExecutor deadlines = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> daemon(r, "sandgate-egress-deadline"));
    private final Counter retries;
    private final SsrfGuard guard;
    private final Counter retriesDenied;

    public Egress(EgressConfig config, StickySessions sticky, MeterRegistry registry) throws Exception
    {
        this.config = config;
        this.sticky = sticky;
        this.registry = registry;
        this.budget = new RetryBudget(config.retryBudget());
        this.guard = new SsrfGuard(config.ssrfAllow(), Resolver.SYSTEM);
        deadlines.setRemoveOnCancelPolicy(true);
        this.routes = config.routes();
        this.retries = Counter.builder("sandgate.egress.retries").description("Egress requests retried on another node").register(registry);
        this.retriesDenied = Counter.builder("sandgate.egress.retries.denied").description("Retries refused by the retry budget").register(registry);
        for (EgressConfig.Pool pool : config.pools().values())
        {
            PoolState state = new PoolState(pool, config.health());
            pools.put(pool.name(), state);
            Gauge.builder("sandgate.egress.pool.panic", state, p -> p.isPanic() ? 1 : 0).tag("pool", pool.name())
                .description("1 while no node of the pool is healthy and all are used").register(registry);
            for (NodeState node : state.nodes())
            {
                String id = node.node().id();
                clients.put(id, client(node.node()));
                probeClients.put(id, client(node.node()));
                Gauge.builder("sandgate.egress.node.weight", node, n -> n.weight(System.nanoTime())).tags("pool", pool.name(), "node", id)
                    .description("Current selection weight (0 when ejected)").register(registry);
                Gauge.builder("sandgate.egress.node.ejected", node, n -> n.isEjected() ? 1 : 0).tags("pool", pool.name(), "node", id).register(registry);
                Gauge.builder("sandgate.egress.node.jitter.seconds", node, n -> n.jitterNanos() / 1e9).tags("pool", pool.name(), "node", id).register(registry);
                Gauge.builder("sandgate.egress.node.success.rate", node, NodeState::successRate).tags("pool", pool.name(), "node", id).register(registry);
                Gauge.builder("sandgate.egress.node.ejections", node, n -> n.ejections()).tags("pool", pool.name(), "node", id).register(registry);
            }
        }
        long tcp = config.health().tcpInterval().toMillis();
        scheduler.scheduleWithFixedDelay(this::tcpProbes, 0, tcp, TimeUnit.MILLISECONDS);
        if (config.health().httpUrl().isPresent())
        {
            long http = config.health().httpInterval().toMillis();
            scheduler.scheduleWithFixedDelay(this::httpProbes, 0, http, TimeUnit.MILLISECONDS);
        }
    }

    private static Thread daemon(Runnable r, String name)
    {
        Thread thread = new Thread(r, name);
        thread.setDaemon(true);
        return thread;
    }

    private HttpClient client(EgressConfig.Node node) throws Exception
    {
        // Targets are pinned to the address the SSRF guard checked; TLS still verifies the name.
        SslContextFactory.Client tls = new PinnedSslContextFactory();
        config.trustStore().ifPresent(path ->
        {
            tls.setTrustStorePath(path);
            tls.setTrustStoreType("PKCS12");
            config.trustStorePassword().ifPresent(p -> tls.setTrustStorePassword(p.reveal()));
        });
        ClientConnector connector = new ClientConnector();
        connector.setSslContextFactory(tls);
        connector.setConnectTimeout(config.connectTimeout());
        connector.setSelectors(1);
        HttpClient client = new PinnedHttpClient(new org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP(connector));
        client.getProxyConfiguration().addProxy(new PinnedHttpProxy(node.host(), node.port()));
        // A gateway relays: no redirects followed, no cookies kept across agents, content untouched.
        client.setFollowRedirects(false);
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.setConnectTimeout(config.connectTimeout().toMillis());
        client.setIdleTimeout(config.firstByteTimeout().toMillis());
        client.setDestinationIdleTimeout(60_000);
        client.setMaxConnectionsPerDestination(config.maxConnectionsPerNode());
        client.start();
        client.getContentDecoderFactories().clear();
        client.getProtocolHandlers().clear();
        return client;
    }

    EgressConfig config()
    {
        return config;
    }

    /** The SSRF guard every target passes before a node is asked to reach it. */
    SsrfGuard guard()
    {
        return guard;
    }

    /** The first route that serves this host and task type, or empty. */
    Optional<EgressConfig.Route> route(String host, String taskType)
    {
        String lower = host.toLowerCase(Locale.ROOT);
        for (EgressConfig.Route route : routes)
        {
            if (route.matches(lower, taskType))
                return Optional.of(route);
        }
        return Optional.empty();
    }

    /**
     * Replaces the route table without a restart. Pools and nodes are not reloaded (their health
     * state and connection pools live on); a table naming a pool that does not exist is refused.
     *
     * @return how many routes are now in force
     */
    public int reloadRoutes(List<EgressConfig.Route> newRoutes)
    {
        for (EgressConfig.Route route : newRoutes)
        {
            if (!pools.containsKey(route.pool()))
                throw new IllegalArgumentException("egress.routes: upstream " + route.pool() + " (expected: one of the running pools " + pools.keySet()
                    + "; changing pools needs a restart)");
        }
        routes = List.copyOf(newRoutes);
        LOG.info("Egress route table reloaded: {} routes", routes.size());
        return routes.size();
    }

    PoolState pool(String name)
    {
        return pools.get(name);
    }

    /** Whether the node's region is failing over now (its in-flight exchanges get extra time). */
    boolean regionFailingOver(String pool, NodeState node)
    {
        PoolState state = pools.get(pool);
        return state != null && state.regionFailing(node.node().region());
    }

    HttpClient client(String nodeId)
    {
        return clients.get(nodeId);
    }

    /** A choice of node, and whether a sticky pin had to move. */
    record Choice(NodeState node, boolean repinned)
    {
    }

    /** Picks the node for an attempt: the sticky pin while its node is healthy, otherwise a weighted choice. */
    Choice choose(EgressConfig.Route route, String stickyKey, Set<String> tried)
    {
        PoolState pool = pools.get(route.pool());
        long now = System.nanoTime();
        boolean pinned = route.sticky() && stickyKey != null && tried.isEmpty();
        boolean repinned = false;
        if (pinned)
        {
            Optional<String> current = sticky.get(stickyKey, route.stickyTtl());
            if (current.isPresent())
            {
                NodeState node = pool.node(current.get());
                if (node != null && !node.isEjected())
                    return new Choice(node, false);
                repinned = true;
            }
        }
        NodeState node = pool.pick(tried, now);
        if (node != null && (pinned || (route.sticky() && stickyKey != null)))
            sticky.put(stickyKey, node.node().id(), route.stickyTtl());
        return node == null ? null : new Choice(node, repinned);
    }

    /** Runs the task after the delay unless the returned handle is cancelled first. */
    java.util.concurrent.ScheduledFuture<?> deadline(long millis, Runnable task)
    {
        return deadlines.schedule(task, millis, TimeUnit.MILLISECONDS);
    }

    void requestStarted()
    {
        budget.deposit();
    }

    boolean allowRetry()
    {
        if (budget.tryWithdraw())
        {
            retries.increment();
            return true;
        }
        retriesDenied.increment();
        return false;
    }

    void recordResult(String pool, NodeState node, String outcome, boolean nodeOk)
    {
        node.requestResult(nodeOk, System.nanoTime());
        registry.counter("sandgate.egress.requests", "pool", pool, "node", node.node().id(), "outcome", outcome).increment();
    }

    Timer latency(String host)
    {
        return Timer.builder("sandgate.egress.latency").tag("route", host).publishPercentiles(0.5, 0.99)
            .description("Egress exchange time, retries included").register(registry);
    }

    private void tcpProbes()
    {
        for (PoolState pool : pools.values())
        {
            for (NodeState node : pool.nodes())
                probes.execute(() -> node.tcpProbe(tcpProbe(node.node()), System.nanoTime()));
        }
    }

    /** Connects to the node itself: the probe never rides on the traffic it judges. */
    private boolean tcpProbe(EgressConfig.Node node)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(node.host(), node.port()), (int)config.health().tcpTimeout().toMillis());
            return true;
        }
        catch (Exception x)
        {
            return false;
        }
    }

    private void httpProbes()
    {
        String url = config.health().httpUrl().orElseThrow();
        for (PoolState pool : pools.values())
        {
            for (NodeState node : pool.nodes())
            {
                probes.execute(() ->
                {
                    long start = System.nanoTime();
                    boolean ok;
                    try
                    {
                        ContentResponse response = probeClients.get(node.node().id()).newRequest(url)
                            .timeout(config.health().slowTls().toMillis() * 2, TimeUnit.MILLISECONDS).send();
                        ok = response.getStatus() < 400;
                    }
                    catch (Exception x)
                    {
                        ok = false;
                    }
                    node.httpProbe(ok, System.nanoTime() - start, System.nanoTime());
                });
            }
        }
    }

    /** The pools as the admin view shows them. */
    public List<Map<String, Object>> describe()
    {
        long now = System.nanoTime();
        List<Map<String, Object>> result = new ArrayList<>();
        for (PoolState pool : pools.values())
        {
            List<Map<String, Object>> nodes = new ArrayList<>();
            for (NodeState node : pool.nodes())
            {
                Map<String, Object> n = new LinkedHashMap<>();
                n.put("id", node.node().id());
                n.put("address", node.node().host() + ":" + node.node().port());
                n.put("region", node.node().region());
                n.put("configuredWeight", node.node().weight());
                n.put("weight", node.weight(now));
                n.put("ejected", node.isEjected());
                n.put("ejection", node.ejection().name().toLowerCase(Locale.ROOT));
                n.put("recoveryShare", node.rampShare(now));
                n.put("jitterMs", node.jitterNanos() / 1e6);
                n.put("successRate", node.successRate());
                n.put("ejections", node.ejections());
                nodes.add(n);
            }
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("name", pool.pool().name());
            p.put("region", pool.pool().region());
            p.put("panic", pool.isPanic());
            p.put("regionFailingOver", pool.regionFailing(pool.pool().region()));
            p.put("nodes", nodes);
            result.add(p);
        }
        return result;
    }

    @Override
    public void close() throws Exception
    {
        scheduler.shutdownNow();
        probes.shutdownNow();
        deadlines.shutdownNow();
        for (HttpClient client : clients.values())
            client.stop();
        for (HttpClient client : probeClients.values())
            client.stop();
        LOG.debug("Egress stopped");
    }
}
