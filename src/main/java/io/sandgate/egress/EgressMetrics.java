package io.sandgate.egress;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * What operators see of the egress face: the meters (pool and node health as gauges, requests by
 * outcome, retries, latency) and the pools as the admin API and the dashboard show them. The
 * gauges follow the pools through reloads (see {@link #poolsReloaded}).
 */
final class EgressMetrics
{
    private static final String REQUESTS = "sandgate.egress.requests";
    /** Histogram buckets of the node timings: loopback and LAN nodes to slow far regions. */
    private static final Duration[] TIMING_BUCKETS = Stream.of(1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000)
        .map(Duration::ofMillis).toArray(Duration[]::new);

    /** A phase of an exchange through a node, timed per node to tell a slow node from a slow target. */
    enum Phase
    {
        /** The TCP connect to the node, the probes' connections included. */
        CONNECT("sandgate.egress.node.connect", "TCP connect to the egress node"),
        /** The TLS handshake with the target through the node's tunnel, from the TLS connection's start (millisecond resolution). */
        TLS("sandgate.egress.node.tls", "TLS handshake with the target through the egress node"),
        /** From the request (http) or the CONNECT (tunnels) sent to the first byte of the answer. */
        FIRST_BYTE("sandgate.egress.node.first.byte", "Request sent to first byte answered, through the egress node");

        final String metric;
        final String description;

        Phase(String metric, String description)
        {
            this.metric = metric;
            this.description = description;
        }
    }

    private final MeterRegistry registry;
    private final NodePools pools;
    private final Counter retries;
    private final Counter retriesDenied;
    /** The gauges exported, by pool name ({@code [pool]}) and by node ({@code [pool, node]}). */
    private final Map<List<String>, List<Meter>> gauges = new HashMap<>();

    EgressMetrics(MeterRegistry registry, NodePools pools)
    {
        this.registry = registry;
        this.pools = pools;
        this.retries = Counter.builder("sandgate.egress.retries").description("Egress requests retried on another node").register(registry);
        this.retriesDenied = Counter.builder("sandgate.egress.retries.denied").description("Retries refused by the retry budget").register(registry);
        poolsReloaded();
    }

    /**
     * Exports the series of the pools and nodes now in force, and no longer those of the pools and
     * nodes a reload removed (their request counts go too: a scrape must not show a node that is
     * gone as if it were idle). The gauges look their pool or node up by name at each read, so
     * those that stay keep their series across a reload, and a node at a new address under its old
     * id continues its own.
     */
    synchronized void poolsReloaded()
    {
        Set<List<String>> current = new HashSet<>();
        for (PoolState pool : pools.all())
        {
            String name = pool.pool().name();
            current.add(List.of(name));
            gauges.computeIfAbsent(List.of(name), key -> List.of(
                Gauge.builder("sandgate.egress.pool.panic", pools, p -> poolValue(p.pool(name), s -> s.isPanic() ? 1 : 0)).tag("pool", name)
                    .description("1 while no node of the pool is healthy and all are used").register(registry),
                Gauge.builder("sandgate.egress.pool.failover", pools, p -> poolValue(p.pool(name), s -> s.regionFailing(s.pool().region()) ? 1 : 0)).tag("pool", name)
                    .description("1 while the pool has failed over from its preferred region to the others").register(registry)));
            for (NodeState node : pool.nodes())
            {
                String id = node.node().id();
                current.add(List.of(name, id));
                gauges.computeIfAbsent(List.of(name, id), key -> nodeGauges(name, id));
            }
        }
        gauges.entrySet().removeIf(entry ->
        {
            if (current.contains(entry.getKey()))
                return false;
            entry.getValue().forEach(registry::remove);
            if (entry.getKey().size() == 2)
            {
                String[] tags = {"pool", entry.getKey().get(0), "node", entry.getKey().get(1)};
                registry.find(REQUESTS).tags(tags).meters().forEach(registry::remove);
                for (Phase phase : Phase.values())
                    registry.find(phase.metric).tags(tags).meters().forEach(registry::remove);
            }
            return true;
        });
    }

    private List<Meter> nodeGauges(String pool, String id)
    {
        return List.of(
            Gauge.builder("sandgate.egress.node.weight", pools, p -> nodeValue(p, pool, id, n -> n.weight(System.nanoTime()))).tags("pool", pool, "node", id)
                .description("Current selection weight (0 when ejected)").register(registry),
            Gauge.builder("sandgate.egress.node.ejected", pools, p -> nodeValue(p, pool, id, n -> n.isEjected() ? 1 : 0)).tags("pool", pool, "node", id).register(registry),
            Gauge.builder("sandgate.egress.node.jitter.seconds", pools, p -> nodeValue(p, pool, id, n -> n.jitterNanos() / 1e9)).tags("pool", pool, "node", id).register(registry),
            Gauge.builder("sandgate.egress.node.success.rate", pools, p -> nodeValue(p, pool, id, NodeState::successRate)).tags("pool", pool, "node", id).register(registry),
            Gauge.builder("sandgate.egress.node.ejections", pools, p -> nodeValue(p, pool, id, NodeState::ejections)).tags("pool", pool, "node", id).register(registry));
    }

    /** A pool's value, NaN in the moment between a reload removing it and its gauge going. */
    private static double poolValue(PoolState pool, ToDoubleFunction<PoolState> value)
    {
        return pool == null ? Double.NaN : value.applyAsDouble(pool);
    }

    private static double nodeValue(NodePools pools, String pool, String id, ToDoubleFunction<NodeState> value)
    {
        PoolState state = pools.pool(pool);
        NodeState node = state == null ? null : state.node(id);
        return node == null ? Double.NaN : value.applyAsDouble(node);
    }

    void retried()
    {
        retries.increment();
    }

    void retryDenied()
    {
        retriesDenied.increment();
    }

    /**
     * Counts how one attempt through the node ended; not for a node a reload took out while the
     * attempt was under way, whose series are gone and must not come back.
     */
    void attempt(String pool, NodeState node, FailurePolicy.Outcome outcome)
    {
        if (pools.serves(pool, node))
            registry.counter(REQUESTS, "pool", pool, "node", node.node().id(), "outcome", outcome.label()).increment();
    }

    /** How long a phase took through the node; not for a node a reload took out, as {@link #attempt}. */
    void timed(NodeState node, Phase phase, long nanos)
    {
        if (nanos < 0 || !pools.serves(node.pool(), node))
            return;
        Timer.builder(phase.metric).description(phase.description).tags("pool", node.pool(), "node", node.node().id())
            .serviceLevelObjectives(TIMING_BUCKETS).register(registry).record(nanos, TimeUnit.NANOSECONDS);
    }

    /** The exchange times of a route, retries included. */
    Timer latency(String route)
    {
        return Timer.builder("sandgate.egress.latency").tag("route", route).publishPercentiles(0.5, 0.99)
            .description("Egress exchange time, retries included").register(registry);
    }

    /** The pools as the admin view shows them. */
    List<Map<String, Object>> describe()
    {
        long now = System.nanoTime();
        List<Map<String, Object>> result = new ArrayList<>();
        for (PoolState pool : pools.all())
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
}
