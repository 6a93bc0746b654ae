package io.sandgate.mcp;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.sandgate.config.McpConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.net.Origins;
import io.sandgate.tracing.TraceAttributes;
import io.sandgate.tracing.TraceHeaders;
import io.sandgate.tracing.Tracing;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.ClientThreads;
import io.sandgate.web.GatewayException;
import io.sandgate.web.RequestBodies;
import io.sandgate.web.ServerSpan;
import jakarta.servlet.http.HttpServletRequest;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MCP face without the servlet: the shared pieces both client transports use. Messages from
 * upstreams go through {@link #relay} into the {@link SessionBus}, never straight to a client, so
 * that whichever replica holds the client's stream delivers them, with event ids.
 */
public final class McpGateway implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(McpGateway.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    /** How long an upstream message waits for the store before it is counted lost. */
    private static final Duration RELAY_PATIENCE = Duration.ofSeconds(60);
    /** The pause before an upstream message is offered to an unreachable store again; doubled each time. */
    private static final Duration FIRST_RETRY_PAUSE = Duration.ofMillis(50);
    private static final Duration MAX_RETRY_PAUSE = Duration.ofSeconds(1);
    private static final String CREDENTIAL = "credential:";
    /** Concurrent exchanges with one upstream MCP server. */
    private static final int MAX_UPSTREAM_CONNECTIONS = 1024;

    private final McpConfig config;
    private final SessionBus bus;
    private final ClientInfo clients;
    private final Origins origins;
    private final HttpClient http;
    private final Upstream upstream;
    /** Where upstream streams are read and relayed when their bytes arrive: a relay may wait on the store. */
    private final Executor pumps;
    private final ScheduledExecutorService timer;
    private final ClientStreams streams;
    private final Counter sessionsRefused;
    private final Counter foreign;
    private final Counter relayed;
    private final Counter replays;
    private final Counter lost;
    /** Null when tracing is off. */
    private final Tracer tracer;
    private final Counter dead;

    /**
     * @param origins the browser origins the deployment allows ({@code server.public-origins}); the
     *        face adds {@code mcp.allowed-origins}
     * @param tracing where the spans of messages delivered on this replica go
     */
    public McpGateway(McpConfig config, SessionBus bus, ClientInfo clients, Origins origins, MeterRegistry registry, Schedulers schedulers,
                      Tracing tracing) throws Exception
    {
        this.tracer = tracing.tracer();
        this.origins = origins.and(config.allowedOrigins());
        this.pumps = schedulers.workers();
        this.timer = schedulers.timer();
        this.config = config;
        this.bus = bus;
        this.clients = clients;
        this.streams = new ClientStreams(config, clients, registry, schedulers);
        this.http = new HttpClient();
        // Jetty's default pool would keep eight threads on every replica, MCP servers configured or not.
        ClientThreads.install(http, "sandgate-mcp-client");
        // Must not store cookies, or sessions of different clients would share them.
        http.setHttpCookieStore(new HttpCookieStore.Empty());
        http.setFollowRedirects(false);
        http.setConnectTimeout(5000);
        // Each relayed call that the upstream answers slowly holds a connection (HTTP/1.1), not a
        // thread: Jetty's default of 64 per destination would queue the 65th tool call behind them.
        http.setMaxConnectionsPerDestination(MAX_UPSTREAM_CONNECTIONS);
        http.start();
        this.upstream = new Upstream(http, schedulers.timer());
        this.sessionsRefused = Counter.builder("sandgate.mcp.sessions.refused").description("Sessions refused: their client held too many").register(registry);
        this.foreign = Counter.builder("sandgate.mcp.sessions.foreign").description("Requests naming a session with another client's credential, refused").register(registry);
        this.relayed = Counter.builder("sandgate.mcp.messages.relayed").description("Upstream messages stored for delivery").register(registry);
        this.replays = Counter.builder("sandgate.mcp.replays").description("Client streams resumed with Last-Event-ID").register(registry);
        this.lost = Counter.builder("sandgate.mcp.messages.lost").description("Upstream messages that could not be stored; must stay 0").register(registry);
        this.dead = Counter.builder("sandgate.mcp.sessions.dead").description("Sessions ended because their upstream no longer knew them (404)").register(registry);
    }

    McpConfig config()
    {
        return config;
    }

    SessionBus bus()
    {
        return bus;
    }

    Upstream upstream()
    {
        return upstream;
    }

    McpConfig.Server server(String name)
    {
        McpConfig.Server server = config.server(name);
        if (server == null)
            throw GatewayException.notFound("no MCP server named " + name);
        return server;
    }

    static String newSessionId()
    {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /**
     * MCP's transport rules require validating Origin to stop DNS-rebinding pages from driving the
     * gateway: loopback origins, {@code server.public-origins} and {@code mcp.allowed-origins}
     * pass. The request's own Host proves nothing (a rebinding page controls it), so "same origin"
     * is not a reason to accept. Clients that are not browsers send no Origin and pass.
     */
    void checkOrigin(HttpServletRequest request)
    {
        String origin = request.getHeader(HttpHeader.ORIGIN.asString());
        if (origin != null && !origins.allows(origin, null))
            throw GatewayException.forbidden("origin " + origin + " is not allowed for MCP: add it to server.public-origins or mcp.allowed-origins");
    }

    /**
     * The session a request names, if the request may use it: it must belong to this server and
     * come with its owner's credential, or, made without one, from its owner's address with none. A
     * session id is a bearer secret that leaks (logs, a shared proxy); bound to the credential or
     * the address that created it, a leaked id alone opens nothing from another sandbox. Another
     * client's session answers as unknown, so that ids cannot be probed.
     */
    McpSession session(String id, McpConfig.Server server, HttpServletRequest request)
    {
        if (!McpSession.isWellFormedId(id))
            throw unknownSession("unknown MCP session");
        McpSession session = bus.find(id).orElseThrow(() -> unknownSession("unknown or ended MCP session"));
        if (!session.server().equals(server.name()))
            throw unknownSession("unknown MCP session");
        if (!session.owner().equals(owner(request)))
        {
            foreign.increment();
            throw unknownSession("unknown MCP session");
        }
        bus.touch(id);
        return session;
    }

    /**
     * Stores a new session for the request's client, unless its address holds
     * {@code mcp.max-sessions-per-client} live ones already, on any replica. Counted by address, not
     * by credential: the gateway does not check credentials, so a client could make up a new one
     * for every session.
     */
    McpSession newSession(McpConfig.Server server, HttpServletRequest request)
    {
        McpSession session = McpSession.create(newSessionId(), server.name(), owner(request));
        if (!bus.create(session, clients.limitKey(clients.clientAddress(request)), config.maxSessionsPerClient()))
        {
            sessionsRefused.increment();
            throw new GatewayException(HttpStatus.TOO_MANY_REQUESTS_429, "too_many_sessions",
                "too many MCP sessions for this client (at most " + config.maxSessionsPerClient() + ", mcp.max-sessions-per-client): end some with DELETE");
        }
        return session;
    }

    /**
     * Who a request comes from, as a session records its owner: a digest of its credential (never
     * the credential itself, which the store must not hold), else the client's address.
     */
    String owner(HttpServletRequest request)
    {
        String credential = credential(request);
        if (credential == null)
            return "address:" + clients.clientAddress(request);
        try
        {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(credential.getBytes(StandardCharsets.UTF_8));
            return CREDENTIAL + HexFormat.of().formatHex(digest);
        }
        catch (NoSuchAlgorithmException x)
        {
            throw new IllegalStateException(x);
        }
    }

    private static String credential(HttpServletRequest request)
    {
        return request.getHeader(HttpHeader.AUTHORIZATION.asString());
    }

    /** A session the client may not (or no longer) use: 404, as the transports say for a session that ended. */
    static GatewayException unknownSession(String message)
    {
        return new GatewayException(HttpStatus.NOT_FOUND_404, JsonRpcErrors.UNKNOWN_SESSION, message);
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
        return unknownSession("MCP session ended upstream");
    }

    /** Reads a request body without holding the thread; the limit is {@code mcp.max-body-size}. */
    CompletableFuture<String> readBody(HttpServletRequest request) throws IOException
    {
        return RequestBodies.read(request, config.maxBodySize()).thenApply(bytes -> new String(bytes, StandardCharsets.UTF_8));
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
     * As {@link #relay(String, String)}, for a message that answers a client's request: it carries
     * the request's trace context, so that the replica delivering it continues the request's trace.
     * The first attempt runs on the calling thread, which must be one that may wait on the store.
     *
     * @param traceparent the request's, from {@link #traceparent}; null outside a trace
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
        private final String key = newSessionId();
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
                timer.schedule(() ->
                {
                    try
                    {
                        pumps.execute(this);
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
            bus.append(sessionId, newSessionId(), message, traceparent);
        }
        catch (IllegalStateException x)
        {
            throw unknownSession("MCP session ended");
        }
        relayed.increment();
    }

    /**
     * Relays every message of an upstream answer, JSON or event stream, as it arrives, in order.
     * No thread waits for the answer's bytes or for the store.
     *
     * @param traceparent the trace context of the request the upstream answers, or null
     */
    void pump(String sessionId, Upstream.Exchange exchange, String traceparent)
    {
        if (exchange.isEventStream())
        {
            new EventStreamPump(exchange.content(), pumps,
                event -> "message".equals(event.name()) && !event.data().isBlank() ? relay(sessionId, event.data(), traceparent) : EventStreamPump.HANDED_ON,
                ended -> upstreamEnded(sessionId, ended)).start();
            return;
        }
        // Relayed on a worker: the first attempt of each relay may wait on the store.
        exchange.text()
            .thenComposeAsync(body -> relayAll(sessionId, JsonRpc.split(body), traceparent), pumps)
            .whenComplete((ignored, failure) -> upstreamEnded(sessionId, failure));
    }

    /** Relays messages one after another, each once the one before it is stored or given up. */
    private CompletableFuture<Void> relayAll(String sessionId, List<String> messages, String traceparent)
    {
        CompletableFuture<Void> relayed = CompletableFuture.completedFuture(null);
        for (String message : messages)
            relayed = relayed.thenCompose(ignored -> relay(sessionId, message, traceparent));
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
     * Names the request's server span after the MCP call it carries, as MCP's semantic conventions
     * name it ({@code tools/call echo}), with the method, the tool and the session. A batch or a
     * response keeps the HTTP name. Does nothing when tracing is off.
     */
    static void describe(HttpServletRequest request, JsonRpc rpc, McpSession session)
    {
        Span span = ServerSpan.of(request);
        if (span == null)
            return;
        if (session != null)
            span.setAttribute(TraceAttributes.MCP_SESSION, session.id());
        String method = rpc.method();
        if (method == null)
            return;
        String tool = "tools/call".equals(method) ? rpc.params().path("name").asText(null) : null;
        // Both are the agent's to choose: the name keeps a bounded start of each.
        span.updateName(TraceAttributes.namePart(method) + (tool == null ? "" : " " + TraceAttributes.namePart(tool)));
        span.setAttribute(TraceAttributes.MCP_METHOD, method);
        if (tool != null)
            span.setAttribute(TraceAttributes.TOOL_NAME, tool);
        JsonNode id = rpc.id();
        if (id != null)
            span.setAttribute(TraceAttributes.JSONRPC_ID, id.asText());
        String version = request.getHeader(McpHeaders.PROTOCOL_VERSION);
        if (version != null)
            span.setAttribute(TraceAttributes.MCP_PROTOCOL_VERSION, version);
    }

    /** The {@code traceparent} naming the request's server span, for what the request causes later; null when tracing is off. */
    static String traceparent(HttpServletRequest request)
    {
        Span span = ServerSpan.of(request);
        return span == null ? null : TraceHeaders.traceparent(span);
    }

    /** Adds the trace headers that make the upstream's handling of a request a child of the request's span. */
    static void addTraceHeaders(HttpServletRequest request, Map<String, String> toUpstream)
    {
        Span span = ServerSpan.of(request);
        if (span != null)
            TraceHeaders.inject(span, toUpstream::put);
    }

    void background(Runnable task)
    {
        pumps.execute(task);
    }

    /** Runs {@code task} on a worker after {@code millis}. */
    void later(Runnable task, long millis)
    {
        timer.schedule(() -> pumps.execute(task), millis, TimeUnit.MILLISECONDS);
    }

    /**
     * Takes a place among the request's client's streams for the stream it is about to open, before
     * anything of the request is relayed.
     *
     * @throws GatewayException 429 when its client holds {@code mcp.max-streams-per-client} already
     */
    ClientStreams.Place reserveStream(HttpServletRequest request)
    {
        return streams.reserve(request);
    }

    void resumed()
    {
        replays.increment();
    }

    /** Closes every client stream this replica holds; their sessions live on in the store. */
    public void endStreams()
    {
        streams.closeAll();
    }

    @Override
    public void close() throws Exception
    {
        streams.closeAll();
        // Stopping the client ends the pumps' blocked reads.
        http.stop();
    }
}
