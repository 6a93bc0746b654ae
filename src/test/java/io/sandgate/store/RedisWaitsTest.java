package io.sandgate.store;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.core.StoreUnavailableException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bound on threads waiting for Redis refuses calls only when Redis has stopped answering: with
 * one permit, held by a call Redis has not answered, the next call waits while Redis answered
 * within the patience, and is refused at once after it. The patience is ten seconds here, so that
 * waiting and refusing at once cannot be mistaken for each other.
 */
class RedisWaitsTest
{
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    private final AtomicLong clock = new AtomicLong();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final RedisWaits waits = new RedisWaits(1, PATIENCE, clock::get, registry);
    private final CountDownLatch answer = new CountDownLatch(1);
    /** Not the common pool: on two cores it has one thread, and these calls block. */
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void letTheHeldCallsGo()
    {
        answer.countDown();
        threads.shutdownNow();
    }

    private static double waiting(SimpleMeterRegistry meters)
    {
        return meters.get("sandgate.store.redis.waits").gauge().value();
    }

    private static void awaitQuietly(CountDownLatch latch)
    {
        try
        {
            latch.await();
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
    }

    /** A call that holds the only permit until the test lets Redis answer it. */
    private CompletableFuture<String> heldCall()
    {
        CompletableFuture<String> held = CompletableFuture.supplyAsync(() -> waits.call("test store", () ->
        {
            awaitQuietly(answer);
            return "held";
        }), threads);
        await().until(() -> waiting(registry) == 1);
        return held;
    }

    /** Runs a call on a thread of its own; the thread, once it waits for a permit. */
    private Thread waitingCall(AtomicReference<Object> outcome)
    {
        Thread caller = new Thread(() ->
        {
            try
            {
                outcome.set(waits.call("test store", () -> "second"));
            }
            catch (RuntimeException x)
            {
                outcome.set(x);
            }
        });
        caller.start();
        await().until(() -> caller.getState() == Thread.State.TIMED_WAITING);
        return caller;
    }

    @Test
    void aBusyRedis_hasTheNextCallWaitForAPermit() throws Exception
    {
        CompletableFuture<String> held = heldCall();
        clock.addAndGet(PATIENCE.toNanos() / 2);
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread caller = waitingCall(outcome);

        answer.countDown();
        caller.join(TimeUnit.SECONDS.toMillis(30));
        assertEquals("held", held.get(30, TimeUnit.SECONDS));
        assertEquals("second", outcome.get(), "served once the permit came back, not refused");
        assertEquals(0, registry.get("sandgate.store.redis.waits.refused").counter().count());
    }

    @Test
    void aRedisSilentForThePatience_hasTheNextCallRefusedAtOnce()
    {
        heldCall();
        clock.addAndGet(PATIENCE.toNanos() + 1);

        StoreUnavailableException refused = assertTimeoutPreemptively(Duration.ofSeconds(5),
            () -> assertThrows(StoreUnavailableException.class, () -> waits.call("test store", () -> "second")));
        assertTrue(refused.getMessage().contains("test store unreachable: 1 requests already waiting for Redis"), refused.getMessage());
        assertEquals(1, registry.get("sandgate.store.redis.waits.refused").counter().count());
    }

    @Test
    void aPermitFreedByACallThatFailed_doesNotStartThePatienceAgain() throws Exception
    {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        RedisWaits two = new RedisWaits(2, PATIENCE, clock::get, meters);
        CountDownLatch timedOut = new CountDownLatch(1);
        CompletableFuture<Object> failing = CompletableFuture.supplyAsync(() -> two.call("test store", () ->
        {
            awaitQuietly(timedOut);
            throw new IllegalStateException("command timed out");
        }), threads);
        CompletableFuture<Object> hanging = CompletableFuture.supplyAsync(() -> two.call("test store", () ->
        {
            awaitQuietly(answer);
            return "late";
        }), threads);
        await().until(() -> waiting(meters) == 2);
        clock.addAndGet(PATIENCE.toNanos() + 1);
        timedOut.countDown();
        await().until(failing::isDone);

        // The freed permit goes to the next call; the one after it finds Redis still silent.
        CompletableFuture<Object> next = CompletableFuture.supplyAsync(() -> two.call("test store", () ->
        {
            awaitQuietly(answer);
            return "next";
        }), threads);
        await().until(() -> waiting(meters) == 2);
        assertTimeoutPreemptively(Duration.ofSeconds(5),
            () -> assertThrows(StoreUnavailableException.class, () -> two.call("test store", () -> "refused")));
        answer.countDown();
        assertEquals("late", hanging.get(30, TimeUnit.SECONDS));
        assertEquals("next", next.get(30, TimeUnit.SECONDS));
    }

    @Test
    void anIdleHour_isNotTakenForAHang() throws Exception
    {
        // Nothing called Redis for an hour; then two calls come at once.
        clock.addAndGet(TimeUnit.HOURS.toNanos(1));
        CompletableFuture<String> held = heldCall();
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread caller = waitingCall(outcome);

        answer.countDown();
        caller.join(TimeUnit.SECONDS.toMillis(30));
        assertEquals("held", held.get(30, TimeUnit.SECONDS));
        assertEquals("second", outcome.get());
    }

    @Test
    void aFailedCall_isTheStoreUnavailable_andGivesItsPermitBack()
    {
        IllegalStateException cause = new IllegalStateException("connection reset");
        StoreUnavailableException failed = assertThrows(StoreUnavailableException.class, () -> waits.call("test store", () ->
        {
            throw cause;
        }));
        assertEquals("test store unreachable", failed.getMessage());
        assertInstanceOf(IllegalStateException.class, failed.getCause());
        assertEquals("again", waits.call("test store", () -> "again"));
        assertFalse(registry.get("sandgate.store.redis.waits.refused").counter().count() > 0);
    }
}
