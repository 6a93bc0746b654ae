package io.sandgate.egress;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import io.sandgate.config.EgressConfig;

/**
 * The egress pools with their nodes' states, and the choice of a node for an attempt. Made once at
 * start: a route table reload keeps the pools, their health and their connections.
 */
final class NodePools
{
    private final Map<String, PoolState> pools = new LinkedHashMap<>();
    private final NodeSelector selector;

    NodePools(EgressConfig config, NodeSelector selector)
    {
        this.selector = selector;
        for (EgressConfig.Pool pool : config.pools().values())
            pools.put(pool.name(), new PoolState(pool, config.health()));
    }

    Collection<PoolState> all()
    {
        return Collections.unmodifiableCollection(pools.values());
    }

    Set<String> names()
    {
        return Collections.unmodifiableSet(pools.keySet());
    }

    /** The state of the node with this id, in whichever pool it is. */
    NodeState node(String id)
    {
        for (PoolState pool : pools.values())
        {
            NodeState node = pool.node(id);
            if (node != null)
                return node;
        }
        throw new IllegalArgumentException("node: " + id + " (expected: a node of a pool)");
    }

    /** The node for the next attempt of the plan's exchange, or null when its pool has none left outside {@code tried}. */
    NodeSelector.Choice choose(EgressPlan plan, Set<String> tried)
    {
        return selector.select(pools.get(plan.route().pool()), plan.sticky(), tried);
    }

    /** Whether the node's region is failing over now (its in-flight exchanges get extra time). */
    boolean regionFailingOver(String pool, NodeState node)
    {
        PoolState state = pools.get(pool);
        return state != null && state.regionFailing(node.node().region());
    }
}
