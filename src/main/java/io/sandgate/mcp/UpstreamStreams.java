package io.sandgate.mcp;

import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

import io.sandgate.config.McpConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Long-lived streams this replica holds towards upstream servers on behalf of a client stream it
 * serves: the legacy SSE stream of a 2024-11-05 upstream, or the GET stream of a Streamable HTTP
 * upstream for messages the server starts. Both relay what they read into the session's log and
 * end with the client stream they serve.
 */
final class UpstreamStreams
{
    private static final long ENDPOINT_TIMEOUT_SECONDS = 10;
    private static final long RECONNECT_DELAY_MILLIS = 1000;

    private final Upstream upstream;
    private final SessionRelay relay;
    /** Upstream streams are read on the workers as their bytes arrive (a relay calls the store); reconnections wait on the timer. */
    private final Schedulers schedulers;

    UpstreamStreams(Upstream upstream, SessionRelay relay, Schedulers schedulers)
    {
        this.upstream = upstream;
        this.relay = relay;
        this.schedulers = schedulers;
    }

    /**
     * Opens the upstream's SSE stream; the future completes with the absolute message URL its
     * {@code endpoint} event announces. Later {@code message} events are relayed to the session's log.
     * The client never sees the upstream's address or session id.
     */
    CompletableFuture<String> openLegacy(Upstream.On on, String sessionId, Lifetime client)
    {
        return openLegacy(on, sessionId, client, null, null);
    }

