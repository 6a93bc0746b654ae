package io.sandgate.egress;

import java.io.IOException;
import java.nio.channels.SocketChannel;

import io.sandgate.config.EgressConfig;
import io.sandgate.web.GatewayException;

/**
 * The attempts of one CONNECT, one node at a time: a node is tried, and when its tunnel does not
 * open the {@link FailurePolicy} judges the failure and may let another node be tried. Each step is
 * taken when the previous one has ended (a connection that failed, a handshake that did, or a
 * channel that could not even be opened), so no thread waits for a node in between. Used by one
 * step at a time, like {@link Attempts}.
 */
final class TunnelAttempts
{
    /** Starts a non-blocking connection to a node. */
    interface Opener
    {
        SocketChannel open(EgressConfig.Node node) throws IOException;
    }

    private final EgressPlan plan;
    private final Attempts attempts;
    private final FailurePolicy policy;
    private final Opener opener;
    /** When the current attempt's connection to its node began, then when it had connected. */
    private long began;

    TunnelAttempts(EgressPlan plan, Attempts attempts, FailurePolicy policy, Opener opener)
    {
        this.plan = plan;
        this.attempts = attempts;
        this.policy = policy;
        this.opener = opener;
    }

    EgressPlan plan()
    {
        return plan;
    }

    /** The channel of the first attempt, connecting; null when no node could be tried. */
    SocketChannel first()
    {
        return next(null);
    }

    /** The current attempt's tunnel did not open: the channel of the next attempt, or null when there is none. */
    SocketChannel failed(Throwable failure)
    {
        return next(failure);
    }

    /** The current attempt's node has sent bytes of its answer. */
    void answered()
    {
        attempts.node().answered(System.nanoTime());
    }

    /** Whether a sticky session had to leave its pinned node on the way. */
    boolean repinned()
    {
        return attempts.repinned();
    }

    /** The current attempt's connection to its node has connected; the CONNECT goes now. */
    void connected()
    {
        long now = System.nanoTime();
        attempts.timed(EgressMetrics.Phase.CONNECT, now - began);
        began = now;
    }

    /** The current attempt's tunnel is open. */
    void opened()
    {
        attempts.timed(EgressMetrics.Phase.FIRST_BYTE, System.nanoTime() - began);
        attempts.record(FailurePolicy.Outcome.OK);
    }

    /** What the agent is told when no attempt opened the tunnel. */
    GatewayException exhausted()
    {
        return policy.tunnelFailed();
    }

    private SocketChannel next(Throwable failure)
    {
        Throwable last = failure;
        while (true)
        {
            if (last != null)
            {
                FailurePolicy.Verdict verdict = policy.judge(FailurePolicy.Attempt.tunnel(last, attempts.nodeAnswered(), attempts.count(), plan.route()));
                attempts.record(verdict.outcome());
                if (!verdict.retry())
                    return null;
            }
            if (!attempts.next())
                return null;
            try
            {
                began = System.nanoTime();
                return opener.open(attempts.node().node());
            }
            catch (IOException | RuntimeException x)
            {
                last = x;
            }
        }
    }
}
