package io.sandgate.egress;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

import io.sandgate.config.EgressConfig;
import io.sandgate.core.Audit;

/**
 * A pool's nodes and how one is chosen: weighted among the healthy nodes of the preferred region;
 * the other regions when the preferred one fails over (too many nodes ejected, or too low a
 * success rate); and when no node is healthy, panic: all nodes, since refusing everything is
 * worse than trying a node that may have recovered. Its list of nodes never changes: a reload
 * makes a new PoolState, which may hold the same {@link NodeState}s (see {@link NodePools#reconcile}).
 */
final class PoolState
{
    private final EgressConfig.Pool pool;
    private final EgressConfig.Health health;
    private final List<NodeState> nodes;
    private volatile boolean panic;
    /** Whether picks last went outside the preferred region, so that the audit log hears of changes only. */
    private final AtomicBoolean failedOver = new AtomicBoolean();

    /** A pool of new nodes, nothing known of them yet. */
    PoolState(EgressConfig.Pool pool, EgressConfig.Health health)
    {
        this(pool, health, pool.nodes().stream().map(node -> new NodeState(pool.name(), node, health)).toList());
    }

    /** @param nodes the states of the pool's nodes, in the order of {@code pool.nodes()} */
    PoolState(EgressConfig.Pool pool, EgressConfig.Health health, List<NodeState> nodes)
    {
        this.pool = pool;
        this.health = health;
        this.nodes = List.copyOf(nodes);
    }

    EgressConfig.Pool pool()
    {
        return pool;
    }

    List<NodeState> nodes()
    {
        return nodes;
    }

    NodeState node(String id)
    {
        for (NodeState node : nodes)
        {
            if (node.node().id().equals(id))
                return node;
        }
        return null;
    }

    boolean isPanic()
    {
        return panic;
    }

    /** Whether the region should fail over to the others. */
    boolean regionFailing(String region)
    {
        int total = 0;
        int ejected = 0;
        int results = 0;
        double successes = 0;
        for (NodeState node : nodes)
        {
            if (!node.node().region().equals(region))
                continue;
            total++;
            if (node.isEjected())
                ejected++;
            int n = node.recentResults();
            results += n;
            successes += node.successRate() * n;
        }
        if (total == 0)
            return true;
        boolean mostlyEjected = ejected / (double)total > health.regionEjectedShare();
        boolean failingRequests = results >= 10 && successes / results < health.regionMinSuccess();
        return mostlyEjected || failingRequests;
    }

    /** Picks a node, or null when the pool has none left outside {@code exclude}. */
    NodeState pick(Set<String> exclude, long now)
    {
        String preferred = pool.region();
        List<NodeState> candidates = healthy(exclude, preferred, true);
        boolean away = false;
        if (candidates.isEmpty() || regionFailing(preferred))
        {
            List<NodeState> others = healthy(exclude, preferred, false);
            away = !others.isEmpty();
            if (away)
                candidates = others;
        }
        // Told once a change, not at every pick; a retry's excluded nodes can tip one pick alone.
        if (exclude.isEmpty() && failedOver.compareAndSet(!away, away))
            Audit.regionFailover(pool.name(), preferred, away);
        if (candidates.isEmpty())
            candidates = healthy(exclude, null, true);
        panic = candidates.isEmpty();
        if (panic)
        {
            for (NodeState node : nodes)
            {
                if (!exclude.contains(node.node().id()))
                    candidates.add(node);
            }
            return weighted(candidates, now, true);
        }
        return weighted(candidates, now, false);
    }

    /** Healthy nodes not excluded: in the region (inRegion) or outside it; region null means any. */
    private List<NodeState> healthy(Set<String> exclude, String region, boolean inRegion)
    {
        List<NodeState> result = new ArrayList<>();
        for (NodeState node : nodes)
        {
            if (node.isEjected() || exclude.contains(node.node().id()))
                continue;
            if (region == null || node.node().region().equals(region) == inRegion)
                result.add(node);
        }
        return result;
    }

    private static NodeState weighted(List<NodeState> candidates, long now, boolean ignoreHealth)
    {
        if (candidates.isEmpty())
            return null;
        double total = 0;
        double[] weights = new double[candidates.size()];
        for (int i = 0; i < weights.length; i++)
        {
            weights[i] = ignoreHealth ? candidates.get(i).node().weight() : candidates.get(i).weight(now);
            total += weights[i];
        }
        if (total <= 0)
            return candidates.get(ThreadLocalRandom.current().nextInt(candidates.size()));
        double r = ThreadLocalRandom.current().nextDouble(total);
        for (int i = 0; i < weights.length; i++)
        {
            r -= weights[i];
            if (r < 0)
                return candidates.get(i);
        }
        return candidates.get(candidates.size() - 1);
    }
}
