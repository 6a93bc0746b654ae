package io.sandgate.egress;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
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
    private final TargetFailures targetFailures;
    private final AttemptSpans spans;
    private final Set<String> tried = new HashSet<>();
    /** Nodes that refused the exchange's tunnel or left it unanswered: blamed only if another node opens one. */
    private final List<NodeState> refused = new ArrayList<>();
    private NodeState node;
    private boolean repinned;
    private int count;
    private long attemptStart;
    /** Set on a client thread when the current attempt's request starts out through an open tunnel. */
    private volatile boolean sent;

    /** The attempts of an exchange outside any trace. */
    Attempts(EgressPlan plan, NodePools pools, EgressMetrics metrics, TargetFailures targetFailures)
    {
        this(plan, pools, metrics, targetFailures, AttemptSpans.NONE);
    }

    /** @param spans the exchange's spans; {@link AttemptSpans#NONE} when it is not traced */
    Attempts(EgressPlan plan, NodePools pools, EgressMetrics metrics, TargetFailures targetFailures, AttemptSpans spans)
    {
        this.plan = plan;
        this.pools = pools;
        this.metrics = metrics;
        this.targetFailures = targetFailures;
        this.spans = spans;
    }

    /** The exchange's spans. */
    AttemptSpans spans()
    {
        return spans;
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
        attemptStart = System.nanoTime();
        sent = false;
        spans.started(count, node);
        return true;
    }

    /** The current attempt's request starts towards the target: its node has opened the tunnel. */
    void sent()
    {
        sent = true;
    }

    /** Whether the current attempt's request has started towards the target (nothing of it had before). */
    boolean isSent()
    {
        return sent;
    }

    /** Whether the current attempt's node has sent the gateway any bytes since the attempt started. */
    boolean nodeAnswered()
    {
        return node.answeredSince(attemptStart);
    }

    /** The node of the current attempt. */
    NodeState node()
    {
        return node;
    }

    /** How long a phase of the current attempt took through its node. */
    void timed(EgressMetrics.Phase phase, long nanos)
    {
        metrics.timed(node, phase, nanos);
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

    /**
     * Records how the current attempt ended: in the node's passive health, and in the request
     * counter. A node that refused the tunnel, or left it unanswered, is judged later: if another
     * node opens a tunnel to the same target, the target was reachable and the refusal was the
     * node's own failure; if none does, the target was at fault and the refusal says nothing about
     * the node. Nor does it when the node that reached the target had failed it too within the
     * last seconds: the target came and went between the attempts ({@link TargetFailures}).
     */
    void record(FailurePolicy.Outcome outcome)
    {
        long now = System.nanoTime();
        spans.ended(outcome);
        metrics.attempt(plan.route().pool(), node, outcome);
        String target = plan.target().authority();
        if (outcome == FailurePolicy.Outcome.REFUSED || outcome == FailurePolicy.Outcome.UNANSWERED)
        {
            targetFailures.failed(target, node.node().id(), now);
            refused.add(node);
            return;
        }
        node.requestResult(outcome.nodeOk(), now);
        // The target was reached; unless the node that reached it failed it too a moment ago (the
        // target comes and goes), the nodes that refused it failed.
        if (outcome == FailurePolicy.Outcome.OK && !targetFailures.failedRecently(target, node.node().id(), now))
        {
            for (NodeState refuser : refused)
                refuser.requestResult(false, now);
        }
        if (outcome == FailurePolicy.Outcome.OK)
            refused.clear();
    }
}
