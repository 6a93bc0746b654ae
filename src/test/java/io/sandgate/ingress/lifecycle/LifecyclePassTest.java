package io.sandgate.ingress.lifecycle;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.LifecycleConfig;
import io.sandgate.core.Leadership;
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RoutePage;
import io.sandgate.ingress.UntouchedRoutes;
import io.sandgate.testing.LogCapture;
import io.sandgate.testing.MutableClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The leader's pass, by hand on a moved clock: what it counts, when it asks, and what a refused pause leaves behind. */
class LifecyclePassTest
{
    private static final Duration IDLE_AFTER = Duration.ofMinutes(1);
    private static final LifecycleConfig CONFIG = new LifecycleConfig(
        new LifecycleConfig.Wake(Optional.empty(), Optional.empty(), false, Duration.ofSeconds(30), 256, 4096, false), Duration.ofSeconds(10),
        new LifecycleConfig.Idle(Optional.of(IDLE_AFTER), Optional.of("http://127.0.0.1:1/pause"), true));

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Schedulers schedulers = Schedulers.create();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Map<String, Route> table = new TreeMap<>(Map.of("1", Route.of("10.0.0.1", 6080), "2", Route.paused(Optional.empty())));
    private final AtomicInteger asked = new AtomicInteger();
    private final SandboxManager refusing = new SandboxManager()
    {
        @Override
        public CompletableFuture<Void> resume(String sandboxId)
        {
            throw new AssertionError("resumed " + sandboxId);
        }

        @Override
        public CompletableFuture<Void> pause(String sandboxId)
        {
            asked.incrementAndGet();
            return CompletableFuture.failedFuture(new ManagerException("sandbox manager answered 409"));
        }
    };
    private final Leadership leading = Leadership.always();
    private final LifecyclePass pass = new LifecyclePass(CONFIG, routes(), ActivityTable.inMemory(), PauseClaims.inMemory(clock), refusing, leading, () -> true, schedulers, registry, clock);

    private UntouchedRoutes routes()
    {
        return new UntouchedRoutes()
        {
            @Override
            public Optional<Route> find(String id)
            {
                return Optional.ofNullable(table.get(id));
            }

            @Override
            public RoutePage search(String prefix, String cursor, int limit)
            {
                return new RoutePage(table, Optional.empty());
            }
        };
    }

    @AfterEach
    void stop()
    {
        schedulers.close();
    }

    @Test
    void aRefusedPause_isLoggedAuditedAndCounted_andAskedAgainOnlyAfterAnotherIdlePeriod()
    {
        leading.run(() -> { }, () -> { });
        pass.pass();
        assertEquals(1.0, gauge("running"));
        assertEquals(1.0, gauge("paused"));
        assertEquals(0, asked.get(), "a sandbox just seen running is not idle yet");

        clock.advance(IDLE_AFTER.plusSeconds(1));
        try (LogCapture audit = LogCapture.auditLog())
        {
            pass.pass();
            assertEquals(1, asked.get());
            assertTrue(audit.lines().stream().anyMatch(l -> l.contains("sandbox.pause.failed") && l.contains("\"1\"") && l.contains("answered 409")),
                audit.lines().toString());
        }
        assertEquals(1.0, registry.get("sandgate.sandbox.pauses").tag("outcome", "failed").counter().count());

        pass.pass();
        clock.advance(IDLE_AFTER.dividedBy(2));
        pass.pass();
        assertEquals(1, asked.get(), "asked again before another idle period");
        clock.advance(IDLE_AFTER);
        pass.pass();
        assertEquals(2, asked.get());
    }

    @Test
    void aLeaderElectedAgain_doesNotAskAgainForTheSameIdleSpell_whenTheManagerLeftTheSandboxRunning()
    {
        AtomicInteger accepted = new AtomicInteger();
        SandboxManager leavesItRunning = new SandboxManager()
        {
            @Override
            public CompletableFuture<Void> resume(String sandboxId)
            {
                throw new AssertionError("resumed " + sandboxId);
            }

            @Override
            public CompletableFuture<Void> pause(String sandboxId)
            {
                accepted.incrementAndGet();
                return CompletableFuture.completedFuture(null);
            }
        };
        // Elected, demoted and elected again, as a leader whose store answered late once is.
        Runnable[] elected = new Runnable[1];
        Leadership flapping = new Leadership()
        {
            @Override
            public void run(Runnable onElected, Runnable onDemoted)
            {
                elected[0] = onElected;
                onElected.run();
            }

            @Override
            public boolean isLeader()
            {
                return true;
            }

            @Override
            public void close()
            {
            }
        };
        PauseClaims claims = PauseClaims.inMemory(clock);
        LifecyclePass first = new LifecyclePass(CONFIG, routes(), ActivityTable.inMemory(), claims, leavesItRunning, flapping, () -> true, schedulers, registry, clock);
        first.start();
        first.pass();
        clock.advance(IDLE_AFTER.plusSeconds(1));
        first.pass();
        assertEquals(1, accepted.get());

        clock.advance(Duration.ofSeconds(5));
        elected[0].run();
        first.pass();
        clock.advance(IDLE_AFTER.plusSeconds(1));
        first.pass();
        clock.advance(IDLE_AFTER.multipliedBy(3));
        first.pass();
        assertEquals(1, accepted.get(), "the same idle spell was asked for again after a re-election");
    }

    /**
     * A leader whose own traffic has not reached the store (its process stalled, or its writes hang)
     * reads a table where every sandbox looks idle, the busy ones too: it counts, and pauses nothing
     * until its traffic is written again.
     */
    @Test
    void aLeaderOutOfStepWithTheStore_holdsItsPauses_untilItsTrafficIsWrittenAgain()
    {
        AtomicBoolean inStep = new AtomicBoolean(true);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        LifecyclePass stalled = new LifecyclePass(CONFIG, routes(), ActivityTable.inMemory(), PauseClaims.inMemory(clock), refusing, leading,
            inStep::get, schedulers, meters, clock);
        leading.run(() -> { }, () -> { });
        stalled.pass();
        clock.advance(IDLE_AFTER.plusSeconds(1));
        inStep.set(false);
        stalled.pass();
        stalled.pass();
        assertEquals(1.0, meters.get("sandgate.sandboxes").tag("state", "running").gauge().value(), "still counted");
        assertEquals(0, asked.get(), "paused while out of step");
        assertEquals(2.0, meters.get("sandgate.sandbox.lifecycle.held").counter().count());

        inStep.set(true);
        stalled.pass();
        assertEquals(1, asked.get());
    }

    @Test
    void notLeading_countsNothing()
    {
        pass.pass();
        assertTrue(Double.isNaN(gauge("running")));
        assertEquals(0, asked.get());
    }

    private double gauge(String state)
    {
        return registry.get("sandgate.sandboxes").tag("state", state).gauge().value();
    }
}
