package io.sandgate.store;

import java.util.concurrent.Semaphore;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.core.StoreUnavailableException;

/**
 * Bounds the threads that wait for a Redis answer at once.
 *
 * <p>A healthy Redis answers in well under a millisecond, so a handful of calls are ever in
 * flight. A hung one (stopped, or a partition that drops packets rather than refusing them) keeps
 * each call for {@code store.redis.timeout} and Redisson's retry; a flow of MCP requests would then
 * take every thread of the pool the gateway shares between its faces, and with them the ingress of
 * cached routes, health checks and everything else that needs no Redis. Beyond the bound a call
 * fails at once, as if Redis had not answered: the caller answers 503 as it would after the
 * timeout, only sooner.</p>
 */
final class RedisWaits
{
    private final Semaphore permits;
    private final int max;
    private final Counter refused;

    /** @param max calls that may wait for Redis at once */
    RedisWaits(int max, MeterRegistry registry)
    {
        if (max < 1)
            throw new IllegalArgumentException("max: " + max + " (expected: > 0)");
        this.max = max;
        this.permits = new Semaphore(max);
        this.refused = Counter.builder("sandgate.store.redis.waits.refused")
            .description("Calls failed at once because as many threads as allowed were already waiting for Redis").register(registry);
        registry.gauge("sandgate.store.redis.waits", permits, p -> max - p.availablePermits());
    }

    /**
     * Runs a command that waits for Redis, if a thread may wait now.
     *
     * @param what the store's name for itself in the failure: {@code session store}
     * @throws StoreUnavailableException when Redis did not answer, or too many threads wait for it already
     */
    <T> T call(String what, Supplier<T> command)
    {
        if (!permits.tryAcquire())
        {
            refused.increment();
            throw new StoreUnavailableException(what + " unreachable: " + max + " requests already waiting for Redis", null);
        }
        try
        {
            return command.get();
        }
        catch (StoreUnavailableException x)
        {
            throw x;
        }
        catch (RuntimeException x)
        {
            // RedisException in all its forms, or the client shutting down: either way, no answer.
            throw new StoreUnavailableException(what + " unreachable", x);
        }
        finally
        {
            permits.release();
        }
    }
}
