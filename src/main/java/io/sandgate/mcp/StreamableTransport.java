package io.sandgate.mcp;

import java.io.IOException;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandgate.config.McpConfig;
import io.sandgate.web.GatewayException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The Streamable HTTP transport towards clients (2025-03-26 through 2025-11-25) at
 * {@code /mcp/{name}/mcp}. POST answers stream straight back from the upstream (JSON or SSE, as it
 * gives them); the client-facing {@code Mcp-Session-Id} maps to the upstream's in the shared
 * session record, so any replica serves any request; the GET stream goes through the session log,
 * with event ids and {@code Last-Event-ID} resume on any replica.
 */
final class StreamableTransport
{
    private final RequestChecks checks;
    private final SessionRelay relay;
    private final SessionBus bus;
    private final Upstream upstream;
    private final UpstreamStreams upstreams;
    private final StatelessBridge bridge;
    private final StatelessTransport stateless;
    private final SseBridge sseBridge;
    private final CallGate gate;

    /**
     * @param bridge speaks for the client to a 2026-07-28-only server ({@code transport: stateless})
     * @param stateless serves 2026-07-28 requests, which come with no session
     * @param sseBridge speaks for the client to a 2024-11-05 server ({@code transport: sse})
     * @param gate judges tool calls: policy, quota, audit
     */
    StreamableTransport(RequestChecks checks, SessionRelay relay, SessionBus bus, Upstream upstream, UpstreamStreams upstreams, StatelessBridge bridge,
                        StatelessTransport stateless, SseBridge sseBridge, CallGate gate)
    {
        this.checks = checks;
        this.relay = relay;
        this.bus = bus;
        this.upstream = upstream;
        this.upstreams = upstreams;
        this.bridge = bridge;
        this.stateless = stateless;
        this.sseBridge = sseBridge;
        this.gate = gate;
    }

    /** A session's requests name a session-era revision, when they name one. */
    static void checkVersion(HttpServletRequest request)
    {
        String version = request.getHeader(McpHeaders.PROTOCOL_VERSION);
        if (version != null && !StatelessTransport.SESSION_REVISIONS.contains(version))
            throw GatewayException.badRequest("unsupported MCP-Protocol-Version " + version + " for a session: 2026-07-28 requests carry no Mcp-Session-Id");
    }

    /** Relays a POST: its answer (JSON, or an SSE stream) streams straight back to the client. */
    void post(HttpServletRequest request, HttpServletResponse response, McpConfig.Server server, RequestChecks.Caller caller, String body) throws IOException
    {
        JsonRpc rpc = JsonRpc.parse(body);
        JsonRpcErrors.parsed(request, rpc);
        if (StatelessTransport.applies(request, rpc))
        {
            if (server.transport() == McpConfig.Transport.SSE)
                throw new GatewayException(HttpStatus.NOT_IMPLEMENTED_501, "not_implemented", "this server speaks HTTP+SSE (2024-11-05): use a session-era client");
            McpSpans.describe(request, rpc, null);
            stateless.post(request, response, server, caller, rpc, body);
            return;
        }
        checkVersion(request);
        String sessionId = request.getHeader(McpHeaders.SESSION_ID);
        McpSession session = sessionId == null ? null : checks.session(sessionId, server, caller);
        McpSpans.describe(request, rpc, session);
        if (session != null)
            response.setHeader(McpHeaders.SESSION_ID, session.id());
        McpServlet.whenAdmitted(request.getAsyncContext(), gate.admit(request, server, caller, rpc), () -> admitted(request, response, server, session, caller, rpc, body));
    }

    /** Relays a POST whose tool calls, if any, may go. */
    private void admitted(HttpServletRequest request, HttpServletResponse response, McpConfig.Server server, McpSession session, RequestChecks.Caller caller,
                          JsonRpc rpc, String body) throws IOException
    {
        if (server.transport() == McpConfig.Transport.STATELESS)
        {
            bridged(request, response, server, session, caller, rpc);
            return;
        }
        if (server.transport() == McpConfig.Transport.SSE)
        {
            sseBridge.post(request, server, session, caller, rpc, body);
            return;
        }
        // Counted against the client's sessions before the upstream makes one.
        McpSession reserved = session == null && rpc.isInitialize() ? checks.newSession(server, caller) : null;

        Map<String, String> headers = new HashMap<>();
        headers.put(HttpHeader.CONTENT_TYPE.asString(), "application/json");
        String accept = request.getHeader(HttpHeader.ACCEPT.asString());
        headers.put(HttpHeader.ACCEPT.asString(), accept == null ? "application/json, text/event-stream" : accept);
        headers.put(McpHeaders.PROTOCOL_VERSION, request.getHeader(McpHeaders.PROTOCOL_VERSION));
        if (session != null)
            headers.put(McpHeaders.SESSION_ID, session.upstreamSessionId().orElse(null));
        McpSpans.addTraceHeaders(request, headers);
        AsyncContext async = request.getAsyncContext();
        McpServlet.whenSent(async, upstream.exchange(new Upstream.On(server, caller.owner()), HttpMethod.POST, server.url(), headers, body), () -> release(reserved), exchange ->
        {
            settle(request, response, session, reserved, exchange);
            // Past here the relay ends the request itself, whatever happens.
            McpServlet.relay(async, exchange, exchange.status(), caller.tools(server), rpc);
        });
    }

