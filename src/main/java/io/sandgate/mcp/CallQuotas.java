package io.sandgate.mcp;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Tool-call counters shared by the replicas ({@code mcp.servers[].quota}). A window starts with its
 * first call and lasts its length, judged by the store's clock alone, so that replicas whose clocks
 * differ still share one window.
 */
public interface CallQuotas
{
    /**
     * One limit a call counts against.
     *
     * @param key what is counted (server, caller, tool)
     * @param max calls allowed per window
     */
    record Limit(String key, int max, Duration window)
    {
    }

    /**
     * Counts a call against every limit, unless one of them is reached already, in which case none
     * is counted: a refused call uses up nothing.
     *
     * @return 0 when the call may go; else how long until the fullest limit's window ends, in
     *         milliseconds (at least 1). Fails when the store cannot be reached.
     */
    CompletableFuture<Long> take(List<Limit> limits);

    /** For one replica: counters in this process, on {@code clock}. */
    static CallQuotas inMemory(Clock clock)
    {
        return new MemoryCallQuotas(clock);
    }
}
