package io.sandgate.ingress.lifecycle;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.LifecycleConfig;
import io.sandgate.ingress.ActivityRecorder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This replica's record of the traffic it carried per sandbox, published to the {@link ActivityTable}
 * coalesced: every {@code ingress.activity.flush}, the sandboxes that carried traffic since the last
 * flush, all in one write, so that a desktop streaming frames costs the store one entry per flush.
 *
 * <p>A note reads the time of the last tick (a field the timer moves a few times per flush) rather
 * than a clock, and writes the sandbox's field only when the tick moved: a frame costs two reads.
 * Requests find their sandbox's entry through the map; a WebSocket holds its entry for as long as it
 * is open. A sandbox quiet for the retention, with no WebSocket open, is forgotten here and in the
 * table, so the record holds the sandboxes forwarded to lately and nothing a client merely named.</p>
 */
public final class ReplicaActivity implements ActivityRecorder, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaActivity.class);
    /** Kept at least this long, so that the admin view shows an hour of a sandbox's past even without idle pause. */
    private static final Duration MIN_RETENTION = Duration.ofHours(1);
    /** WebSocket counts outlive a replica by a few flushes, and never less than this: a slow flush must not hide them. */
    private static final Duration MIN_WEBSOCKET_TTL = Duration.ofSeconds(10);
    private static final int WEBSOCKET_TTL_FLUSHES = 3;
    private static final Duration MAX_TICK = Duration.ofSeconds(1);
    private static final Duration CLOSE_FLUSH_WAIT = Duration.ofSeconds(1);
    /** The table is this replica's traffic of at most this many flushes ago, and never less than {@link #MIN_IN_STEP}. */
    private static final int IN_STEP_FLUSHES = 3;
    private static final Duration MIN_IN_STEP = Duration.ofSeconds(1);

    private final String replica;
    private final ActivityTable table;
    private final Clock clock;
    private final Duration flushEvery;
    private final Duration retention;
    private final Duration webSocketTtl;
    private final Duration inStepWithin;
    /** The time of the newest traffic the table holds in full, epoch millis: a flush's when it was written or had nothing to write. */
    private volatile long upToDate;
    private final ScheduledExecutorService timer;
    private final Map<String, Sandbox> sandboxes = new ConcurrentHashMap<>();
    /** A request's note, made under the map's lock for its id so that it never lands on an entry being forgotten. */
    private final BiFunction<String, Sandbox, Sandbox> forward = (id, sandbox) ->
    {
        Sandbox noted = sandbox != null ? sandbox : new Sandbox();
        noted.carried();
        return noted;
    };
    private final Counter flushed;
    private final Counter flushFailed;
    private final Counter entries;
    /** The time, epoch millis, as of the last tick: what every note writes. */
    private volatile long tick;
    /** A flush is being written; the next waits for it rather than overtaking it. */
    private final AtomicBoolean writing = new AtomicBoolean();
    /** The last write failed: the next writes every entry again, as the store may have missed any of them. */
    private volatile boolean writeAll;
    /** Forgotten here but not yet in the table. Touched by one flush at a time ({@link #writing}). */
    private final Set<String> forgetting = new HashSet<>();
    private volatile ScheduledFuture<?> ticks;
    private volatile ScheduledFuture<?> flushes;

    /** One sandbox's traffic on this replica. */
    private final class Sandbox
    {
        /** When it last carried traffic, epoch millis by the tick. */
        volatile long last;
        /** Open WebSockets; changed only under the map's lock for the sandbox's id. */
        volatile int webSockets;
        /** What the last flush wrote; the flush's own. */
        long writtenLast;
        int writtenWebSockets;

        Sandbox()
        {
            last = tick;
        }

        void carried()
        {
            long now = tick;
            if (last != now)
                last = now;
        }
    }

    /** A WebSocket's notes: its sandbox's entry, held until it closes. */
    private final class OpenWebSocket implements ActivityRecorder.WebSocket
    {
        private final String sandboxId;
        private final Sandbox sandbox;
        private final AtomicBoolean closed = new AtomicBoolean();

        OpenWebSocket(String sandboxId, Sandbox sandbox)
        {
            this.sandboxId = sandboxId;
            this.sandbox = sandbox;
        }

        @Override
        public void carried()
        {
            sandbox.carried();
        }

        @Override
        public void closed()
        {
            if (!closed.compareAndSet(false, true))
                return;
            sandboxes.compute(sandboxId, (id, current) ->
            {
                // Never forgotten while open, so the entry is this WebSocket's.
                sandbox.webSockets--;
                sandbox.carried();
                return sandbox;
            });
        }
    }

    /**
     * @param replica this replica's name among those sharing the table ({@link #replicaName()})
     * @param timer runs the ticks and the flushes, which never wait
     */
    public ReplicaActivity(String replica, LifecycleConfig config, ActivityTable table, ScheduledExecutorService timer, MeterRegistry registry, Clock clock)
    {
        this.replica = replica;
        this.table = table;
        this.clock = clock;
        this.timer = timer;
        this.flushEvery = config.activityFlush();
        this.retention = retention(config);
        Duration ttl = flushEvery.multipliedBy(WEBSOCKET_TTL_FLUSHES);
        this.webSocketTtl = ttl.compareTo(MIN_WEBSOCKET_TTL) < 0 ? MIN_WEBSOCKET_TTL : ttl;
        Duration inStep = flushEvery.multipliedBy(IN_STEP_FLUSHES);
        this.inStepWithin = inStep.compareTo(MIN_IN_STEP) < 0 ? MIN_IN_STEP : inStep;
        this.upToDate = clock.millis();
        this.tick = clock.millis();
        this.flushed = flushes(registry, "ok");
        this.flushFailed = flushes(registry, "failed");
        this.entries = Counter.builder("sandgate.sandbox.activity.entries")
            .description("Sandboxes' last activity written to the store, one per sandbox per flush at most").register(registry);
        registry.gaugeMapSize("sandgate.sandbox.activity.tracked", java.util.List.of(), sandboxes);
    }

    private static Counter flushes(MeterRegistry registry, String outcome)
    {
        return Counter.builder("sandgate.sandbox.activity.flushes").tag("outcome", outcome)
            .description("Writes of this replica's sandbox activity to the store, by outcome").register(registry);
    }

    /**
     * How long a sandbox's activity is kept after its last traffic, here and in the table: at least
     * as long as the idle pause may still need it (a replica that died with the sandbox's last
     * traffic must still count), and never under an hour.
     */
    public static Duration retention(LifecycleConfig config)
    {
        Duration needed = config.idle().after().map(after -> after.plus(config.activityFlush().multipliedBy(3))).orElse(Duration.ZERO);
        return needed.compareTo(MIN_RETENTION) > 0 ? needed : MIN_RETENTION;
    }

    /**
     * A name for this replica that no other sharing the store has: the host's (the pod's, in
     * Kubernetes), so that an operator knows which it is, and a random suffix, as two may share a host.
     */
    public static String replicaName()
    {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank())
        {
            try
            {
                host = InetAddress.getLocalHost().getHostName();
            }
            catch (UnknownHostException x)
            {
                host = "replica";
            }
        }
        // Only what a key and a label may safely hold: no braces (a Redis hash tag), no spaces.
        String safe = host.replaceAll("[^A-Za-z0-9.-]", "");
        if (safe.isEmpty())
            safe = "replica";
        byte[] suffix = new byte[3];
        ThreadLocalRandom.current().nextBytes(suffix);
        return safe.substring(0, Math.min(safe.length(), 48)) + "-" + HexFormat.of().formatHex(suffix);
    }

    public String replica()
    {
        return replica;
    }

    /**
     * Whether the table holds this replica's traffic up to a few flushes ago. It does not when the
     * replica stalled (a long collection, a starved CPU: no flush ran) or its writes fail or hang;
     * then the table shows every sandbox as quiet as it was before, and the idle pass must not
     * trust it.
     */
    public boolean inStep()
    {
        return clock.millis() - upToDate <= inStepWithin.toMillis();
    }

    /** Starts the ticks and the flushes. */
    public void start()
    {
        long tickMillis = Math.max(10, Math.min(MAX_TICK.toMillis(), flushEvery.toMillis() / 4));
        ticks = timer.scheduleAtFixedRate(() -> tick = clock.millis(), tickMillis, tickMillis, TimeUnit.MILLISECONDS);
        flushes = timer.scheduleWithFixedDelay(this::flush, flushEvery.toMillis(), flushEvery.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void forwarded(String sandboxId)
    {
        sandboxes.compute(sandboxId, forward);
    }

    @Override
    public WebSocket webSocketOpened(String sandboxId)
    {
        Sandbox sandbox = sandboxes.compute(sandboxId, (id, current) ->
        {
            Sandbox opened = current != null ? current : new Sandbox();
            opened.webSockets++;
            opened.carried();
            return opened;
        });
        return new OpenWebSocket(sandboxId, sandbox);
    }

    /** Writes what changed since the last flush, unless that one is still being written. */
    void flush()
    {
        if (!writing.compareAndSet(false, true))
            return;
        long collected = clock.millis();
        ActivityTable.Flush flush;
        try
        {
            flush = collect();
        }
        catch (RuntimeException x)
        {
            writing.set(false);
            throw x;
        }
        if (flush.quiet())
        {
            upToDate = collected;
            writing.set(false);
            return;
        }
        table.publish(flush).whenComplete((written, failure) ->
        {
            if (failure == null)
            {
                upToDate = collected;
                flushed.increment();
                entries.increment(flush.lastActivity().size());
            }
            else
            {
                flushFailed.increment();
                writeAll = true;
                forgetting.addAll(flush.forgotten());
                LOG.debug("Sandbox activity not written; the next flush writes it all", failure);
            }
            writing.set(false);
        });
    }

    /** What changed since the last flush; forgets the sandboxes quiet for the retention with no WebSocket open. */
    private ActivityTable.Flush collect()
    {
        long now = clock.millis();
        tick = now;
        boolean all = writeAll;
        writeAll = false;
        Map<String, Long> last = new HashMap<>();
        Map<String, Integer> open = new HashMap<>();
        Set<String> closed = new HashSet<>();
        Set<String> forgotten = new HashSet<>(forgetting);
        forgetting.clear();
        for (Map.Entry<String, Sandbox> entry : sandboxes.entrySet())
        {
            String id = entry.getKey();
            Sandbox sandbox = entry.getValue();
            long carried = sandbox.last;
            int webSockets = sandbox.webSockets;
            if (webSockets == 0 && now - carried > retention.toMillis() && forget(id, sandbox, carried))
            {
                forgotten.add(id);
                closed.add(id);
                continue;
            }
            if (webSockets > 0)
                open.put(id, webSockets);
            else if (sandbox.writtenWebSockets > 0 || all)
                closed.add(id);
            sandbox.writtenWebSockets = webSockets;
            if (carried != sandbox.writtenLast || all)
            {
                last.put(id, carried);
                sandbox.writtenLast = carried;
            }
        }
        return new ActivityTable.Flush(replica, last, forgotten, open, closed, retention, webSocketTtl);
    }

    /** Removes the entry if it is still quiet and closed, atomically against a request or WebSocket noting it meanwhile. */
    private boolean forget(String id, Sandbox sandbox, long carried)
    {
        boolean[] removed = new boolean[1];
        sandboxes.computeIfPresent(id, (key, current) ->
        {
            removed[0] = current == sandbox && current.webSockets == 0 && current.last == carried;
            return removed[0] ? null : current;
        });
        return removed[0];
    }

    /** Sandboxes this replica keeps a record of now. */
    public int tracked()
    {
        return sandboxes.size();
    }

    /** Stops flushing, after one last flush so that the table has this replica's last traffic and closed WebSockets. */
    @Override
    public void close()
    {
        for (ScheduledFuture<?> scheduled : new ScheduledFuture<?>[] {ticks, flushes})
        {
            if (scheduled != null)
                scheduled.cancel(false);
        }
        try
        {
            timer.submit(this::flush).get(CLOSE_FLUSH_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (Exception x)
        {
            LOG.debug("Last activity flush not done", x);
        }
    }
}