    /**
     * A session-era POST to a 2026-07-28-only upstream: initialize is answered by the bridge, the
     * client's notifications and responses stay here (that revision has no use for them), and
     * each request goes upstream as a stateless one, its answer streaming back.
     */
    private void bridged(HttpServletRequest request, HttpServletResponse response, McpConfig.Server server, McpSession session, RequestChecks.Caller caller,
                         JsonRpc rpc) throws IOException
    {
        if (!rpc.isSingle())
            throw GatewayException.badRequest("a batch cannot be relayed to a 2026-07-28 server: send its messages one at a time");
        AsyncContext async = request.getAsyncContext();
        JsonNode message = rpc.messages().get(0);
        if (session == null)
        {
            if (!rpc.isInitialize())
                throw GatewayException.badRequest("no session: initialize first, or send a 2026-07-28 request");
            McpSession created = checks.newSession(server, caller);
            bridge.initialize(server, created, message).whenComplete((answer, failure) ->
            {
                if (failure != null)
                {
                    release(created);
                    McpServlet.end(async, failure);
                    return;
                }
                try
                {
                    response.setHeader(McpHeaders.SESSION_ID, created.id());
                    McpServlet.answer(async, answer);
                }
                catch (IOException | RuntimeException x)
                {
                    McpServlet.end(async, x);
                }
            });
            return;
        }
        if (!rpc.hasRequests())
        {
            response.setStatus(HttpStatus.ACCEPTED_202);
            async.complete();
            return;
        }
        String pong = StatelessBridge.answeredHere(message);
        if (pong != null)
        {
            McpServlet.answer(async, pong);
            return;
        }
        bridge.send(server, session, message).whenComplete((exchange, failure) ->
        {
            if (failure != null)
            {
                McpServlet.end(async, failure);
                return;
            }
            McpServlet.relay(async, exchange, StatelessBridge.sessionEraStatus(exchange), caller.tools(server), rpc);
        });
    }

    private void release(McpSession reserved)
    {
        if (reserved != null)
            bus.delete(reserved.id());
    }

    /**
     * What an upstream's answer means for the sessions: a 404 ends the client's; an initialize's
     * reserved session is completed with the upstream's before the client hears of it, or given
     * back if the upstream made none.
     */
    private void settle(HttpServletRequest request, HttpServletResponse response, McpSession session, McpSession reserved, Upstream.Exchange exchange)
    {
        if (session != null && exchange.status() == HttpStatus.NOT_FOUND_404)
        {
            throw relay.endedUpstream(session);
        }
        String upstreamSession = exchange.header(McpHeaders.SESSION_ID);
        if (reserved != null && exchange.status() / 100 == 2 && upstreamSession != null)
        {
            McpSession created = reserved.withUpstreamSessionId(upstreamSession);
            String version = request.getHeader(McpHeaders.PROTOCOL_VERSION);
            bus.update(version == null ? created : created.withProtocolVersion(version));
            response.setHeader(McpHeaders.SESSION_ID, created.id());
        }
        else if (reserved != null)
        {
            release(reserved);
        }
    }

    void get(HttpServletRequest request, HttpServletResponse response, McpConfig.Server server, RequestChecks.Caller caller) throws IOException
    {
        checkVersion(request);
        String sessionId = request.getHeader(McpHeaders.SESSION_ID);
        if (sessionId == null)
            throw new GatewayException(HttpStatus.METHOD_NOT_ALLOWED_405, "method_not_allowed", "GET needs an Mcp-Session-Id");
        McpSession session = checks.session(sessionId, server, caller);
        if (server.transport() != McpConfig.Transport.STREAMABLE)
            throw new GatewayException(HttpStatus.METHOD_NOT_ALLOWED_405, "method_not_allowed",
                "no session stream through this server (" + server.transport().name().toLowerCase(Locale.ROOT) + "): messages come with the answers to POSTs");
        // Before the server's GET stream is opened.
        ClientStreams.Place place = checks.reserveStream(caller, McpServlet.streamOpened(request));
        try
        {
            get(request, server, session, place, caller.tools(server));
        }
        catch (RuntimeException x)
        {
            place.cancel();
            throw x;
        }
    }

