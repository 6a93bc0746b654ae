package io.sandgate.mcp;

import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandgate.config.McpConfig;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.content.AsyncContent;
import org.eclipse.jetty.util.Callback;

/**
 * Federation members that speak 2024-11-05 HTTP+SSE ({@code transport: sse}). The replica that
 * opens a member session holds the member's event stream for as long as the member session lives
 * (a DELETE, the TTL or a replica asking for a new one ends it); everything the member sends goes
 * into the member session's log, and its notifications also into the federated session's, which
 * the client's GET stream reads. Any replica posts a message to the member's message URL, and a
 * request's answer is read from the member session's log: an event stream of the request's
 * progress, the member's requests to the client meanwhile, and the response, which ends it. So the
 * federation reads such a member's answers as it reads a Streamable member's.
 *
 * <p>As with a 2024-11-05 client, the member session ends when the replica holding its stream dies
 * (the member forgets it, and the next request opens another, with the federated session's
 * client said at initialize); the calls in flight then are lost.
 */
final class SseMembers
{
    private static final HttpFields EVENT_STREAM = HttpFields.build().put(HttpHeader.CONTENT_TYPE, "text/event-stream").asImmutable();

    private final SessionBus bus;
    private final Upstream upstream;
    private final UpstreamStreams upstreams;
    private final ScheduledExecutorService timer;

    SseMembers(SessionBus bus, Upstream upstream, UpstreamStreams upstreams, ScheduledExecutorService timer)
    {
        this.bus = bus;
        this.upstream = upstream;
        this.upstreams = upstreams;
        this.timer = timer;
    }

    /**
     * Opens the member's event stream for a new member session; completes with the session once the
     * member announced its message URL.
     *
     * @param federatedLog the session whose log gets the member's notifications outside calls, rewritten
     * @param forClient a member's notification as the federation's client gets it, null for none
     */
    CompletableFuture<McpSession> open(McpConfig.Server server, McpSession session, String federatedLog, UnaryOperator<String> forClient)
    {
        SessionLifetime lifetime = new SessionLifetime(bus, session.id());
        return upstreams.openLegacy(Upstream.On.session(server, session), session.id(), lifetime, federatedLog, message -> outsideCalls(message, forClient))
            .thenApply(url ->
            {
                McpSession ready = session.withUpstreamMessageUrl(url);
                bus.update(ready);
                lifetime.watch(url);
                return ready;
            });
    }

    /**
     * What of the member's goes to the federated session's log: its notifications, but for
     * progress, which goes on the stream of the call it is about.
     */
    private static String outsideCalls(String message, UnaryOperator<String> forClient)
    {
        JsonNode parsed = FederationMembers.parse(message);
        boolean notification = parsed.path("method").isTextual() && !parsed.has("id");
        return notification && !"notifications/progress".equals(parsed.get("method").asText()) ? forClient.apply(message) : null;
    }

    /**
     * Sends one message in a member session. A request is answered by an event stream read from
     * the session's log, handed over once the member accepted the message or sent the first event
     * for it, whichever comes first (a 2024-11-05 server may accept a request only once it has
     * answered it, after asking the client something on the way). A member that refuses it answers
     * as it did (404: the member no longer knows the session). Anything else is answered by the
     * member's own answer to the POST.
     */
    CompletableFuture<Upstream.Exchange> send(McpConfig.Server server, McpSession session, JsonNode message)
    {
        URI url = messageUrl(session);
        Upstream.On on = Upstream.On.session(server, session);
        if (!message.path("method").isTextual() || !message.has("id"))
            return post(on, url, message);
        Answer answer = new Answer(server.name(), message, timer);
        answer.subscribe(bus, session.id());
        post(on, url, message).whenComplete((exchange, failure) ->
        {
            if (failure != null)
            {
                answer.fail(failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure);
                return;
            }
            int status = exchange.status();
            if (status / 100 == 2)
            {
                exchange.discard();
                answer.accepted();
            }
            else
            {
                answer.refused(status == HttpStatus.BAD_REQUEST_400 ? gone(exchange) : exchange);
            }
        });
        return answer.handed;
    }

    /**
     * A 2024-11-05 server answers a message for a session it no longer holds 404, or 400 as the
     * TypeScript SDK's servers do ("no transport found"): either way the member session is gone,
     * and the federation opens another ({@link MemberChannel#forget}). A message the server finds
     * malformed is sent once more in the new session, and refused there as well.
     */
    private static Upstream.Exchange gone(Upstream.Exchange exchange)
    {
        return new Upstream.Exchange(HttpStatus.NOT_FOUND_404, exchange.headers(), exchange.content(), exchange.abort());
    }

    private CompletableFuture<Upstream.Exchange> post(Upstream.On on, URI url, JsonNode message)
    {
        return upstream.exchange(on, HttpMethod.POST, url, Map.of(HttpHeader.CONTENT_TYPE.asString(), "application/json"), message.toString());
    }

