package io.sandgate.egress;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.sandgate.config.EgressConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.net.Resolver;
import io.sandgate.net.SsrfGuard;
import io.sandgate.tracing.Spans;
import io.sandgate.tracing.Tracing;
import io.sandgate.web.ClientIdentity;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The egress face without its front-ends, put together from its parts: the {@link RouteTable},
 * the {@link NodePools} with their {@link NodeSelector}, the {@link NodeClients}, the
 * {@link HealthProber}, the {@link EgressMetrics}, the {@link FailurePolicy} and the
 * {@link EgressPlanner}. The base-URL servlet and the CONNECT handler plan each call here and
 * carry the plan out; the composition root and the admin API reload routes and pools, and read the
 * pools.
 */
public final class Egress implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Egress.class);

    private final RouteTable routes;
    private final NodePools pools;
    private final NodeClients clients;
    private final EgressMetrics metrics;
    private final FailurePolicy policy;
    private final TargetFailures targetFailures = new TargetFailures();
    private final EgressPlanner planner;
    private final DnsLookups lookups;
    private final LeakGuard leaks;
    private final Credentials credentials;
    private final AgentGate agents;
    private final Schedulers schedulers;
    private final HealthProber prober;
    /** Null when tracing is off. */
    private final Tracer tracer;
    private final TlsInspection inspection;

    /**
     * @param sticky where sticky sessions keep their pins
     * @param credentials the real keys that replace internal tokens
     * @param leaks the secret-leak scanner
     * @param schedulers the gateway's threads: probes, deadlines and retry back-offs run there
     * @param resolver how target names are resolved for the SSRF guard, {@link Resolver#SYSTEM} outside tests
     * @param tracing where the spans of attempts go
     * @param agents each agent's policy, held to on every call the planner plans
     * @param ca the CA that signs the leaves of inspected CONNECT tunnels
     */
    public Egress(EgressConfig config, StickySessions sticky, Credentials credentials, LeakGuard leaks, AgentGate agents, MeterRegistry registry,
                  Schedulers schedulers, Resolver resolver, Tracing tracing, InspectionCa ca) throws Exception
    {
        this.agents = agents;
        this.inspection = new TlsInspection(config.inspect(), ca, registry);
        this.tracer = tracing.tracer();
        this.leaks = leaks;
        this.credentials = credentials;
        this.schedulers = schedulers;
        this.routes = new RouteTable(config.routes());
        this.pools = new NodePools(config, NodeSelector.sticky(sticky, NodeSelector.weighted()));
        this.metrics = new EgressMetrics(registry, pools);
        this.policy = new FailurePolicy(config, metrics);
        this.lookups = new DnsLookups(config.dnsMaxInFlight(), config.dnsTimeout(), schedulers.timer());
        this.planner = new EgressPlanner(routes, new SsrfGuard(config.ssrfAllow(), resolver), lookups, credentials, leaks, agents, config.connectTimeout(),
            config.connectPorts());
        this.clients = new NodeClients(config, schedulers, metrics);
        clients.start(pools.nodes());
        this.prober = new HealthProber(config.health(), pools, clients, schedulers);
        prober.start();
    }

    /**
     * Puts a re-read configuration's routes and pools in force without a restart. The configuration
     * has been checked whole as it was read (every route names one of its pools, no pool is empty,
     * node ids are unique), and the new nodes' clients start before anything changes: a reload
     * that fails changes nothing.
     *
     * <p>Pools are reconciled (see {@link NodePools#reconcile}): a node that stays keeps its health
     * and its connections, a changed weight or region applies, a new node is probed at once. A
     * removed node gets no new exchange; those under way on it finish, and its clients stop once
     * idle, or after twice the longest route timeout (an exchange is cut at 1.5 times its route's).
     * A sticky session pinned to it moves at its next request, announced as any re-pin. A CONNECT
     * tunnel through it lives on until either end closes it. The other egress settings (health
     * and probes, client timeouts and limits, trust store, SSRF guard, retry budget) are those of
     * the start.</p>
     *
     * @return how many routes are now in force
     * @throws IllegalStateException when a new node's client cannot start; nothing changed
     */
    public synchronized int reload(EgressConfig fresh)
    {
        NodePools.Reconciled reconciled = pools.reconcile(fresh.pools());
        try
        {
            clients.start(reconciled.added());
        }
        catch (Exception x)
        {
            throw new IllegalStateException("egress reload refused, nothing changed: a new node's client did not start: " + x, x);
        }
        Duration grace = routes.longestTimeout().multipliedBy(2);
        // Pools before routes: a request that finds a new route finds the pool it names. One planned
        // by the old table just before may find its pool gone, and is told no node is available.
        pools.apply(reconciled);
        int count = routes.reload(fresh.routes());
        metrics.poolsReloaded();
        prober.probeNow(reconciled.added());
        for (NodeState removed : reconciled.removed())
            clients.retire(removed, grace);
        LOG.info("Egress pools reloaded: {} pools, {} nodes added, {} removed", fresh.pools().size(), reconciled.added().size(), reconciled.removed().size());
        return count;
    }

    /** The pools as the admin view shows them. */
    public List<Map<String, Object>> describe()
    {
        return metrics.describe();
    }

    /**
     * Who an egress request counts as for per-client limits: the agent whose internal token it
     * carries, from wherever it comes. Other requests, and egress requests without a valid token,
     * count by their client's address.
     */
    public ClientIdentity agents()
    {
        return request -> EgressServlet.PATH.equals(request.getServletPath()) ? credentials.agentOf(RequestHeaders.of(request)) : Optional.empty();
    }

    EgressPlanner planner()
    {
        return planner;
    }

    /** TLS interception of CONNECT tunnels on the routes that ask for it. */
    public TlsInspection inspection()
    {
        return inspection;
    }

    /** An exchange of the plan starts: it earns its share of the retry budget, and no node is chosen yet. */
    Attempts start(EgressPlan plan)
    {
        return start(plan, null);
    }

    /**
     * As {@link #start(EgressPlan)}, for an exchange traced in {@code span}: each attempt is a span of
     * its own, the request span's child.
     *
     * @param span the request's server span; null when tracing is off
     */
    Attempts start(EgressPlan plan, Span span)
    {
        policy.exchangeStarted();
        return new Attempts(plan, pools, metrics, targetFailures, tracer == null || span == null ? AttemptSpans.NONE : new AttemptSpans(tracer, span, plan));
    }

    /**
     * The server span of a CONNECT, continuing the agent's trace when its CONNECT carries a
     * {@code traceparent}; null when tracing is off. It ends when the tunnel opens or is refused:
     * what goes through the tunnel is the agent's TLS, which the gateway neither reads nor traces.
     */
    Span connectSpan(Function<String, String> header)
    {
        return tracer == null ? null : Spans.server(tracer, "CONNECT", header);
    }

    /** The agents' policies and budgets. */
    public AgentGate agentGate()
    {
        return agents;
    }

    FailurePolicy policy()
    {
        return policy;
    }

    NodeClients clients()
    {
        return clients;
    }

    LeakGuard leaks()
    {
        return leaks;
    }

    EgressMetrics metrics()
    {
        return metrics;
    }

    /**
     * Runs the task on a worker after the delay, unless the returned handle is cancelled first. A
     * worker, not the timer: aborting an exchange runs its failure handling at once, which may
     * write to the agent or move a sticky pin in the store.
     */
    ScheduledFuture<?> later(long millis, Runnable task)
    {
        return schedulers.timer().schedule(() -> schedulers.workers().execute(task), millis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() throws Exception
    {
        prober.close();
        clients.close();
        lookups.close();
        LOG.debug("Egress stopped");
    }
}
