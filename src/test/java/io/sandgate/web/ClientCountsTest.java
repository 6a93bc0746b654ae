package io.sandgate.web;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClientCountsTest
{
    @Test
    void eachClientHoldsUpToTheLimit_andGetsPlacesBackAsItReleases()
    {
        ClientCounts counts = new ClientCounts(2);

        assertTrue(counts.tryAcquire("a"));
        assertTrue(counts.tryAcquire("a"));
        assertFalse(counts.tryAcquire("a"), "at the limit");
        assertEquals(2, counts.count("a"), "a refusal takes nothing");
        assertTrue(counts.tryAcquire("b"), "another client has its own places");

        counts.release("a");
        assertTrue(counts.tryAcquire("a"));
    }

    @Test
    void clientHoldingNothing_isForgotten_andAStrayReleaseChangesNothing()
    {
        ClientCounts counts = new ClientCounts(3);
        counts.tryAcquire("a");
        counts.tryAcquire("b");
        assertEquals(2, counts.clients());

        counts.release("a");
        counts.release("a");
        counts.release("never-seen");

        assertEquals(1, counts.clients());
        assertEquals(0, counts.count("a"));
        assertEquals(1, counts.count("b"));
    }

    /**
     * Threads taking and giving back for one client, so its count keeps reaching 0 and being spent
     * while others take: no one ever holds more than the limit, and nothing is left held or kept.
     */
    @Test
    void manyThreadsTakingAndGivingBack_neverPassTheLimit_andLeaveNothing() throws Exception
    {
        int limit = 2;
        ClientCounts counts = new ClientCounts(limit);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger taken = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try
        {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++)
            {
                done.add(threads.submit(() ->
                {
                    start.await();
                    for (int i = 0; i < 200_000; i++)
                    {
                        if (!counts.tryAcquire("a"))
                            continue;
                        taken.incrementAndGet();
                        most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        inside.decrementAndGet();
                        counts.release("a");
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> each : done)
                each.get(60, TimeUnit.SECONDS);
        }
        finally
        {
            threads.shutdownNow();
        }

        assertTrue(most.get() <= limit, "held at once: " + most.get());
        assertTrue(taken.get() > 0);
        assertEquals(0, counts.count("a"));
        assertEquals(0, counts.clients());
        assertTrue(counts.tryAcquire("a") && counts.tryAcquire("a") && !counts.tryAcquire("a"), "the limit holds afterwards");
    }

    @Test
    void limitBelowOne_isRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> new ClientCounts(0));
    }
}