    private static URI messageUrl(McpSession session)
    {
        return URI.create(session.upstreamMessageUrl().orElseThrow(() -> GatewayException.unavailable("the member session is not ready")));
    }

    /**
     * One request's answer, read from the member session's log into an event stream. The stream
     * takes events only as fast as its reader takes them: the log keeps the rest meanwhile. It ends
     * with an error after {@link Upstream#EXCHANGE_IDLE_TIMEOUT} without an event, as an upstream's
     * answer does: a member that never answers holds no client stream for longer.
     */
    private static final class Answer implements SessionBus.Listener
    {
        private final String member;
        private final JsonNode id;
        private final JsonNode progressToken;
        private final AsyncContent content = new AsyncContent();
        private final CompletableFuture<Upstream.Exchange> handed = new CompletableFuture<>();
        private final AtomicBoolean done = new AtomicBoolean();
        private volatile SessionBus.Subscription subscription;
        private final ScheduledExecutorService timer;
        private volatile ScheduledFuture<?> deadline;
        /** Events written and not yet read; the listener takes no more while there are. */
        private int unread;
        private Runnable whenRead;

        Answer(String member, JsonNode request, ScheduledExecutorService timer)
        {
            this.member = member;
            this.timer = timer;
            this.id = request.get("id");
            JsonNode token = request.path("params").path("_meta").get("progressToken");
            this.progressToken = token == null || token.isNull() ? null : token;
        }

        /** Reads the log from its end as it is now (the request is not posted yet), and starts waiting for the member. */
        void subscribe(SessionBus bus, String sessionId)
        {
            heard();
            SessionBus.Subscription opened = bus.subscribe(sessionId, bus.lastEventId(sessionId), this);
            subscription = opened;
            if (done.get())
                opened.close();
        }

        /** Starts the wait for the member's next event anew. */
        private synchronized void heard()
        {
            ScheduledFuture<?> last = deadline;
            if (last != null)
                last.cancel(false);
            if (!done.get())
                deadline = timer.schedule(() -> fail(new GatewayException(HttpStatus.GATEWAY_TIMEOUT_504, "upstream_timeout", "it did not answer in time")),
                    Upstream.EXCHANGE_IDLE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        }

        private Upstream.Exchange exchange()
        {
            return new Upstream.Exchange(HttpStatus.OK_200, EVENT_STREAM, content, failure -> end(null));
        }

        void accepted()
        {
            handed.complete(exchange());
        }

        /** The member refused the request: its answer is the exchange's, and nothing of the log. */
        void refused(Upstream.Exchange exchange)
        {
            if (handed.complete(exchange))
                end(null);
            else
            {
                exchange.discard();
                fail(new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_failed", "the MCP server answered " + exchange.status()));
            }
        }

        /** The POST failed: before the answer was handed over, the exchange fails; after, the stream ends with an error. */
        void fail(Throwable failure)
        {
            if (handed.completeExceptionally(failure))
            {
                end(null);
                return;
            }
            GatewayException error = failure instanceof GatewayException known ? known : Errors.map(failure, Errors.Peer.MCP_SERVER);
            end(JsonRpcErrors.body(id, error, "MCP server " + member + " is unavailable: " + error.getMessage()));
        }

        @Override
        public void onEvent(String eventId, String text)
        {
            JsonNode message = FederationMembers.parse(text);
            boolean response = !message.has("method") && id.equals(message.get("id"));
            boolean progress = "notifications/progress".equals(message.path("method").asText()) && progressToken != null
                && progressToken.equals(message.path("params").path("progressToken"));
            boolean request = message.path("method").isTextual() && message.has("id");
            if (!response && !progress && !request)
                return;
            heard();
            handed.complete(exchange());
            if (response)
                end(text);
            else
                write(text, false);
        }

        @Override
        public void onEnd()
        {
            fail(GatewayException.unavailable("its session ended before it answered"));
        }

        /** Ends the stream, with a last message when there is one; once. */
        private void end(String last)
        {
            if (!done.compareAndSet(false, true))
                return;
            SessionBus.Subscription held = subscription;
            if (held != null)
                held.close();
            ScheduledFuture<?> waiting = deadline;
            if (waiting != null)
                waiting.cancel(false);
            if (last != null)
                write(last, true);
            else
                content.close();
        }

        private void write(String message, boolean last)
        {
            synchronized (this)
            {
                unread++;
            }
            ByteBuffer event = ByteBuffer.wrap(("data: " + message + "\n\n").getBytes(StandardCharsets.UTF_8));
            content.write(last, event, Callback.from(this::read, failure -> read()));
        }

        private void read()
        {
            Runnable go;
            synchronized (this)
            {
                unread--;
                go = unread == 0 ? whenRead : null;
                if (go != null)
                    whenRead = null;
            }
            if (go != null)
                go.run();
        }

        @Override
        public synchronized boolean ready(Runnable whenReady)
        {
            if (unread == 0)
                return true;
            whenRead = whenReady;
            return false;
        }
    }
}
