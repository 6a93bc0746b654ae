package io.sandgate.mcp;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Tracer;
import io.sandgate.config.McpConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.tracing.Tracing;
import io.sandgate.web.GatewayException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay between upstream servers and clients: messages from upstreams go into the
 * {@link SessionBus}, never straight to a client, so that whichever replica holds the client's
 * stream delivers them, with event ids; client streams read the session's log back out.
 */
final class SessionRelay
{
    private static final Logger LOG = LoggerFactory.getLogger(SessionRelay.class);
    /** How long an upstream message waits for the store before it is counted lost. */
    private static final Duration RELAY_PATIENCE = Duration.ofSeconds(60);
    /** The pause before an upstream message is offered to an unreachable store again; doubled each time. */
    private static final Duration FIRST_RETRY_PAUSE = Duration.ofMillis(50);
    private static final Duration MAX_RETRY_PAUSE = Duration.ofSeconds(1);

    private final SessionBus bus;
    /** Retries wait on the timer; attempts, and upstream streams read as their bytes arrive, run on the workers: they call the store. */
    private final Schedulers schedulers;
    /** Null when tracing is off. */
    private final Tracer tracer;
    private final Counter relayed;
    private final Counter replays;
    private final Counter lost;
    private final Counter dead;
    private final ToolPins pins;

    /**
     * @param tracing where the spans of messages delivered on this replica go
     * @param pins what checks a pinned server's tool lists as they come in; null where none pins
     */
    SessionRelay(SessionBus bus, Schedulers schedulers, Tracing tracing, MeterRegistry registry, ToolPins pins)
    {
        this.pins = pins;
        this.bus = bus;
        this.schedulers = schedulers;
        this.tracer = tracing.tracer();
        this.relayed = Counter.builder("sandgate.mcp.messages.relayed").description("Upstream messages stored for delivery").register(registry);
        this.replays = Counter.builder("sandgate.mcp.replays").description("Client streams resumed with Last-Event-ID").register(registry);
        this.lost = Counter.builder("sandgate.mcp.messages.lost").description("Upstream messages that could not be stored; must stay 0").register(registry);
        this.dead = Counter.builder("sandgate.mcp.sessions.dead").description("Sessions ended because their upstream no longer knew them (404)").register(registry);
    }

    /**
     * Stores an upstream message for the session's client. If the store is briefly unreachable
     * the message waits (holding up the upstream stream it came from, so that order is kept)
     * rather than being dropped: it is tried again on the timer, no thread waiting with it.
     *
     * @return completes once the message is stored, or given up (the store unreachable for
     *         {@link #RELAY_PATIENCE}, or the session ended); relay the next message of the same
     *         upstream stream only then
     */
    CompletableFuture<Void> relay(String sessionId, String message)
    {
        return relay(sessionId, message, null);
    }

    /**
     * As {@link #relay(String, String)}, for a message of the server's as it comes in. A pinned
     * server's tool lists are checked against its pins here, once: a delivery only judges them, so
     * that a client replaying its log (Last-Event-ID) cannot present an old list as the server's.
     */
    CompletableFuture<Void> relay(McpConfig.Server server, String sessionId, String message)
    {
        return relay(server, sessionId, message, (String)null);
    }

    /**
     * As {@link #relay(McpConfig.Server, String, String)}, for a federation member's message that
     * reaches the federated session's log rewritten (or not at all, when {@code rewrite} gives
     * null): the pins see it as the member sent it, when it reaches the client at all.
     */
    CompletableFuture<Void> relay(McpConfig.Server server, String logId, String message, java.util.function.UnaryOperator<String> rewrite)
    {
        String rewritten = rewrite.apply(message);
        if (rewritten == null)
            return CompletableFuture.completedFuture(null);
        // Only what reaches the client counts as what the member listed: a list it sends where none belongs is dropped unseen.
        if (pins != null)
            pins.record(server, message);
        return relay(logId, rewritten, null);
    }

    private CompletableFuture<Void> relay(McpConfig.Server server, String sessionId, String message, String traceparent)
    {
        if (pins != null)
            pins.record(server, message);
        return relay(sessionId, message, traceparent);
    }

    /**
     * As {@link #relay(String, String)}, for a message that answers a client's request: it carries
     * the request's trace context, so that the replica delivering it continues the request's trace.
     * The first attempt runs on the calling thread, which must be one that may wait on the store.
     *
     * @param traceparent the request's, from {@link McpSpans#traceparent}; null outside a trace
     */
    CompletableFuture<Void> relay(String sessionId, String message, String traceparent)
    {
        StoreAttempts attempts = new StoreAttempts(sessionId, message, traceparent);
        attempts.run();
        return attempts.done;
    }

    /**
     * The attempts to store one upstream message: the first at once, each next one after a pause
     * twice the last ({@link #FIRST_RETRY_PAUSE} up to {@link #MAX_RETRY_PAUSE}), scheduled on the
     * timer and run on a worker, until {@link #RELAY_PATIENCE} has passed.
     */
    private final class StoreAttempts implements Runnable
    {
        private final String sessionId;
        /** One key for every attempt: one that failed may have landed, and must not land twice. */
        private final String key = McpSession.newId();
        private final String message;
        private final String traceparent;
        private final long deadline = System.nanoTime() + RELAY_PATIENCE.toNanos();
        private final CompletableFuture<Void> done = new CompletableFuture<>();
        /** Written and read by one attempt at a time, each started through the timer and the workers. */
        private long pause = FIRST_RETRY_PAUSE.toMillis();