    private void get(HttpServletRequest request, McpConfig.Server server, McpSession session, ClientStreams.Place place, ToolAccess tools)
    {
        String lastEventId = request.getHeader(McpHeaders.LAST_EVENT_ID);
        // An id of the upstream's: the client resumes a POST answer the upstream cut short (SSE
        // polling), which only the upstream can replay, on the GET stream it opens with that id.
        String upstreamLastId = lastEventId != null && !bus.isEventId(lastEventId) ? lastEventId : null;
        if (lastEventId != null)
            relay.resumed();
        // A new stream, or the resumption of the upstream's: what earlier streams of the session were sent is not replayed.
        String after = lastEventId == null || upstreamLastId != null ? bus.lastEventId(session.id()) : lastEventId;
        AsyncContext async = request.startAsync();
        async.setTimeout(0);
        // The client hears 200 once the upstream's stream is open, so that nothing the upstream
        // sends on it after the client's next request can be missed.
        upstream.stream(Upstream.On.session(server, session), server.url(), UpstreamStreams.getHeaders(session, upstreamLastId)).whenComplete((upstreamGet, failure) ->
        {
            if (failure != null)
            {
                place.cancel();
                McpServlet.end(async, failure);
                return;
            }
            if (upstreamGet.status() != HttpStatus.OK_200 || !upstreamGet.isEventStream())
            {
                place.cancel();
                upstreamGet.abort(new IllegalStateException("no event stream"));
                McpServlet.end(async, upstreamGet.status() == HttpStatus.METHOD_NOT_ALLOWED_405
                    ? new GatewayException(HttpStatus.METHOD_NOT_ALLOWED_405, "method_not_allowed", "the MCP server offers no GET stream")
                    : new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_failed", "the MCP server refused the GET stream (" + upstreamGet.status() + ")"));
                return;
            }
            try
            {
                relay(async, server, session, after, upstreamGet, place, tools);
            }
            catch (IOException | RuntimeException x)
            {
                place.cancel();
                upstreamGet.abort(x);
                McpServlet.end(async, x);
            }
        });
    }

    private void relay(AsyncContext async, McpConfig.Server server, McpSession session, String lastEventId, Upstream.Exchange upstreamGet,
                       ClientStreams.Place place, ToolAccess tools) throws IOException
    {
        ClientStream stream = ClientStream.start(async);
        place.open(stream);
        upstreams.holdGet(server, session, stream, upstreamGet);
        SessionBus.Subscription subscription = relay.subscribe(session.id(), lastEventId, new ClientStream.Delivery(stream, tools)
        {
            @Override
            void deliver(String eventId, String message) throws IOException
            {
                stream.event(eventId, null, message);
            }
        });
        stream.onClose(subscription::close);
    }

    void delete(HttpServletRequest request, HttpServletResponse response, McpConfig.Server server, RequestChecks.Caller caller)
    {
        checkVersion(request);
        McpSession session = checks.session(request.getHeader(McpHeaders.SESSION_ID), server, caller);
        if (server.transport() != McpConfig.Transport.STREAMABLE || session.upstreamSessionId().isEmpty())
        {
            bus.delete(session.id());
            response.setStatus(HttpStatus.NO_CONTENT_204);
            return;
        }
        Map<String, String> headers = new HashMap<>();
        headers.put(McpHeaders.SESSION_ID, session.upstreamSessionId().get());
        headers.put(McpHeaders.PROTOCOL_VERSION, request.getHeader(McpHeaders.PROTOCOL_VERSION));
        AsyncContext async = request.startAsync();
        async.setTimeout(0);
        upstream.exchange(Upstream.On.session(server, session), HttpMethod.DELETE, server.url(), headers, null).whenComplete((exchange, failure) ->
        {
            // The upstream may be gone already; the session ends here regardless.
            if (exchange != null)
                exchange.discard();
            try
            {
                bus.delete(session.id());
                ((HttpServletResponse)async.getResponse()).setStatus(HttpStatus.NO_CONTENT_204);
                async.complete();
            }
            catch (RuntimeException x)
            {
                McpServlet.end(async, x);
            }
        });
    }
}
