package io.sandgate.mcp;

import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * {@link CallQuotas} in this process. Windows that ended are swept when the table grows, so that it
 * holds at most the windows of the callers seen within one window's length.
 */
final class MemoryCallQuotas implements CallQuotas
{
    private static final int SWEEP_ABOVE = 10_000;

    private record Window(int count, long endsAt)
    {
    }

    private final Clock clock;
    private final Map<String, Window> windows = new HashMap<>();

    MemoryCallQuotas(Clock clock)
    {
        this.clock = clock;
    }

    @Override
    public synchronized CompletableFuture<Long> take(List<Limit> limits)
    {
        long now = clock.millis();
        if (windows.size() > SWEEP_ABOVE)
            windows.values().removeIf(window -> window.endsAt() <= now);
        long wait = 0;
        for (Limit limit : limits)
        {
            Window window = live(limit.key(), now);
            if (window != null && window.count() + times(limits, limit.key()) > limit.max())
                wait = Math.max(wait, Math.max(1, window.endsAt() - now));
            else if (window == null && times(limits, limit.key()) > limit.max())
                wait = Math.max(wait, limit.window().toMillis());
        }
        if (wait > 0)
            return CompletableFuture.completedFuture(wait);
        for (Limit limit : limits)
        {
            Window window = live(limit.key(), now);
            windows.put(limit.key(), window == null ? new Window(1, now + limit.window().toMillis()) : new Window(window.count() + 1, window.endsAt()));
        }
        return CompletableFuture.completedFuture(0L);
    }

    private Window live(String key, long now)
    {
        Window window = windows.get(key);
        return window == null || window.endsAt() <= now ? null : window;
    }

    /** How often a key is among the limits: a batch's calls of one tool count each. */
    private static int times(List<Limit> limits, String key)
    {
        int times = 0;
        for (Limit limit : limits)
        {
            if (limit.key().equals(key))
                times++;
        }
        return times;
    }
}
