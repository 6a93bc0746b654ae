package io.sandgate.egress;

import java.time.Clock;
import java.util.concurrent.CompletableFuture;

import io.sandgate.config.AgentPolicy;

/**
 * The agents' budget counters, shared by the replicas. Each budget is a window that starts with the
 * first use counted in it and lasts its length (a minute for requests, an hour for bytes), judged by
 * the store's clock alone, so that replicas whose clocks differ share one window.
 *
 * <p>Bytes are known only once an exchange has ended, so they are added to the counters after the
 * fact, with the agent's next call on the same replica or by its periodic flush: a budget of bytes
 * refuses the calls that come after it is used up, never the exchange that used it up.
 */
public interface AgentBudgets
{
    /**
     * What the counters say.
     *
     * @param budget the name of the budget the call is over ({@link AgentPolicy.Budgets#REQUESTS_PER_MINUTE}, ...), or null when it may go
     * @param waitMillis until that budget's window ends, at least 1 when over
     */
    record Verdict(String budget, long waitMillis)
    {
        public static final Verdict GO = new Verdict(null, 0);

        public boolean goes()
        {
            return budget == null;
        }
    }

    /**
     * Adds the bytes first, then, when {@code call} is set, counts a call against the budgets: unless
     * one is used up already, in which case nothing of the call is counted (a refused call uses up
     * nothing), though the bytes are.
     *
     * @param requestBytes request body bytes of ended exchanges not yet added
     * @param responseBytes response body bytes of ended exchanges not yet added
     * @return fails when the store cannot be reached
     */
    CompletableFuture<Verdict> take(String agent, AgentPolicy.Budgets budgets, boolean call, long requestBytes, long responseBytes);

    /** For one replica: counters in this process, on {@code clock}. */
    static AgentBudgets inMemory(Clock clock)
    {
        return new MemoryAgentBudgets(clock);
    }
}
