package io.sandgate.ops;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.DrainConfig;
import io.sandgate.core.Audit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a replica leaves without dropping its clients (SIGTERM, {@code POST /admin/drain}, a
 * container stopping the webapp). In order:
 * <ol>
 * <li>{@code /readyz} answers 503 at once, while the listeners keep serving for
 * {@code server.drain.grace}: a balancer needs a few failed checks to take the replica out, and
 * a request it sends meanwhile must not fail;</li>
 * <li>then the server takes no new requests ({@link Listeners#stopTaking}), and those in flight
 * finish;</li>
 * <li>the long-lived connections (bridged WebSockets with 1012, MCP client streams) are closed one
 * at a time, evenly over {@code server.drain.spread}, so that their clients reconnect to the other
 * replicas a few at a time rather than all in the same second;</li>
 * <li>{@link #finished()} completes once nothing is left open, or at {@code server.drain.timeout}
 * after the start, whichever comes first; the embedded runner then stops, and the process ends.</li>
 * </ol>
 * A drain begins once: asking again (a second admin call, SIGTERM during an admin drain) joins
 * the one under way. Its state only moves forward, in one place, under this object's lock.
 */
public final class Drain
{
    private static final Logger LOG = LoggerFactory.getLogger(Drain.class);
    /**
     * How often a drain past its grace looks whether anything is left: connections end on their own
     * threads (close handshakes, clients going away), and reading three counts is cheaper than
     * being told of each end.
     */
    private static final long CHECK_MILLIS = 50;

    /** What began a drain. */
    public enum Cause
    {
        /** SIGTERM to the embedded runner (a rolling update, {@code docker stop}). */
        SIGNAL("signal", true),
        /** {@code POST /admin/drain}. */
        ADMIN("admin", true),
        /**
         * The servlet container stops the webapp. It sends the context no new request by then, so a
         * grace would only delay the rest.
         */
        CONTEXT("context shutdown", false);

        private final String label;
        private final boolean grace;

        Cause(String label, boolean grace)
        {
            this.label = label;
            this.grace = grace;
        }
    }

    /** How a drain ended. */
    public enum Outcome
    {
        /** Nothing was left open. */
        DRAINED,
        /** {@code server.drain.timeout} passed first; what is left is cut. */
        TIMED_OUT
    }

    /** Where a drain is; it never goes back. */
    private enum State
    {
        SERVING, GRACE, CLOSING, FINISHED
    }

    /**
     * One kind of long-lived connection a drain closes.
     *
     * @param kind names them in logs and in the {@code kind} label ({@code websocket}, {@code mcp_stream})
     * @param open how many are open, those closing included
     * @param closers one action per connection that runs and is not closing yet, each closing it and
     *                true when that call began the close (a connection may close on its own meanwhile)
     */
    public record Connections(String kind, IntSupplier open, Supplier<List<BooleanSupplier>> closers)
    {
        public Connections
        {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(open, "open");
            Objects.requireNonNull(closers, "closers");
        }
    }

    /** The server's side of a drain. */
    @FunctionalInterface
    public interface Listeners
    {
        /** In a servlet container: the container stops its own connectors and requests. */
        Listeners CONTAINER = () -> CompletableFuture.completedFuture(null);

        /**
         * Refuses new requests from now on; the future completes once the requests in flight have
         * ended. Called once, when the grace is over.
         */
        CompletableFuture<Void> stopTaking();
    }

    private final DrainConfig config;
    private final List<Connections> connections;
    private final ScheduledExecutorService timer;
    /** Where closers run: a close may write to a socket, which timer tasks must not. */
    private final Executor workers;
    private final Map<String, Counter> closed = new LinkedHashMap<>();
    private volatile Listeners listeners = Listeners.CONTAINER;
    private final CompletableFuture<Outcome> finished = new CompletableFuture<>();
    // Guarded by this.
    private State state = State.SERVING;
    private Cause cause;
    private Instant since;
    private long startNanos;
    private CompletableFuture<Void> inFlight;
    private final List<ScheduledFuture<?>> scheduled = new ArrayList<>();

    public Drain(DrainConfig config, List<Connections> connections, ScheduledExecutorService timer, Executor workers, MeterRegistry registry)
    {
        this.config = Objects.requireNonNull(config, "config");
        this.connections = List.copyOf(connections);
        this.timer = timer;
        this.workers = workers;
        Gauge.builder("sandgate.drain.draining", this, drain -> drain.draining() ? 1 : 0)
            .description("1 while this replica drains: not ready, closing its connections").register(registry);
        for (Connections kind : this.connections)
        {
            closed.put(kind.kind(), Counter.builder("sandgate.drain.closed").tag("kind", kind.kind())
                .description("Long-lived connections a drain closed, so that their clients reconnect elsewhere").register(registry));
        }
    }

    /**
     * Says how the server stops taking requests; the embedded runner gives its own before it starts.
     * Without one (a servlet container) the drain only closes connections.
     */
    public void attach(Listeners listeners)
    {
        this.listeners = Objects.requireNonNull(listeners, "listeners");
    }

    /**
     * Begins the drain, unless one has begun already.
     *
     * @return whether this call began it; false when it joined the one under way
     */
    public boolean begin(Cause cause)
    {
        Duration grace = cause.grace ? config.grace() : Duration.ZERO;
        synchronized (this)
        {
            if (state != State.SERVING)
            {
                LOG.info("Drain asked again ({}): the one begun by {} goes on", cause.label, this.cause.label);
                return false;
            }
            state = State.GRACE;
            this.cause = cause;
            since = Instant.now();
            startNanos = System.nanoTime();
        }
        Audit.drainStarted(cause.label);
        LOG.info("Draining ({}): /readyz answers 503 from now; {}closing {} over {}; stopping when nothing is left, at the latest in {}", cause.label,
            grace.isZero() ? "" : "serving " + human(grace) + " more for the balancer to notice, then ", describe(openCounts()), human(config.spread()),
            human(config.timeout()));
        // Scheduled once the lines above are written, so that the log tells the steps in their order.
        synchronized (this)
        {
            long left = config.timeout().toNanos() - (System.nanoTime() - startNanos);
            scheduled.add(timer.schedule(this::graceOver, grace.toNanos(), TimeUnit.NANOSECONDS));
            scheduled.add(timer.schedule(() -> finish(Outcome.TIMED_OUT), left, TimeUnit.NANOSECONDS));
        }
        return true;
    }

    /** Whether a drain has begun: the replica is not ready, whatever else it could serve. */
    public synchronized boolean draining()
    {
        return state != State.SERVING;
    }

    /** Completes when a drain has ended: nothing left, or its timeout passed. Never completes while serving. */
    public CompletableFuture<Outcome> finished()
    {
        return finished;
    }

    /** How long is left until the drain's timeout; the whole timeout before a drain begins. */
    public synchronized Duration remaining()
    {
        if (state == State.SERVING)
            return config.timeout();
        Duration left = config.timeout().minusNanos(System.nanoTime() - startNanos);
        return left.isNegative() ? Duration.ZERO : left;
    }

    /** What the admin API shows: the state, and when and why the drain began. */
    public synchronized Map<String, Object> view()
    {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("state", state.name().toLowerCase(Locale.ROOT));
        if (cause != null)
        {
            view.put("cause", cause.label);
            view.put("since", since.toString());
        }
        view.put("grace", human(config.grace()));
        view.put("spread", human(config.spread()));
        view.put("timeout", human(config.timeout()));
        view.put("open", openCounts());
        return view;
    }

    /** The grace is over: no new requests, and the long-lived connections closed one by one over the spread. */
    private void graceOver()
    {
        List<Closer> closers;
        synchronized (this)
        {
            if (state != State.GRACE)
                return;
            state = State.CLOSING;
            inFlight = listeners.stopTaking();
            closers = closers();
            long spread = config.spread().toNanos();
            // Evenly: the i-th of n at i/n of the spread, the first at once, none at its very end.
            for (int i = 0; i < closers.size(); i++)
            {
                Closer closer = closers.get(i);
                scheduled.add(timer.schedule(() -> workers.execute(() -> close(closer)), spread / closers.size() * i, TimeUnit.NANOSECONDS));
            }
            // Whatever opened while the first were closed (a container keeps taking requests) goes at the end.
            scheduled.add(timer.schedule(() -> closers().forEach(closer -> workers.execute(() -> close(closer))), spread, TimeUnit.NANOSECONDS));
            scheduled.add(timer.scheduleWithFixedDelay(this::check, 0, CHECK_MILLIS, TimeUnit.MILLISECONDS));
        }
        LOG.info("Drain: the grace is over; taking no new requests, closing {} over {}", describe(counts(closers)), human(config.spread()));
    }

    /** One action per connection still to close, the kinds interleaved so that each is spread on its own as well. */
    private List<Closer> closers()
    {
        List<List<BooleanSupplier>> byKind = new ArrayList<>();
        int longest = 0;
        for (Connections kind : connections)
        {
            List<BooleanSupplier> list = kind.closers().get();
            byKind.add(list);
            longest = Math.max(longest, list.size());
        }
        List<Closer> closers = new ArrayList<>();
        for (int i = 0; i < longest; i++)
        {
            for (int k = 0; k < byKind.size(); k++)
            {
                if (i < byKind.get(k).size())
                    closers.add(new Closer(connections.get(k).kind(), byKind.get(k).get(i)));
            }
        }
        return closers;
    }

    private void check()
    {
        CompletableFuture<Void> requests;
        synchronized (this)
        {
            requests = inFlight;
        }
        if (requests != null && requests.isDone() && openCounts().values().stream().allMatch(open -> open == 0))
            finish(Outcome.DRAINED);
    }

    private void finish(Outcome outcome)
    {
        String took;
        boolean requestsDone;
        synchronized (this)
        {
            if (state == State.FINISHED || state == State.SERVING)
                return;
            state = State.FINISHED;
            scheduled.forEach(task -> task.cancel(false));
            scheduled.clear();
            took = human(Duration.ofNanos(System.nanoTime() - startNanos));
            requestsDone = inFlight != null && inFlight.isDone();
        }
        if (outcome == Outcome.DRAINED)
            LOG.info("Drained in {}: nothing left open; closed {}", took, describe(closedCounts()));
        else
            LOG.warn("Drain timed out after {} (server.drain.timeout): still open {}{}; they are cut now", took, describe(openCounts()),
                requestsDone ? "" : " and requests in flight");
        finished.complete(outcome);
    }

    private Map<String, Integer> openCounts()
    {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (Connections kind : connections)
            counts.put(kind.kind(), kind.open().getAsInt());
        return counts;
    }

    private Map<String, Integer> closedCounts()
    {
        Map<String, Integer> counts = new LinkedHashMap<>();
        closed.forEach((kind, counter) -> counts.put(kind, (int)counter.count()));
        return counts;
    }

    private static Map<String, Integer> counts(List<Closer> closers)
    {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (Closer closer : closers)
            counts.merge(closer.kind(), 1, Integer::sum);
        return counts;
    }

    /** As the settings are written: {@code 5s}, {@code 1500ms}. */
    private static String human(Duration duration)
    {
        long millis = duration.toMillis();
        return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
    }

    /** "3 websocket, 1 mcp_stream", or "nothing". */
    private static String describe(Map<String, Integer> counts)
    {
        List<String> parts = new ArrayList<>();
        counts.forEach((kind, count) ->
        {
            if (count > 0)
                parts.add(count + " " + kind);
        });
        return parts.isEmpty() ? "nothing" : String.join(", ", parts);
    }

    /** One connection's close. */
    private record Closer(String kind, BooleanSupplier action)
    {
    }

    /** Counted only when it closed something: the sweep at the spread's end may meet one closing already. */
    private void close(Closer closer)
    {
        if (closer.action().getAsBoolean())
            closed.get(closer.kind()).increment();
    }
}
