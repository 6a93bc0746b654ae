package io.sandgate.egress;

import java.util.HashSet;
import java.util.Set;

/**
 * The attempts of one exchange: the nodes tried so far and the one carrying the current attempt.
 * Each attempt goes to a node the exchange has not tried yet. Used by one request at a time (the
 * proxy's callbacks hand it on), so it needs no lock.
 */
final class Attempts
{
    private final EgressPlan plan;
    private final NodePools pools;
    private final EgressMetrics metrics;
    private final Set<String> tried = new HashSet<>();
    private NodeState node;
    private boolean repinned;
    private int count;

    Attempts(EgressPlan plan, NodePools pools, EgressMetrics metrics)
    {
        this.plan = plan;
        this.pools = pools;
        this.metrics = metrics;
    }

    /**
     * Moves on to the next attempt's node: the first one, or after a failure another one.
     *
     * @return false, with nothing changed, when the pool has no node left to try
     */
    boolean next()
    {
        NodeSelector.Choice choice = pools.choose(plan, tried);
        if (choice == null)
            return false;
        node = choice.node();
        repinned |= choice.repinned();
        tried.add(node.node().id());
        count++;
        return true;
    }

    /** The node of the current attempt. */
    NodeState node()
    {
        return node;
    }

    /** Whether a sticky session had to leave its pinned node on the way. */
    boolean repinned()
    {
        return repinned;
    }

    /** How many attempts have been made, the current one included. */
    int count()
    {
        return count;
    }

    /** How many different nodes have been tried. */
    int tried()
    {
        return tried.size();
    }

    /** Whether the region of an attempt's node is failing over now (its in-flight exchanges get extra time). */
    boolean regionFailingOver(NodeState node)
    {
        return pools.regionFailingOver(plan.route().pool(), node);
    }

    /** Records how the current attempt ended: in the node's passive health, and in the request counter. */
    void record(FailurePolicy.Outcome outcome)
    {
        node.requestResult(outcome.nodeOk(), System.nanoTime());
        metrics.attempt(plan.route().pool(), node, outcome);
    }
}
