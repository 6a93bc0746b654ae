package io.sandgate.egress;

import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.sandgate.config.AgentPolicy;

/** {@link AgentBudgets} in this process; agents are bounded by the configuration, so the table is too. */
final class MemoryAgentBudgets implements AgentBudgets
{
    static final Duration MINUTE = Duration.ofMinutes(1);
    static final Duration HOUR = Duration.ofHours(1);

    private record Window(long count, long endsAt)
    {
    }

    private final Clock clock;
    private final Map<String, Window> windows = new HashMap<>();

    MemoryAgentBudgets(Clock clock)
    {
        this.clock = clock;
    }

    @Override
    public synchronized CompletableFuture<Verdict> take(String agent, AgentPolicy.Budgets budgets, boolean call, long requestBytes, long responseBytes)
    {
        long now = clock.millis();
        String requestKey = agent + "\n" + AgentPolicy.Budgets.REQUEST_BYTES_PER_HOUR;
        String responseKey = agent + "\n" + AgentPolicy.Budgets.RESPONSE_BYTES_PER_HOUR;
        String callKey = agent + "\n" + AgentPolicy.Budgets.REQUESTS_PER_MINUTE;
        if (budgets.requestBytesPerHour() > 0)
            add(requestKey, requestBytes, HOUR, now);
        if (budgets.responseBytesPerHour() > 0)
            add(responseKey, responseBytes, HOUR, now);
        if (!call)
            return CompletableFuture.completedFuture(Verdict.GO);
        Verdict over = used(requestKey, budgets.requestBytesPerHour(), AgentPolicy.Budgets.REQUEST_BYTES_PER_HOUR, 0, now);
        if (over.goes())
            over = used(responseKey, budgets.responseBytesPerHour(), AgentPolicy.Budgets.RESPONSE_BYTES_PER_HOUR, 0, now);
        if (over.goes())
            over = used(callKey, budgets.requestsPerMinute(), AgentPolicy.Budgets.REQUESTS_PER_MINUTE, 1, now);
        if (over.goes() && budgets.requestsPerMinute() > 0)
            add(callKey, 1, MINUTE, now);
        return CompletableFuture.completedFuture(over);
    }

    /** Over when the window holds {@code max} already, or would hold more with {@code adding}. */
    private Verdict used(String key, long max, String budget, long adding, long now)
    {
        Window window = live(key, now);
        if (max <= 0 || window == null || window.count() + adding <= max && (adding > 0 || window.count() < max))
            return Verdict.GO;
        return new Verdict(budget, Math.max(1, window.endsAt() - now));
    }

    private void add(String key, long amount, Duration length, long now)
    {
        if (amount <= 0)
            return;
        Window window = live(key, now);
        windows.put(key, window == null ? new Window(amount, now + length.toMillis()) : new Window(window.count() + amount, window.endsAt()));
    }

    private Window live(String key, long now)
    {
        Window window = windows.get(key);
        return window == null || window.endsAt() <= now ? null : window;
    }
}
