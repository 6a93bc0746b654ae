package io.sandgate.egress;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * What operators see of the egress face: the meters (pool and node health as gauges, requests by
 * outcome, retries, latency) and the pools as the admin API and the dashboard show them.
 */
final class EgressMetrics
{
    private final MeterRegistry registry;
    private final NodePools pools;
    private final Counter retries;
    private final Counter retriesDenied;

    EgressMetrics(MeterRegistry registry, NodePools pools)
    {
        this.registry = registry;
        this.pools = pools;
        this.retries = Counter.builder("sandgate.egress.retries").description("Egress requests retried on another node").register(registry);
        this.retriesDenied = Counter.builder("sandgate.egress.retries.denied").description("Retries refused by the retry budget").register(registry);
        for (PoolState pool : pools.all())
        {
            String name = pool.pool().name();
            Gauge.builder("sandgate.egress.pool.panic", pool, p -> p.isPanic() ? 1 : 0).tag("pool", name)
                .description("1 while no node of the pool is healthy and all are used").register(registry);
            for (NodeState node : pool.nodes())
            {
                String id = node.node().id();
                Gauge.builder("sandgate.egress.node.weight", node, n -> n.weight(System.nanoTime())).tags("pool", name, "node", id)
                    .description("Current selection weight (0 when ejected)").register(registry);
                Gauge.builder("sandgate.egress.node.ejected", node, n -> n.isEjected() ? 1 : 0).tags("pool", name, "node", id).register(registry);
                Gauge.builder("sandgate.egress.node.jitter.seconds", node, n -> n.jitterNanos() / 1e9).tags("pool", name, "node", id).register(registry);
                Gauge.builder("sandgate.egress.node.success.rate", node, NodeState::successRate).tags("pool", name, "node", id).register(registry);
                Gauge.builder("sandgate.egress.node.ejections", node, n -> n.ejections()).tags("pool", name, "node", id).register(registry);
            }
        }
    }

    void retried()
    {
        retries.increment();
    }

    void retryDenied()
    {
        retriesDenied.increment();
    }

    /** Counts how one attempt through the node ended. */
    void attempt(String pool, NodeState node, FailurePolicy.Outcome outcome)
    {
        registry.counter("sandgate.egress.requests", "pool", pool, "node", node.node().id(), "outcome", outcome.label()).increment();
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
