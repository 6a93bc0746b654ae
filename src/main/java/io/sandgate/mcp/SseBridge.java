package io.sandgate.mcp;

import java.io.IOException;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.McpConfig;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Streamable HTTP clients (2025) in front of a 2024-11-05 HTTP+SSE server ({@code transport: sse}).
 * At {@code initialize} the replica opens the server's SSE stream and holds it for as long as the
 * session lives (a DELETE or the TTL, on any replica, ends it); everything the server sends goes
 * into the session's log like any 2024-11-05 session's. Each POST is handed to the server's message
 * URL from any replica, and its answer is an event stream read from the log: the call's response,
 * which ends it, its progress, and whatever else the server sends meanwhile (requests to the client
 * among them).
 *
 * <p>The client's revision is kept: the server's answer to initialize names the one the client
 * asked for. Limits: the session ends if the replica holding the server's stream dies (as it does for a
 * 2024-11-05 client); there is no GET stream (405), so what the server sends while no call is open
 * stays in the log; a batch is refused.
 */
final class SseBridge
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private final RequestChecks checks;
    private final SessionRelay relay;
    private final SessionBus bus;
    private final Upstream upstream;
    private final UpstreamStreams upstreams;

    SseBridge(RequestChecks checks, SessionRelay relay, SessionBus bus, Upstream upstream, UpstreamStreams upstreams)
    {
        this.checks = checks;
        this.relay = relay;
        this.bus = bus;
        this.upstream = upstream;
        this.upstreams = upstreams;
    }

    /**
     * A session-era POST: {@code initialize} opens the server's stream and a session first; any
     * other message goes in the session given. The place of the request's answer among its
     * client's streams is taken before the server hears of the request, or of the session. Completes
     * the exchange.
     *
     * @param session null for none: then the message must be an initialize
     */
    void post(HttpServletRequest request, McpConfig.Server server, McpSession session, RequestChecks.Caller caller, JsonRpc rpc, String body)
        throws IOException
    {
        if (!rpc.isSingle())
            throw GatewayException.badRequest("a batch cannot be relayed to an HTTP+SSE server: send its messages one at a time");
        if (session == null && !rpc.isInitialize())
            throw GatewayException.badRequest("no session: initialize first");
        AsyncContext async = request.getAsyncContext();
        ClientStreams.Place place = rpc.hasRequests() ? checks.reserveStream(caller, McpServlet.streamOpened(request)) : null;
        try
        {
            if (session != null)
                relay(async, server, session, rpc, body, place, caller.tools(server));
            else
                initialize(caller, async, server, rpc, body, place);
        }
        catch (IOException | RuntimeException x)
        {
            cancel(place);
            throw x;
        }
    }

    private void initialize(RequestChecks.Caller caller, AsyncContext async, McpConfig.Server server, JsonRpc rpc, String body, ClientStreams.Place place)
    {
        open(server, checks.newSession(server, caller)).whenComplete((ready, failure) ->
        {
            try
            {
                if (failure != null)
                    throw failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
                ((HttpServletResponse)async.getResponse()).setHeader(McpHeaders.SESSION_ID, ready.id());
                relay(async, server, ready, rpc, body, place, caller.tools(server));
            }
            catch (Throwable x)
            {
                cancel(place);
                McpServlet.end(async, x);
            }
        });
    }

    private static void cancel(ClientStreams.Place place)
    {
        if (place != null)
            place.cancel();
    }

    /** Opens the server's SSE stream for a new session; completes with the session once the server announced its message URL. */
    private CompletableFuture<McpSession> open(McpConfig.Server server, McpSession session)
    {
        SessionLifetime lifetime = new SessionLifetime(bus, session.id());
        return upstreams.openLegacy(Upstream.On.session(server, session), session.id(), lifetime).thenApply(url ->
        {
            McpSession ready = session.withUpstreamMessageUrl(url);
            bus.update(ready);
            lifetime.watch(url);
            return ready;
        });
    }

    /**
     * Hands a message to the server and, for a request, answers with an event stream of what the
     * server sends for it, ending with its response. The stream starts before the server accepts
     * the request: a 2024-11-05 server may accept it only once the call is done, after asking the
     * client something on the very stream the client is waiting for.
     *
     * @param place the answer's place among its client's streams; null for a message that is no request
     */
    private void relay(AsyncContext async, McpConfig.Server server, McpSession session, JsonRpc rpc, String body, ClientStreams.Place place,
                       ToolAccess tools)
        throws IOException
    {
        URI url = URI.create(session.upstreamMessageUrl().orElseThrow(() -> GatewayException.unavailable("session not ready")));
        if (place == null)
        {
            send(Upstream.On.session(server, session), url, body).whenComplete((status, failure) ->
            {
                if (failure != null)
                    McpServlet.end(async, failure);
                else if (status == HttpStatus.NOT_FOUND_404)
                    McpServlet.end(async, relay.endedUpstream(session));
                else if (status / 100 != 2)
                    McpServlet.end(async, refused(status));
                else
                {
                    ((HttpServletResponse)async.getResponse()).setStatus(HttpStatus.ACCEPTED_202);
                    async.complete();
                }
            });
            return;
        }
        JsonNode call = rpc.messages().get(0);
        ClientStream stream = answer(async, server, session, call, bus.lastEventId(session.id()), place, tools);
        send(Upstream.On.session(server, session), url, body).whenComplete((status, failure) ->
        {
            GatewayException error = failure != null ? Errors.map(failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure, Errors.Peer.MCP_SERVER)
                : status == HttpStatus.NOT_FOUND_404 ? relay.endedUpstream(session)
                : status / 100 != 2 ? refused(status)
                : null;
            if (error == null)
                return;
            try
            {
                stream.event(null, null, JsonRpcErrors.body(call.path("id"), error, error.getMessage()));
            }
            catch (IOException x)
            {
                // The client is gone.
            }
            stream.close();
        });
    }

    /** Posts a message to the server's message URL; completes with the status, the body dropped. */
    private CompletableFuture<Integer> send(Upstream.On on, URI url, String body)
    {
        return upstream.exchange(on, HttpMethod.POST, url, Map.of(HttpHeader.CONTENT_TYPE.asString(), "application/json"), body)
            .thenApply(exchange ->
            {
                exchange.discard();
                return exchange.status();
            });
    }

    private static GatewayException refused(int status)
    {
        return new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_failed", "the MCP server answered " + status);
    }

    private ClientStream answer(AsyncContext async, McpConfig.Server server, McpSession session, JsonNode call, String after, ClientStreams.Place place,
                                ToolAccess tools)
        throws IOException
    {
        JsonNode id = call.path("id");
        boolean initialize = "initialize".equals(call.path("method").asText());
        JsonNode token = call.path("params").path("_meta").path("progressToken");
        ClientStream stream = ClientStream.start(async);
        place.open(stream);
        SessionBus.Subscription subscription = relay.subscribe(session.id(), after, new ClientStream.Delivery(stream, tools)
        {
            @Override
            void deliver(String eventId, String text) throws IOException
            {
                JsonNode message = parse(text);
                if (message == null || !belongs(message, id, token))
                    return;
                stream.event(eventId, null, initialize && !message.has("method") ? asRequested(call, message) : text);
                if (!message.has("method"))
                    stream.close();
            }
        });
        stream.onClose(subscription::close);
        return stream;
    }

    /**
     * Whether a message of the session goes on the stream of this call: its response, its own
     * progress, and what is no other call's (requests to the client, other notifications).
     */
    static boolean belongs(JsonNode message, JsonNode id, JsonNode token)
    {
        if (!message.has("method"))
            return message.path("id").equals(id);
        if ("notifications/progress".equals(message.path("method").asText()))
            return message.path("params").path("progressToken").equals(token);
        return true;
    }

    /**
     * The server's answer to initialize, with the revision the client asked for when it is one of
     * the session era: a 2024-11-05 server answers with its own, which Streamable HTTP clients
     * refuse, and the messages the two revisions share are the same.
     */
    static String asRequested(JsonNode initialize, JsonNode answer)
    {
        String requested = initialize.path("params").path("protocolVersion").asText("");
        if (!StatelessTransport.SESSION_REVISIONS.contains(requested) || !answer.path("result").isObject())
            return answer.toString();
        ((ObjectNode)answer.get("result")).put("protocolVersion", requested);
        return answer.toString();
    }

    private static JsonNode parse(String text)
    {
        try
        {
            return JSON.readTree(text);
        }
        catch (JsonProcessingException x)
        {
            return null;
        }
    }
}
