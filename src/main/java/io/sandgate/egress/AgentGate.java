package io.sandgate.egress;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.AgentPolicy;
import io.sandgate.core.Audit;
import io.sandgate.core.Schedulers;
import io.sandgate.web.GatewayException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where each agent call is held to its agent's policy ({@link AgentPolicies}), a step of the
 * planner's, so that every entry the planner serves (base-URL, forward-proxy, the requests inside an
 * inspected tunnel, and a blind tunnel as one call) gets it: the domains first, then the budgets,
 * counted across the replicas ({@link AgentBudgets}). In {@code report} mode a call the policy would
 * refuse goes, logged and counted. A call of an agent without a budget costs the store nothing;
 * one with a budget costs one round trip, which also adds the bytes of the agent's ended exchanges.
 *
 * <p>When the store cannot count, calls go: a budget is a budget, not a wall, and an outage of the
 * store must not stop every agent (as with the MCP quotas). {@code sandgate.egress.agent.budget.unchecked}
 * counts such calls.
 */
public final class AgentGate implements AutoCloseable
{
    /** The reason of a refusal for a domain outside the agent's policy; the budgets are named by their keys. */
    static final String DOMAIN = "domain";
    private static final Logger LOG = LoggerFactory.getLogger(AgentGate.class);
    private static final long WARN_EVERY_MILLIS = 60_000;
    /** Bytes of ended exchanges reach the store with the agent's next call, or by this flush at the latest. */
    private static final Duration FLUSH = Duration.ofSeconds(1);

    /**
     * Bytes of an agent's ended exchanges not yet added to its counters; taken with getAndSet, so
     * that bytes added while a call takes them are neither lost nor counted twice. One per agent, and
     * agents are bounded by the configuration.
     */
    private record Pending(AtomicLong requestBytes, AtomicLong responseBytes)
    {
    }

    private final AgentPolicies policies;
    private final AgentBudgets budgets;
    private final MeterRegistry registry;
    private final Counter unchecked;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Pending> pending = new ConcurrentHashMap<>();
    private final AtomicLong lastWarning = new AtomicLong();
    private final ScheduledFuture<?> flusher;

    public AgentGate(AgentPolicies policies, AgentBudgets budgets, MeterRegistry registry, Schedulers schedulers)
    {
        this.policies = policies;
        this.budgets = budgets;
        this.registry = registry;
        this.unchecked = Counter.builder("sandgate.egress.agent.budget.unchecked")
            .description("Agent calls let through uncounted: the store could not count them").register(registry);
        this.flusher = schedulers.every(FLUSH, FLUSH, "Agent budget flush", this::flush);
    }

    /** The agents' policies, as the admin API reads and sets them. */
    public AgentPolicies policies()
    {
        return policies;
    }

    /**
     * Judges a call of {@code agent} to {@code host}.
     *
     * @param agent the agent the call comes from; empty when the gateway cannot name it, and then only the routes bind it
     * @return completes when the call may go; fails with 429 over a budget
     * @throws GatewayException 403 for a domain the agent's policy does not allow, in {@code enforce} mode
     */
    CompletableFuture<Void> admit(Optional<String> agent, String host)
    {
        AgentPolicy policy = policies.bindingOf(agent);
        if (agent.isEmpty() || policy == AgentPolicy.NONE)
            return CompletableFuture.completedFuture(null);
        String id = agent.get();
        if (!policy.allows(host) && refuses(id, policy, DOMAIN))
            throw GatewayException.forbidden("agent " + id + " may not reach " + host + " (its policy's domains)");
        if (!policy.budgets().any())
            return CompletableFuture.completedFuture(null);
        Pending owed = pending.get(id);
        long requestBytes = owed == null ? 0 : owed.requestBytes().getAndSet(0);
        long responseBytes = owed == null ? 0 : owed.responseBytes().getAndSet(0);
        return budgets.take(id, policy.budgets(), true, requestBytes, responseBytes).handle((verdict, failure) ->
        {
            if (failure != null)
            {
                uncounted();
                return null;
            }
            if (!verdict.goes() && refuses(id, policy, verdict.budget()))
            {
                long seconds = Math.max(1, (verdict.waitMillis() + 999) / 1000);
                throw GatewayException.tooMany("over_budget", "agent " + id + " is over its budget " + verdict.budget() + " ("
                    + limit(policy.budgets(), verdict.budget()) + "); retry after " + seconds + " s", seconds);
            }
            return null;
        });
    }

    /**
     * Notes the bytes of an ended exchange of {@code agent}, for its bytes budgets; nothing for an
     * agent without one.
     *
     * @param requestBytes the request body bytes read from the agent
     * @param responseBytes the response body bytes read from the target
     */
    void ended(Optional<String> agent, long requestBytes, long responseBytes)
    {
        if (agent.isEmpty() || !policies.bindingOf(agent).budgets().bytes() || requestBytes + responseBytes <= 0)
            return;
        Pending owed = pending.computeIfAbsent(agent.get(), id -> new Pending(new AtomicLong(), new AtomicLong()));
        owed.requestBytes().addAndGet(requestBytes);
        owed.responseBytes().addAndGet(responseBytes);
    }

    /** Adds what the agents' ended exchanges owe, so that the other replicas see it without waiting for the next call here. */
    private void flush()
    {
        for (Map.Entry<String, Pending> entry : pending.entrySet())
        {
            long requestBytes = entry.getValue().requestBytes().getAndSet(0);
            long responseBytes = entry.getValue().responseBytes().getAndSet(0);
            if (requestBytes + responseBytes == 0)
                continue;
            String id = entry.getKey();
            AgentPolicy.Budgets limits = policies.bindingOf(Optional.of(id)).budgets();
            budgets.take(id, limits, false, requestBytes, responseBytes).exceptionally(failure ->
            {
                uncounted();
                return null;
            });
        }
    }

    /** Counts and logs a call the policy would refuse; whether it is refused (enforce) or goes (report). */
    private boolean refuses(String agent, AgentPolicy policy, String reason)
    {
        boolean enforced = policy.mode() == AgentPolicy.Mode.ENFORCE;
        String outcome = enforced ? "refused" : "reported";
        counters.computeIfAbsent(agent + '\n' + reason + '\n' + outcome, key -> Counter.builder("sandgate.egress.agent.policy")
            .description("Agent calls the agent's policy refused (enforce) or would have refused (report), by reason")
            .tag("agent", agent).tag("reason", reason).tag("outcome", outcome).register(registry)).increment();
        Audit.agentPolicy(agent, reason, outcome);
        return enforced;
    }

    private void uncounted()
    {
        unchecked.increment();
        long now = System.currentTimeMillis();
        long last = lastWarning.get();
        if (now - last >= WARN_EVERY_MILLIS && lastWarning.compareAndSet(last, now))
            LOG.warn("Agent budgets cannot be counted (the store does not answer): agents' calls go uncounted until it does");
    }

    private static long limit(AgentPolicy.Budgets budgets, String budget)
    {
        return switch (budget.toLowerCase(Locale.ROOT))
        {
            case AgentPolicy.Budgets.REQUESTS_PER_MINUTE -> budgets.requestsPerMinute();
            case AgentPolicy.Budgets.REQUEST_BYTES_PER_HOUR -> budgets.requestBytesPerHour();
            default -> budgets.responseBytesPerHour();
        };
    }

    @Override
    public void close()
    {
        flusher.cancel(false);
        flush();
    }
}
