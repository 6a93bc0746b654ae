package io.sandgate.ingress.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.LifecycleConfig;
import io.sandgate.core.Audit;
import io.sandgate.core.Leadership;
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RoutePage;
import io.sandgate.ingress.RouteStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one replica, the leader, does for the lifecycle of all sandboxes: a pass over the route table
 * a page at a time that counts the sandboxes by state (the gauge a scrape reads, so that no scrape
 * walks the table) and, with {@code ingress.idle.after}, asks the manager to pause each running
 * sandbox that carried no traffic on any replica for that long.
 *
 * <p>A sandbox's idle spell starts at its last traffic on any replica ({@link ActivityTable}), or
 * when this leader first saw it running, whichever is later: one never visited is not paused before
 * it had the idle time to be, nor one resumed without traffic. With
 * {@code ingress.idle.count-open-websockets} (the default) a sandbox with a WebSocket open anywhere
 * is never paused, however quiet. A spell is paused once: only running routes are asked about, and
 * a claim in the store ({@link PauseClaims}) stops a second ask while the manager takes its time,
 * whichever replica leads by then.</p>
 *
 * <p>The pass pauses nothing while this replica's own traffic is not in the table
 * ({@link ReplicaActivity#inStep()}): after a stall of the process, or while its writes hang, the
 * table is as it was before, and every sandbox would look idle at once.</p>
 */
public final class LifecyclePass implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(LifecyclePass.class);
    /** Without idle pause the pass only counts, and a count a minute old is recent enough. */
    private static final Duration CENSUS_EVERY = Duration.ofMinutes(1);
    private static final Duration FIRST_PASS = Duration.ofSeconds(5);
    /** Routes read per page of the walk. */
    private static final int PAGE = 1000;
    /** Pauses asked at once: a first pass after idle pause is switched on may find thousands idle. */
    private static final int PAUSING_AT_ONCE = 16;
    /** The longest the pass waits for the store or for a pause to finish before it leaves the rest to the next pass. */
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final LifecycleConfig config;
    private final RouteStore routes;
    private final ActivityTable activity;
    private final PauseClaims claims;
    private final SandboxManager manager;
    private final Leadership leadership;
    private final Schedulers schedulers;
    private final Clock clock;
    private final Duration period;
    private final Duration claimTtl;
    private final Semaphore pausing = new Semaphore(PAUSING_AT_ONCE);
    private final Counter paused;
    private final Counter pauseFailed;
    private final Counter held;
    private final BooleanSupplier inStep;
    /** Whether the last pass held its pauses; the log says so when that changes, not at every pass. */
    private volatile boolean holding;
    /** When each running sandbox was first seen running by this leader, epoch millis; replaced whole by each complete pass. */
    private volatile Map<String, Long> runningSince = Map.of();
    /** The last complete count while leading; null otherwise, and the gauges then read NaN. */
    private volatile Census census;
    private volatile ScheduledFuture<?> passes;

    private record Census(int running, int paused)
    {
    }

    /**
     * A sandbox due a pause: idle since {@code since}, in the spell its last traffic began
     * ({@code spell}, 0 when it has none on record). The claim is keyed by the traffic, which every
     * replica reads alike, not by when this leader first saw the route: a leader elected anew sees
     * every route for the first time, and would otherwise ask for the same spell's pause again.
     */
    private record Idle(String sandboxId, long since, long spell)
    {
    }

    /**
     * @param manager asked to pause idle sandboxes; {@link SandboxManager#NONE} when idle pause is off
     * @param leadership which replica makes the pass
     * @param inStep whether this replica's own traffic is in the table lately ({@link ReplicaActivity#inStep()})
     */
    public LifecyclePass(LifecycleConfig config, RouteStore routes, ActivityTable activity, PauseClaims claims, SandboxManager manager,
                         Leadership leadership, BooleanSupplier inStep, Schedulers schedulers, MeterRegistry registry, Clock clock)
    {
        this.config = config;
        this.routes = routes;
        this.activity = activity;
        this.claims = claims;
        this.manager = manager;
        this.leadership = leadership;
        this.inStep = inStep;
        this.schedulers = schedulers;
        this.clock = clock;
        this.period = config.idle().after().map(after ->
        {
            Duration tenth = after.dividedBy(10);
            return tenth.compareTo(config.activityFlush()) > 0 ? tenth : config.activityFlush();
        }).orElse(CENSUS_EVERY);
        this.claimTtl = ReplicaActivity.retention(config);
        this.paused = pauses(registry, "ok");
        this.pauseFailed = pauses(registry, "failed");
        this.held = Counter.builder("sandgate.sandbox.lifecycle.held")
            .description("Lifecycle passes that paused nothing: this replica's own traffic was not in the store lately").register(registry);
        for (Route.State state : Route.State.values())
        {
            Gauge.builder("sandgate.sandboxes", this, pass -> pass.count(state)).tag("state", state.label())
                .description("Sandboxes by the state of their route, as the lifecycle leader last counted them; NaN on the other replicas")
                .register(registry);
        }
    }

    private static Counter pauses(MeterRegistry registry, String outcome)
    {
        return Counter.builder("sandgate.sandbox.pauses").tag("outcome", outcome)
            .description("Idle sandboxes this replica asked the manager to pause, by outcome").register(registry);
    }

    private double count(Route.State state)
    {
        Census counted = census;
        if (counted == null)
            return Double.NaN;
        return state == Route.State.RUNNING ? counted.running : counted.paused;
    }

    /** Runs for leadership, and makes the pass while leading. */
    public void start()
    {
        // A new leader starts every sandbox's spell afresh: what an earlier stint saw may be stale.
        leadership.run(() -> runningSince = Map.of(), () -> census = null);
        // The first count soon after start, not a whole census period later.
        Duration first = period.compareTo(FIRST_PASS) < 0 ? period : FIRST_PASS;
        passes = schedulers.every(first, period, "sandbox lifecycle pass", this::pass);
    }

    /** One walk over the routes; the counts and the spells change only when it reached the end. */
    void pass()
    {
        if (!leadership.isLeader())
        {
            census = null;
            return;
        }
        try
        {
            walk();
        }
        catch (RuntimeException x)
        {
            // The store did not answer: the next pass walks again. A line, not a trace every period.
            LOG.warn("Sandbox lifecycle pass stopped: {}", x.getMessage());
        }
    }

    private void walk()
    {
        long now = clock.millis();
        Optional<Duration> after = config.idle().after();
        // Read before the table: a flush that lands between the two cannot make an old table look current.
        boolean current = inStep.getAsBoolean();
        Map<String, ActivityTable.Summary> traffic = after.isPresent() ? join(activity.all()) : Map.of();
        Map<String, Long> seenSince = runningSince;
        Map<String, Long> running = new HashMap<>();
        List<Idle> idle = new ArrayList<>();
        int paused = 0;
        String cursor = null;
        do
        {
            RoutePage page = routes.search("", cursor, PAGE);
            for (Map.Entry<String, Route> entry : page.routes().entrySet())
            {
                if (!entry.getValue().running())
                {
                    paused++;
                    continue;
                }
                String id = entry.getKey();
                long since = seenSince.getOrDefault(id, now);
                running.put(id, since);
                if (after.isPresent())
                {
                    ActivityTable.Summary seen = traffic.get(id);
                    idleSince(id, since, seen, now, after.get()).ifPresent(idleSince -> idle.add(new Idle(id, idleSince, seen == null ? 0 : seen.lastActivity())));
                }
            }
            cursor = page.next().orElse(null);
        }
        while (cursor != null && leadership.isLeader());
        if (!leadership.isLeader())
            return;
        runningSince = after.isPresent() ? running : Map.of();
        census = new Census(running.size(), paused);
        if (!idle.isEmpty() && !current)
        {
            held.increment();
            if (!holding)
                LOG.warn("Idle pauses held: this replica's traffic has not reached the store lately (a stall, or the store not answering)");
            holding = true;
            return;
        }
        if (holding)
            LOG.info("Idle pauses resumed: this replica's traffic reaches the store again");
        holding = false;
        for (Idle spell : idle)
        {
            if (!leadership.isLeader() || !pause(spell))
                break;
        }
    }

    /** When the sandbox's idle spell began, if it is due a pause now. */
    private Optional<Long> idleSince(String id, long seenRunning, ActivityTable.Summary traffic, long now, Duration after)
    {
        long since = Math.max(seenRunning, traffic == null ? 0 : traffic.lastActivity());
        if (now - since < after.toMillis())
            return Optional.empty();
        if (config.idle().countOpenWebsockets() && traffic != null && traffic.webSockets() > 0)
            return Optional.empty();
        return Optional.of(since);
    }

    /**
     * Claims the spell and asks the manager, without waiting for its answer.
     *
     * @return false when the pass should leave the rest to the next one: too many pauses unanswered
     */
    private boolean pause(Idle spell)
    {
        if (!Boolean.TRUE.equals(join(claims.claim(spell.sandboxId, spell.spell, claimTtl))))
            return true;
        try
        {
            if (!pausing.tryAcquire(WAIT.toMillis(), TimeUnit.MILLISECONDS))
            {
                claims.retryAfter(spell.sandboxId, Duration.ZERO);
                return false;
            }
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            return false;
        }
        long idleSeconds = (clock.millis() - spell.since) / 1000;
        manager.pause(spell.sandboxId).whenComplete((ignored, failure) ->
        {
            pausing.release();
            if (failure == null)
            {
                paused.increment();
                LOG.info("Sandbox {} paused: no traffic for {} s", spell.sandboxId, idleSeconds);
                return;
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            String reason = cause instanceof SandboxManager.ManagerException ? cause.getMessage() : "failed (" + cause.getClass().getSimpleName() + ")";
            pauseFailed.increment();
            LOG.warn("Sandbox {} could not be paused: {}", spell.sandboxId, reason);
            Audit.lifecycleFailed(spell.sandboxId, "pause", reason);
            // Asked again once it has been idle that much longer, not at every pass.
            claims.retryAfter(spell.sandboxId, config.idle().after().orElse(period));
        });
        return true;
    }

    private static <T> T join(java.util.concurrent.CompletableFuture<T> future)
    {
        try
        {
            return future.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", x);
        }
        catch (Exception x)
        {
            throw new IllegalStateException("the store did not answer: " + x.getClass().getSimpleName(), x);
        }
    }

    @Override
    public void close()
    {
        if (passes != null)
            passes.cancel(false);
        leadership.close();
    }
}
