package io.sandgate.mcp;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LifetimeTest
{
    /** A lifetime whose own state is guarded by its monitor, as {@link ClientStream}'s is. */
    private static final class Guarded extends Lifetime
    {
        @Override
        void close()
        {
            ended();
        }

        synchronized boolean stillOpen()
        {
            return isOpen();
        }
    }

    @Test
    void actionsRunOnce_andOneAddedAfterTheEnd_runsAtOnce()
    {
        Guarded lifetime = new Guarded();
        AtomicInteger runs = new AtomicInteger();
        lifetime.onClose(runs::incrementAndGet);

        lifetime.close();
        lifetime.close();
        assertEquals(1, runs.get());
        lifetime.onClose(runs::incrementAndGet);
        assertEquals(2, runs.get());
    }

    @Test
    void anActionThatWaits_doesNotHoldTheMonitor() throws Exception
    {
        Guarded lifetime = new Guarded();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        // As a store's delete waits for its server.
        lifetime.onClose(() ->
        {
            running.countDown();
            try
            {
                release.await(30, TimeUnit.SECONDS);
            }
            catch (InterruptedException x)
            {
                Thread.currentThread().interrupt();
            }
        });
        CompletableFuture<Void> ending = CompletableFuture.runAsync(lifetime::close);
        assertTrue(running.await(10, TimeUnit.SECONDS));
        try
        {
            // A writer to the stream meanwhile takes the monitor, and learns the stream has ended.
            assertFalse(CompletableFuture.supplyAsync(lifetime::stillOpen).get(10, TimeUnit.SECONDS));
        }
        finally
        {
            release.countDown();
        }
        ending.get(10, TimeUnit.SECONDS);
    }
}