        StoreAttempts(String sessionId, String message, String traceparent)
        {
            this.sessionId = sessionId;
            this.message = message;
            this.traceparent = traceparent;
        }

        @Override
        public void run()
        {
            try
            {
                bus.append(sessionId, key, message, traceparent);
                relayed.increment();
                done.complete(null);
            }
            catch (StoreUnavailableException x)
            {
                if (System.nanoTime() > deadline)
                {
                    lost.increment();
                    LOG.error("MCP message for session {} lost: store unreachable for {}", sessionId, RELAY_PATIENCE);
                    done.complete(null);
                    return;
                }
                again();
            }
            catch (IllegalStateException x)
            {
                // The session ended meanwhile: nobody is left to deliver to.
                done.complete(null);
            }
            catch (RuntimeException x)
            {
                done.completeExceptionally(x);
            }
        }

        private void again()
        {
            long wait = pause;
            pause = Math.min(MAX_RETRY_PAUSE.toMillis(), pause * 2);
            try
            {
                schedulers.timer().schedule(() ->
                {
                    try
                    {
                        schedulers.workers().execute(this);
                    }
                    catch (RejectedExecutionException x)
                    {
                        done.completeExceptionally(x);
                    }
                }, wait, TimeUnit.MILLISECONDS);
            }
            catch (RejectedExecutionException x)
            {
                // The gateway is stopping: its upstream streams end with it.
                done.completeExceptionally(x);
            }
        }
    }

    /**
     * Stores, once, a message the gateway made itself in answer to a client's POST (a tool-policy
     * refusal, a pong, a bridged initialize answer). Unlike {@link #relay}, it does not wait out
     * an unreachable store on the POST's thread: the POST fails with 503 and the client sends it
     * again, which makes the answer again.
     *
     * @throws io.sandgate.core.StoreUnavailableException when the store did not take it
     */
    void answer(String sessionId, String message, String traceparent)
    {
        try
        {
            bus.append(sessionId, McpSession.newId(), message, traceparent);
        }
        catch (IllegalStateException x)
        {
            throw RequestChecks.unknownSession("MCP session ended");
        }
        relayed.increment();
    }

    /**
     * Relays every message of an upstream answer, JSON or event stream, as it arrives, in order.
     * No thread waits for the answer's bytes or for the store.
     *
     * @param traceparent the trace context of the request the upstream answers, or null
     */
    void pump(McpConfig.Server server, String sessionId, Upstream.Exchange exchange, String traceparent)
    {
        if (exchange.isEventStream())
        {
            new EventStreamPump(exchange.content(), schedulers.workers(),
                event -> "message".equals(event.name()) && !event.data().isBlank() ? relay(server, sessionId, event.data(), traceparent) : EventStreamPump.HANDED_ON,
                ended -> upstreamEnded(sessionId, ended)).start();
            return;
        }
        // Relayed on a worker: the first attempt of each relay may wait on the store.
        exchange.text()
            .thenComposeAsync(body -> relayAll(server, sessionId, JsonRpc.split(body), traceparent), schedulers.workers())
            .whenComplete((ignored, failure) -> upstreamEnded(sessionId, failure));
    }

    /** Relays messages one after another, each once the one before it is stored or given up. */
    private CompletableFuture<Void> relayAll(McpConfig.Server server, String sessionId, List<String> messages, String traceparent)
    {
        CompletableFuture<Void> relayed = CompletableFuture.completedFuture(null);
        for (String message : messages)
            relayed = relayed.thenCompose(ignored -> relay(server, sessionId, message, traceparent));
        return relayed;
    }

    private static void upstreamEnded(String sessionId, Throwable failure)
    {
        if (failure != null)
            LOG.debug("Upstream stream for MCP session {} ended", sessionId, failure);
    }

    /**
     * Subscribes to a session's log. With tracing on, an event appended in a trace (the answer to a
     * client's POST, on whichever replica it came in) is delivered in a span of that trace.
     */
    SessionBus.Subscription subscribe(String sessionId, String afterEventId, SessionBus.Listener listener)
    {
        return bus.subscribe(sessionId, afterEventId, tracer == null ? listener : new TracedDelivery(tracer, sessionId, listener));
    }

    /**
     * A session whose upstream answered 404 for it (restarted, or dropped its state): it is dead, so
     * it ends on every replica and its client hears so. Counted, as a run of them is an upstream's
     * trouble that an operator should see.
     */
    GatewayException endedUpstream(McpSession session)
    {
        bus.delete(session.id());
        dead.increment();
        return RequestChecks.unknownSession("MCP session ended upstream");
    }

    /** A client stream resumes a session's log after a {@code Last-Event-ID}. */
    void resumed()
    {
        replays.increment();
    }
}
