package io.sandgate.egress;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

import io.sandgate.config.EgressConfig;
import io.sandgate.core.Audit;

/**
 * What the gateway believes about one egress node: ejected or not, the penalties probes gave its
 * weight, where it stands in its recovery ramp, and its recent probe latencies and request results.
 * Changed by probe threads and request threads; every decision reads a consistent snapshot under
 * the lock.
 */
final class NodeState
{
    /** Why a node is out: decides what brings it back. */
    enum Ejection
    {
        NONE, TCP, PASSIVE, JITTER
    }

    private static final int RESULTS = 50;

    /** Replaced when a reload changes the node's weight or region; its id and address never change. */
    private volatile EgressConfig.Node node;
    /** The pool the node serves, for the audit log. */
    private final String pool;
    private final EgressConfig.Health health;
    private final AtomicInteger ejections = new AtomicInteger();
    private final long[] latencies;
    private final boolean[] results = new boolean[RESULTS];
    private int latencyCount;
    private int resultCount;
    private int resultIndex;
    private Ejection ejection = Ejection.NONE;
    private long ejectedAt;
    private long recoveringSince;
    private int tcpFailures;
    private int passiveFailures;
    private double probePenalty = 1.0;
    /** When the node last sent the gateway a byte: an answer to a CONNECT, relayed bytes, a probe's answer. */
    private volatile long answeredAt;

    NodeState(String pool, EgressConfig.Node node, EgressConfig.Health health)
    {
        this.pool = pool;
        this.node = node;
        this.health = health;
        this.latencies = new long[health.latencyWindow()];
    }

    EgressConfig.Node node()
    {
        return node;
    }

    String pool()
    {
        return pool;
    }

    /** Whether {@code other} names this node: the same id at the same address. */
    boolean isSameNode(EgressConfig.Node other)
    {
        EgressConfig.Node current = node;
        return other.id().equals(current.id()) && other.host().equals(current.host()) && other.port() == current.port();
    }

    /**
     * A reload gave the node a new weight or region. What the gateway has learnt of it (ejection,
     * penalties, recovery ramp, recent results) stays: it is still the same proxy at the same
     * address. A new address makes a new node instead (see {@link NodePools#reconcile}).
     */
    void configure(EgressConfig.Node changed)
    {
        if (!isSameNode(changed))
            throw new IllegalArgumentException("node: " + changed + " (expected: id and address of " + node.id() + " unchanged)");
        node = changed;
    }

    /** The node sent the gateway bytes: whatever they say, it is alive and answering. */
    void answered(long now)
    {
        answeredAt = now;
    }

    /** Whether the node has sent the gateway any bytes since {@code since} (a {@link System#nanoTime} value). */
    boolean answeredSince(long since)
    {
        return answeredAt - since >= 0 && answeredAt != 0;
    }

    synchronized boolean isEjected()
    {
        return ejection != Ejection.NONE;
    }

    synchronized Ejection ejection()
    {
        return ejection;
    }

    int ejections()
    {
        return ejections.get();
    }

    /** Weight for selection now: configured weight, probe penalties and recovery ramp; 0 when ejected. */
    synchronized double weight(long now)
    {
        if (ejection != Ejection.NONE)
            return 0;
        return node.weight() * probePenalty * rampShare(now);
    }

    /** The share of its weight a recovering node takes now: 10 % -> 50 % -> 100 % by default. */
    synchronized double rampShare(long now)
    {
        if (recoveringSince == 0)
            return 1.0;
        List<Integer> steps = health.recoverySteps();
        long step = (now - recoveringSince) / Math.max(1, health.recoveryStepInterval().toNanos());
        if (step >= steps.size() - 1)
        {
            recoveringSince = 0;
            return 1.0;
        }
        return steps.get((int)step) / 100.0;
    }

    /** Share of the recent requests through this node that succeeded (1 when there were none). */
    synchronized double successRate()
    {
        if (resultCount == 0)
            return 1.0;
        int ok = 0;
        for (int i = 0; i < resultCount; i++)
        {
            if (results[i])
                ok++;
        }
        return ok / (double)resultCount;
    }

    synchronized int recentResults()
    {
        return resultCount;
    }

    /** A TCP probe's outcome: consecutive failures eject; a success after the node's time out brings it back, ramping. */
    synchronized void tcpProbe(boolean ok, long now)
    {
        if (!ok)
        {
            if (++tcpFailures >= health.tcpFailures())
                eject(Ejection.TCP, now);
            return;
        }
        tcpFailures = 0;
        // A node that fails requests but still accepts connections would flap back in at every
        // probe: it sits out a cool-down first.
        long out = ejection == Ejection.PASSIVE ? health.passiveEjectionTime().toNanos() : health.tcpInterval().toNanos();
        boolean longEnough = now - ejectedAt >= out;
        if ((ejection == Ejection.TCP || ejection == Ejection.PASSIVE) && longEnough)
            recover(now);
    }

    /** A request's outcome through this node; consecutive node failures eject it. */
    synchronized void requestResult(boolean ok, long now)
    {
        results[resultIndex] = ok;
        resultIndex = (resultIndex + 1) % RESULTS;
        resultCount = Math.min(RESULTS, resultCount + 1);
        if (ok)
        {
            passiveFailures = 0;
            return;
        }
        if (++passiveFailures >= health.passiveFailures())
            eject(Ejection.PASSIVE, now);
    }

    /**
     * An HTTP probe through the node: a failure or a slow answer halves the weight; latency jitter
     * (standard deviation of the window) above the first threshold takes 30 % more, above the second
     * ejects. A healthy probe lifts the penalties.
     */
    synchronized void httpProbe(boolean ok, long latencyNanos, long now)
    {
        latencies[latencyCount % latencies.length] = latencyNanos;
        latencyCount++;
        double penalty = 1.0;
        if (!ok || latencyNanos > health.slowTls().toNanos())
            penalty *= 0.5;
        double jitter = jitterNanos();
        if (jitter > health.jitterEject().toNanos())
        {
            eject(Ejection.JITTER, now);
        }
        else
        {
            if (jitter > health.jitterDownWeight().toNanos())
                penalty *= 0.7;
            if (ejection == Ejection.JITTER)
                recover(now);
        }
        probePenalty = penalty;
    }

    /** Standard deviation of the probe latencies in the window, in nanoseconds. */
    synchronized double jitterNanos()
    {
        int n = Math.min(latencyCount, latencies.length);
        if (n < 2)
            return 0;
        double mean = 0;
        for (int i = 0; i < n; i++)
            mean += latencies[i];
        mean /= n;
        double variance = 0;
        for (int i = 0; i < n; i++)
            variance += (latencies[i] - mean) * (latencies[i] - mean);
        return Math.sqrt(variance / n);
    }

    private void eject(Ejection why, long now)
    {
        if (ejection == Ejection.NONE)
        {
            ejections.incrementAndGet();
            Audit.nodeEjected(pool, node.id(), why.name().toLowerCase(Locale.ROOT));
        }
        ejection = why;
        ejectedAt = now;
        recoveringSince = 0;
    }

    private void recover(long now)
    {
        Audit.nodeRecovered(pool, node.id(), ejection.name().toLowerCase(Locale.ROOT));
        ejection = Ejection.NONE;
        tcpFailures = 0;
        passiveFailures = 0;
        resultCount = 0;
        recoveringSince = now;
    }
}
