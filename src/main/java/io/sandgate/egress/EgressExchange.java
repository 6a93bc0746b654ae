package io.sandgate.egress;

import java.util.concurrent.ScheduledFuture;

import io.sandgate.config.EgressConfig;
import org.eclipse.jetty.client.Request;

/** One agent request across its attempts, as {@link EgressServlet} carries it from step to step. */
final class EgressExchange
{
    final EgressPlan plan;
    final Attempts attempts;
    final long start = System.nanoTime();
    /** Leak scanning of the current attempt's response body, opened with its headers; null when nothing reads it. */
    BodyScan responseScan;
    /** The decoding of a read response body that came compressed all the same; null when it came as it is. */
    BodyDecoder responseDecoder;
    ScheduledFuture<?> deadline;
    /** The agent's body, held for a retry; null when there is none or it is too large to hold. */
    ReplayableBody body;
    /** The current attempt's request. */
    volatile Request proxyRequest;
    /** Body bytes read from the agent, and from the target over every attempt: what the agent's bytes budgets count. */
    long requestBytes;
    long responseBytes;
    private boolean ended;

    EgressExchange(EgressPlan plan, Attempts attempts)
    {
        this.plan = plan;
        this.attempts = attempts;
    }

    EgressConfig.Route route()
    {
        return plan.route();
    }

    /**
     * The exchange's bytes count against its agent's bytes budgets once it has ended, whichever way,
     * and once: a response's size is known only then, so a budget used up refuses the agent's next call.
     */
    void end(AgentGate agents)
    {
        if (!ended)
            agents.ended(plan.agent(), requestBytes, responseBytes);
        ended = true;
    }

    void cancelDeadline()
    {
        if (deadline != null)
            deadline.cancel(false);
    }
}
