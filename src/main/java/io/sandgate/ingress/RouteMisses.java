package io.sandgate.ingress;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import io.sandgate.config.ConfigKeys;
import io.sandgate.web.GatewayException;

/**
 * How many lookups of sandboxes without a route each client may make: a client spraying made-up
 * ids costs the store a read per id (the negative cache only helps ids that repeat), and in open
 * access learns from each answer whether the id is live. A lookup the local cache cannot answer
 * takes one from its client's budget before the store is asked, and gives it back when a route is
 * found, so that only lookups that end without a route are counted, and concurrent ones cannot
 * overdraw it.
 *
 * <p>The budget is a minute's worth at once, refilled continuously: a generic cell rate algorithm,
 * one number per client (when its budget is full again), so a client with a full budget takes no
 * memory.</p>
 */
final class RouteMisses
{
    /** Clients kept before the ones whose budget is full again are swept out. */
    private static final int SWEEP_AT_LEAST = 4096;

    /** Nanoseconds one miss costs. */
    private final long interval;
    /** Nanoseconds of misses a client may owe: a minute. */
    private final long burst;
    private final int perMinute;
    private final LongSupplier nanoTime;
    /** When each client's budget is full again; only clients that owe. */
    private final Map<String, Long> fullAt = new ConcurrentHashMap<>();
    private volatile int sweepAt = SWEEP_AT_LEAST;

    RouteMisses(int perMinute, LongSupplier nanoTime)
    {
        if (perMinute < 1)
            throw new IllegalArgumentException("perMinute: " + perMinute + " (expected: >= 1)");
        this.perMinute = perMinute;
        this.burst = TimeUnit.MINUTES.toNanos(1);
        this.interval = burst / perMinute;
        this.nanoTime = nanoTime;
    }

    /** Takes one for a lookup; false, with nothing taken, when the client has none left. */
    boolean tryTake(String client)
    {
        long now = nanoTime.getAsLong();
        boolean[] taken = {false};
        fullAt.compute(client, (key, full) ->
        {
            long from = full == null || full - now < 0 ? now : full;
            if (from + interval - now > burst)
                return full;
            taken[0] = true;
            return from + interval;
        });
        if (fullAt.size() > sweepAt)
            sweep(now);
        return taken[0];
    }

    /** Gives back what a lookup took: it found a route, or could not be answered. */
    void giveBack(String client)
    {
        long now = nanoTime.getAsLong();
        fullAt.computeIfPresent(client, (key, full) -> full - interval - now <= 0 ? null : full - interval);
    }

    /** The refusal of a client with nothing left: 429, retried when one lookup is back. */
    GatewayException exhausted(String client)
    {
        Long full = fullAt.get(client);
        long waitNanos = full == null ? 0 : full - burst + interval - nanoTime.getAsLong();
        return GatewayException.tooMany("too_many_route_misses", "too many lookups of sandboxes without a route from this client (at most "
            + perMinute + " a minute, " + ConfigKeys.INGRESS_ROUTE_MISSES_PER_CLIENT.name() + ")", TimeUnit.NANOSECONDS.toSeconds(waitNanos) + 1);
    }

    /** Clients that owe something now. */
    int clients()
    {
        return fullAt.size();
    }

    private void sweep(long now)
    {
        fullAt.values().removeIf(full -> full - now <= 0);
        sweepAt = Math.max(SWEEP_AT_LEAST, fullAt.size() * 2);
    }
}
