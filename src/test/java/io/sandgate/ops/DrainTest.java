package io.sandgate.ops;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.DrainConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The drain's timeline without a server: connections that close when told (or never), requests in
 * flight that end when the test says, on a real timer. {@code DrainIT} runs it in a gateway.
 */
class DrainTest
{
    private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @AfterEach
    void stop()
    {
        timer.shutdownNow();
    }

    /** Connections of one kind: each closes when its closer runs, unless told to stay. */
    private static final class Fake
    {
        final AtomicInteger open;
        final ConcurrentLinkedQueue<Long> closedAt = new ConcurrentLinkedQueue<>();
        final boolean stays;

        Fake(int count, boolean stays)
        {
            this.open = new AtomicInteger(count);
            this.stays = stays;
        }

        List<BooleanSupplier> closers()
        {
            List<BooleanSupplier> closers = new ArrayList<>();
            for (int i = closedAt.size(); i < open.get(); i++)
            {
                closers.add(() ->
                {
                    closedAt.add(System.nanoTime());
                    if (!stays)
                        open.decrementAndGet();
                    return true;
                });
            }
            return closers;
        }

        Drain.Connections as(String kind)
        {
            return new Drain.Connections(kind, open::get, this::closers);
        }
    }

    private Drain drain(DrainConfig config, Fake... kinds)
    {
        List<Drain.Connections> connections = new ArrayList<>();
        for (int i = 0; i < kinds.length; i++)
            connections.add(kinds[i].as("kind" + i));
        return new Drain(config, connections, timer, Runnable::run, registry);
    }

    @Test
    void closesAreSpreadEvenly_afterTheGrace_andTheDrainFinishesWhenNothingIsLeft() throws Exception
    {
        Fake sockets = new Fake(5, false);
        Drain drain = drain(new DrainConfig(Duration.ofMillis(200), Duration.ofMillis(1000), Duration.ofSeconds(10)), sockets);

        long began = System.nanoTime();
        assertTrue(drain.begin(Drain.Cause.ADMIN));

        assertTrue(drain.draining());
        assertEquals(Drain.Outcome.DRAINED, drain.finished().get(5, TimeUnit.SECONDS));
        List<Long> offsets = sockets.closedAt.stream().map(at -> (at - began) / 1_000_000).sorted().toList();
        assertEquals(5, offsets.size());
        assertTrue(offsets.get(0) >= 190, () -> "the first close after the grace: " + offsets);
        // 0, 200, 400, 600 and 800 ms into the spread.
        assertTrue(offsets.get(4) - offsets.get(0) >= 700, () -> "spread over the spread: " + offsets);
        assertEquals(5.0, registry.get("sandgate.drain.closed").tag("kind", "kind0").counter().count());
    }

    @Test
    void requestsInFlight_holdTheDrainUntilTheyEnd() throws Exception
    {
        Drain drain = drain(new DrainConfig(Duration.ZERO, Duration.ZERO, Duration.ofSeconds(10)), new Fake(2, false));
        CompletableFuture<Void> inFlight = new CompletableFuture<>();
        AtomicInteger stopped = new AtomicInteger();
        drain.attach(() ->
        {
            stopped.incrementAndGet();
            return inFlight;
        });

        drain.begin(Drain.Cause.SIGNAL);

        await().until(() -> stopped.get() == 1);
        assertFalse(drain.finished().isDone(), "a request is still in flight");
        inFlight.complete(null);
        assertEquals(Drain.Outcome.DRAINED, drain.finished().get(5, TimeUnit.SECONDS));
        assertEquals(1, stopped.get(), "the server is told once to stop taking requests");
    }

    @Test
    void aConnectionThatNeverCloses_endsTheDrainAtItsTimeout() throws Exception
    {
        Fake stubborn = new Fake(1, true);
        Drain drain = drain(new DrainConfig(Duration.ZERO, Duration.ZERO, Duration.ofMillis(500)), new Fake(3, false), stubborn);

        long began = System.nanoTime();
        drain.begin(Drain.Cause.ADMIN);

        assertEquals(Drain.Outcome.TIMED_OUT, drain.finished().get(5, TimeUnit.SECONDS));
        assertTrue(System.nanoTime() - began >= Duration.ofMillis(480).toNanos());
        assertEquals(Duration.ZERO, drain.remaining());
        assertEquals(1, stubborn.closedAt.size(), "asked to close once, though it stayed open");
    }

    @Test
    void aDrainBegunTwice_isOneDrain() throws Exception
    {
        Fake sockets = new Fake(3, false);
        Drain drain = drain(new DrainConfig(Duration.ofMillis(100), Duration.ofMillis(100), Duration.ofSeconds(10)), sockets);

        assertTrue(drain.begin(Drain.Cause.ADMIN));
        Object since = drain.view().get("since");
        assertFalse(drain.begin(Drain.Cause.ADMIN));
        assertFalse(drain.begin(Drain.Cause.SIGNAL));

        assertEquals(since, drain.view().get("since"));
        assertEquals("admin", drain.view().get("cause"));
        assertEquals(Drain.Outcome.DRAINED, drain.finished().get(5, TimeUnit.SECONDS));
        assertEquals(3, sockets.closedAt.size(), "each connection closed once");
    }

    /** A container stopping the webapp sends it nothing new already: no grace to wait out. */
    @Test
    void aContainerStoppingTheWebapp_skipsTheGrace() throws Exception
    {
        Fake sockets = new Fake(1, false);
        Drain drain = drain(new DrainConfig(Duration.ofSeconds(30), Duration.ZERO, Duration.ofSeconds(60)), sockets);

        drain.begin(Drain.Cause.CONTEXT);

        assertEquals(Drain.Outcome.DRAINED, drain.finished().get(5, TimeUnit.SECONDS));
    }

    @Test
    void servingReplica_isNotDraining_andHasNotFinished()
    {
        Drain drain = drain(new DrainConfig(Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30)), new Fake(1, false));

        assertFalse(drain.draining());
        assertFalse(drain.finished().isDone());
        assertEquals("serving", drain.view().get("state"));
        assertEquals(0.0, registry.get("sandgate.drain.draining").gauge().value());
    }
}
