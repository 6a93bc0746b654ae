package io.sandgate.ingress.lifecycle;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.LifecycleConfig;
import io.sandgate.ingress.ActivityRecorder;
import io.sandgate.testing.MutableClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How a replica coalesces its notes into flushes, forgets quiet sandboxes, and recovers from a failed write. */
class ReplicaActivityTest
{
    private static final Duration FLUSH = Duration.ofSeconds(10);
    private static final LifecycleConfig CONFIG = new LifecycleConfig(
        new LifecycleConfig.Wake(Optional.empty(), Optional.empty(), false, Duration.ofSeconds(30), 256, 4096, false), FLUSH,
        new LifecycleConfig.Idle(Optional.empty(), Optional.empty(), true));

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    /** Never run: the test flushes by hand. */
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final List<ActivityTable.Flush> written = new CopyOnWriteArrayList<>();
    private volatile boolean failing;
    private final ActivityTable table = new ActivityTable()
    {
        @Override
        public CompletableFuture<Void> publish(Flush flush)
        {
            if (failing)
                return CompletableFuture.failedFuture(new IllegalStateException("store down"));
            written.add(flush);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<SandboxActivity> sandbox(String sandboxId)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Map<String, Summary>> all()
        {
            throw new UnsupportedOperationException();
        }
    };
    private final ReplicaActivity activity = new ReplicaActivity("r1", CONFIG, table, timer, new SimpleMeterRegistry(), clock);

    @AfterEach
    void stop()
    {
        timer.shutdownNow();
    }

    private ActivityTable.Flush flush()
    {
        int before = written.size();
        activity.flush();
        return written.size() > before ? written.get(written.size() - 1) : null;
    }

    @Test
    void manyNotesBetweenFlushes_makeOneEntryEach_andAQuietFlushWritesNothing()
    {
        ActivityRecorder.WebSocket desktop = activity.webSocketOpened("1");
        for (int i = 0; i < 100_000; i++)
            desktop.carried();
        activity.forwarded("2");
        activity.forwarded("2");
        clock.advance(Duration.ofSeconds(1));
        ActivityTable.Flush first = flush();
        assertEquals(Set.of("1", "2"), first.lastActivity().keySet());
        assertEquals(Map.of("1", 1), first.openWebSockets());

        // Nothing carried since, no WebSocket changed: nothing but the open count to keep alive.
        ActivityTable.Flush second = flush();
        assertEquals(Map.of(), second.lastActivity());
        assertEquals(Map.of("1", 1), second.openWebSockets());

        desktop.closed();
        desktop.closed();
        ActivityTable.Flush closing = flush();
        assertEquals(Set.of("1"), closing.closedWebSockets());
        assertEquals(Map.of(), closing.openWebSockets());
        assertEquals(null, flush(), "a flush with nothing to say writes nothing");
    }

    @Test
    void inStep_untilNoFlushWasWrittenForThreeFlushes_andAgainOnceOneIs()
    {
        assertTrue(activity.inStep(), "a replica just started has nothing the table lacks");
        activity.forwarded("1");
        clock.advance(FLUSH);
        flush();
        clock.advance(FLUSH.multipliedBy(3));
        assertTrue(activity.inStep(), "three flushes after the last one written");

        // A stall: no flush ran for a moment longer than that.
        clock.advance(Duration.ofMillis(1));
        assertFalse(activity.inStep());

        // The store refuses the write: the table still lacks this traffic.
        failing = true;
        activity.forwarded("1");
        flush();
        assertFalse(activity.inStep());
        failing = false;
        flush();
        assertTrue(activity.inStep());

        // A flush with nothing to write leaves the table as up to date as the replica.
        clock.advance(FLUSH.multipliedBy(4));
        assertFalse(activity.inStep());
        assertEquals(null, flush());
        assertTrue(activity.inStep());
    }

    @Test
    void aSandboxQuietForTheRetention_isForgotten_unlessAWebSocketIsOpen()
    {
        activity.forwarded("quiet");
        ActivityRecorder.WebSocket open = activity.webSocketOpened("open");
        flush();
        clock.advance(ReplicaActivity.retention(CONFIG).plusSeconds(1));
        ActivityTable.Flush later = flush();
        assertEquals(Set.of("quiet"), later.forgotten());
        assertEquals(1, activity.tracked());
        open.closed();
        flush();
        assertEquals(1, activity.tracked(), "a sandbox whose WebSocket just closed is kept until it has been quiet as long");
        clock.advance(ReplicaActivity.retention(CONFIG).plusSeconds(1));
        assertEquals(Set.of("open"), flush().forgotten());
        assertEquals(0, activity.tracked());
    }

    @Test
    void afterAFailedWrite_theNextFlushWritesEverythingAgain()
    {
        activity.forwarded("1");
        activity.forwarded("2");
        failing = true;
        activity.flush();
        failing = false;
        ActivityTable.Flush retried = flush();
        assertEquals(Set.of("1", "2"), retried.lastActivity().keySet());
        assertTrue(flush() == null);
    }
}