    /**
     * As {@link #openLegacy(Upstream.On, String, Lifetime)}, for a federation's member session:
     * each message also goes, rewritten, into the federated session's log, unless {@code rewrite}
     * gives null for it.
     *
     * @param alsoLog the federated session whose log gets what the member sends outside its calls; null for none
     */
    CompletableFuture<String> openLegacy(Upstream.On on, String sessionId, Lifetime client, String alsoLog, UnaryOperator<String> rewrite)
    {
        CompletableFuture<String> endpoint = new CompletableFuture<>();
        AtomicReference<Upstream.Exchange> held = new AtomicReference<>();
        client.onClose(() -> abort(held.get()));
        upstream.stream(on, on.server().url(), Map.of(HttpHeader.ACCEPT.asString(), "text/event-stream")).whenComplete((exchange, failure) ->
        {
            if (failure != null)
            {
                endpoint.completeExceptionally(failure);
                client.close();
                return;
            }
            held.set(exchange);
            if (!client.isOpen())
                abort(exchange);
            if (exchange.status() != HttpStatus.OK_200 || !exchange.isEventStream())
            {
                abort(exchange);
                endpoint.completeExceptionally(new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_failed", "the MCP server refused the SSE stream"));
                client.close();
                return;
            }
            new EventStreamPump(exchange.content(), schedulers.workers(), event ->
            {
                if ("endpoint".equals(event.name()))
                    endpoint.complete(on.server().url().resolve(URI.create(event.data().trim())).toString());
                else if ("message".equals(event.name()) && !event.data().isBlank())
                {
                    CompletableFuture<Void> relayed = relay.relay(on.server(), sessionId, event.data());
                    String also = alsoLog == null ? null : rewrite.apply(event.data());
                    return also == null ? relayed : relayed.thenCompose(stored -> relay.relay(alsoLog, also));
                }
                return EventStreamPump.HANDED_ON;
            }, ended ->
            {
                endpoint.completeExceptionally(ended != null ? ended : new IllegalStateException("the MCP server's SSE stream ended"));
                // A 2024-11-05 session lives and dies with its upstream stream.
                client.close();
            }).start();
        });
        return endpoint.orTimeout(ENDPOINT_TIMEOUT_SECONDS, TimeUnit.SECONDS).exceptionally(x ->
        {
            client.close();
            Throwable cause = x instanceof CompletionException ? x.getCause() : x;
            throw cause instanceof GatewayException g ? g
                : new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_failed", "the MCP server did not announce its message endpoint");
        });
    }

    /**
     * Holds the GET stream of a Streamable HTTP upstream while the client stream is open,
     * reconnecting with the upstream's own Last-Event-ID when it drops. An upstream that offers no
     * GET stream (405) is left alone.
     */
    void holdGet(McpConfig.Server server, McpSession session, ClientStream client)
    {
        holdGet(server, session, client, null);
    }

    /**
     * Like {@link #holdGet(McpConfig.Server, McpSession, ClientStream)}, starting with a stream the
     * caller opened already (null for none): a client's GET is answered only once the upstream's is
     * open, since servers send requests tied to a tool call (sampling, elicitation) on it, and drop
     * them while it is missing.
     */
    void holdGet(McpConfig.Server server, McpSession session, ClientStream client, Upstream.Exchange first)
    {
        new HeldGet(server, session, client, session.id(), UnaryOperator.identity()).read(first);
    }

    /**
     * Holds a member's GET stream for a federation's client stream: what the member sends on it
     * goes, rewritten for the federation's client, into the federated session's log.
     *
     * @param logId the federated session, whose log the client stream reads
     * @param lastUpstreamId the member's own event id to resume after (a POST answer it cut short), or null
     */
    void holdGet(McpConfig.Server server, McpSession memberSession, ClientStream client, String logId, UnaryOperator<String> rewrite, String lastUpstreamId)
    {
        HeldGet held = new HeldGet(server, memberSession, client, logId, rewrite);
        held.lastUpstreamId = lastUpstreamId;
        held.read(null);
    }

    /**
     * One client's hold on its upstream's GET stream: read as its bytes arrive (see
     * {@link EventStreamPump}), opened again a second after it drops while the client listens.
     */
    private final class HeldGet
    {
        private final McpConfig.Server server;
        private final McpSession session;
        private final ClientStream client;
        private final String logId;
        private final UnaryOperator<String> rewrite;
        private volatile Upstream.Exchange held;
        /** The upstream's own id of the last event relayed, to resume after when reconnecting. */
        private volatile String lastUpstreamId;

        HeldGet(McpConfig.Server server, McpSession session, ClientStream client, String logId, UnaryOperator<String> rewrite)
        {
            this.server = server;
            this.session = session;
            this.client = client;
            this.logId = logId;
            this.rewrite = rewrite;
            client.onClose(() -> abort(held));
        }

        private void open()
        {
            if (!client.isOpen())
                return;
            CompletableFuture<Upstream.Exchange> opened;
            try
            {
                opened = upstream.stream(Upstream.On.session(server, session), server.url(), getHeaders(session, lastUpstreamId));
            }
            catch (RuntimeException x)
            {
                again();
                return;
            }
            opened.whenComplete((exchange, failure) ->
            {
                if (failure != null)
                    again();
                else
                    read(exchange);
            });
        }

        /** Reads {@code exchange}, or opens one when null. */
        void read(Upstream.Exchange exchange)
        {
            if (exchange == null)
            {
                open();
                return;
            }
            held = exchange;
            if (!client.isOpen())
            {
                abort(exchange);
                return;
            }
            // An upstream that offers no GET stream (405) is left alone.
            if (exchange.status() != HttpStatus.OK_200 || !exchange.isEventStream())
            {
                abort(exchange);
                return;
            }
            new EventStreamPump(exchange.content(), schedulers.workers(), event ->
            {
                if (event.id() != null)
                    lastUpstreamId = event.id();
                return event.data().isBlank() ? EventStreamPump.HANDED_ON : relay.relay(server, logId, event.data(), rewrite);
            }, failure -> again()).start();
        }

        /** Dropped or refused: tried again in a second while the client is still listening. */
        private void again()
        {
            if (client.isOpen())
                schedulers.timer().schedule(() -> schedulers.workers().execute(this::open), RECONNECT_DELAY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** The headers of a session's upstream GET stream, resuming after the upstream's own event id when there is one. */
    static Map<String, String> getHeaders(McpSession session, String lastUpstreamId)
    {
        Map<String, String> headers = new HashMap<>();
        headers.put(HttpHeader.ACCEPT.asString(), "text/event-stream");
        headers.put(McpHeaders.SESSION_ID, session.upstreamSessionId().orElse(null));
        headers.put(McpHeaders.PROTOCOL_VERSION, session.protocolVersion().orElse(null));
        headers.put(McpHeaders.LAST_EVENT_ID, lastUpstreamId);
        return headers;
    }

    private static void abort(Upstream.Exchange exchange)
    {
        if (exchange != null)
            exchange.abort(new CancellationException("client stream closed"));
    }
}
