package io.sandgate.egress;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.sandgate.config.EgressConfig;

/**
 * The egress pools with their nodes' states, and the choice of a node for an attempt. A reload
 * reconciles them with the configuration's pools (see {@link #reconcile}): nodes that stay keep
 * what the gateway has learnt of them, and their connections.
 *
 * <p>The pools are one immutable map, replaced whole: a request reads them without a lock and sees
 * either the pools before a reload or those after it, never a mix.</p>
 */
final class NodePools
{
    /**
     * What a reload changes, worked out before anything is changed.
     *
     * @param pools the pools after the reload
     * @param kept nodes that stay, with their configuration after the reload (weight and region may differ)
     * @param added nodes that are new, or whose address changed: nothing is known of them yet
     * @param removed nodes that leave: gone from the configuration, or now at another address
     */
    record Reconciled(Map<String, PoolState> pools, Map<NodeState, EgressConfig.Node> kept, List<NodeState> added, List<NodeState> removed)
    {
    }

    private final EgressConfig.Health health;
    private final NodeSelector selector;
    private volatile Map<String, PoolState> pools = Map.of();

    /**
     * @param config its pools are the first ones; its health settings judge every node, those a
     *        reload adds too (changing them needs a restart, as the probes' schedule does)
     */
    NodePools(EgressConfig config, NodeSelector selector)
    {
        this.health = config.health();
        this.selector = selector;
        apply(reconcile(config.pools()));
    }

    /**
     * Matches the running nodes with a configuration's pools, and changes nothing yet. A node keeps
     * its state (ejection, penalties, recovery ramp, recent results) when its id and address are
     * unchanged, even if its pool, weight or region changed; a node at a new address is another
     * proxy, so it starts afresh under its old id. The configuration has already checked that node
     * ids are unique and no pool is empty (see {@code EgressConfig}). One reload at a time calls it
     * (see {@link Egress#reload}).
     */
    Reconciled reconcile(Map<String, EgressConfig.Pool> fresh)
    {
        Map<String, NodeState> running = new LinkedHashMap<>();
        for (NodeState node : nodes())
            running.put(node.node().id(), node);
        Map<String, PoolState> next = new LinkedHashMap<>();
        Map<NodeState, EgressConfig.Node> kept = new IdentityHashMap<>();
        List<NodeState> added = new ArrayList<>();
        List<NodeState> removed = new ArrayList<>();
        for (EgressConfig.Pool pool : fresh.values())
        {
            List<NodeState> states = new ArrayList<>();
            for (EgressConfig.Node node : pool.nodes())
            {
                NodeState state = running.remove(node.id());
                if (state != null && state.isSameNode(node))
                {
                    kept.put(state, node);
                }
                else
                {
                    if (state != null)
                        removed.add(state);
                    state = new NodeState(pool.name(), node, health);
                    added.add(state);
                }
                states.add(state);
            }
            next.put(pool.name(), new PoolState(pool, health, states));
        }
        removed.addAll(running.values());
        return new Reconciled(Collections.unmodifiableMap(next), kept, added, removed);
    }

    /**
     * Puts a reconciliation in force: new weights and regions first, then the pools at once. From
     * then on no exchange chooses a removed node; those under way on it finish, since they hold its
     * state and its clients (see {@link NodeClients#retire}).
     */
    void apply(Reconciled reconciled)
    {
        reconciled.kept().forEach(NodeState::configure);
        pools = reconciled.pools();
    }

    Collection<PoolState> all()
    {
        return pools.values();
    }

    /** The nodes of every pool. */
    List<NodeState> nodes()
    {
        List<NodeState> nodes = new ArrayList<>();
        for (PoolState pool : pools.values())
            nodes.addAll(pool.nodes());
        return nodes;
    }

    /** The pool of this name, or null when there is none (a reload removed it). */
    PoolState pool(String name)
    {
        return pools.get(name);
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

    /** Whether the node is in the pool now: not taken out (or moved elsewhere) by a reload. */
    boolean serves(String pool, NodeState node)
    {
        PoolState state = pools.get(pool);
        return state != null && state.node(node.node().id()) == node;
    }

    /**
     * The node for the next attempt of the plan's exchange, or null when its pool has none left
     * outside {@code tried}, or no longer exists: the exchange was planned just before a reload
     * removed the pool.
     */
    NodeSelector.Choice choose(EgressPlan plan, Set<String> tried)
    {
        PoolState pool = pools.get(plan.route().pool());
        return pool == null ? null : selector.select(pool, plan.sticky(), tried);
    }

    /** Whether the node's region is failing over now (its in-flight exchanges get extra time). */
    boolean regionFailingOver(String pool, NodeState node)
    {
        PoolState state = pools.get(pool);
        return state != null && state.regionFailing(node.node().region());
    }
}
