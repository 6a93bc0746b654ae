package io.sandgate.store;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
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
 * fails as if Redis had not answered: the caller answers 503 as it would after the timeout, only
 * sooner.</p>
 *
 * <p>Only a Redis that has stopped answering has calls refused at once. When every permit is out
 * but Redis answered a call within the patience, it is busy (a burst, a slow command), permits are
 * coming back, and a call waits up to the patience for one: a heavy client does not turn into 503s
 * for the others what is only a queue.</p>
 */
final class RedisWaits
{
    /** Long against a Redis answer (well under a millisecond), short against a thread held. */
    static final Duration PATIENCE = Duration.ofMillis(100);

    private final Semaphore permits;
    private final int max;
    private final long patienceNanos;
    private final LongSupplier nanoTime;
    private final Counter refused;
    /** Calls holding a permit. */
    private final AtomicInteger inFlight = new AtomicInteger();
    /**
     * When a call last got an answer, or the first permit after none was out, by {@link #nanoTime}:
     * with every permit out and neither for the patience, Redis is not answering. Not answers
     * alone: after an idle hour the first burst beyond the bound would be refused as if Redis hung.
     * Not every permit taken either: in a hang, each call that times out frees one for the next,
     * and the patience would start again with each.
     */
    private volatile long lastProgress;

    /** @param max calls that may wait for Redis at once */
    RedisWaits(int max, MeterRegistry registry)
    {
        this(max, PATIENCE, System::nanoTime, registry);
    }

    /**
     * @param patience how long a call waits for a permit while Redis still answers
     * @param nanoTime the clock, {@link System#nanoTime} but in tests
     */
    RedisWaits(int max, Duration patience, LongSupplier nanoTime, MeterRegistry registry)
    {
        if (max < 1)
            throw new IllegalArgumentException("max: " + max + " (expected: > 0)");
        this.max = max;
        this.permits = new Semaphore(max);
        this.patienceNanos = patience.toNanos();
        this.nanoTime = nanoTime;
        this.lastProgress = nanoTime.getAsLong();
        this.refused = Counter.builder("sandgate.store.redis.waits.refused")
            .description("Calls failed at once because as many threads as allowed were already waiting for a Redis that did not answer").register(registry);
        registry.gauge("sandgate.store.redis.waits", inFlight);
    }

    /**
     * Runs a command that waits for Redis, if a thread may wait now.
     *
     * @param what the store's name for itself in the failure: {@code session store}
     * @throws StoreUnavailableException when Redis did not answer, or too many threads wait for it already
     */
    <T> T call(String what, Supplier<T> command)
    {
        if (!acquire())
        {
            refused.increment();
            throw new StoreUnavailableException(what + " unreachable: " + max + " requests already waiting for Redis", null);
        }
        try
        {
            T result = command.get();
            lastProgress = nanoTime.getAsLong();
            return result;
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
            inFlight.decrementAndGet();
            permits.release();
        }
    }

    private boolean acquire()
    {
        if (permits.tryAcquire())
            return held();
        if (nanoTime.getAsLong() - lastProgress > patienceNanos)
            return false;
        try
        {
            return permits.tryAcquire(patienceNanos, TimeUnit.NANOSECONDS) && held();
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private boolean held()
    {
        if (inFlight.getAndIncrement() == 0)
            lastProgress = nanoTime.getAsLong();
        return true;
    }
}
