package io.sandgate.mcp;

import java.io.IOException;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandgate.config.McpConfig;
import io.sandgate.web.GatewayException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The 2024-11-05 HTTP+SSE transport towards clients: {@code GET /mcp/{name}/sse} opens the stream
 * and announces {@code /mcp/{name}/message?sessionId=...}; POSTs there may land on any replica.
 * Answers travel upstream -> session log -> the replica holding the stream -> client, each event
 * with an id; {@code GET .../sse?sessionId=...} with {@code Last-Event-ID} resumes a session on any
 * replica. It keeps no state of its own, only the parts it works with: a record of them.
 *
 * @param checks origin, session, owner and limits, checked before anything reaches the upstream
 * @param relay carries answers from the upstream to the replica holding the client's stream
 * @param bus the sessions every replica shares
 * @param upstream the exchanges with the MCP servers
 * @param upstreams the upstreams' own event streams this replica holds
 * @param bridge speaks for the client to a 2026-07-28-only server ({@code transport: stateless})
 * @param gate judges tool calls: policy, quota, audit
 */
record LegacySseTransport(RequestChecks checks, SessionRelay relay, SessionBus bus, Upstream upstream, UpstreamStreams upstreams,
                          StatelessBridge bridge, CallGate gate)
{
    private static final Logger LOG = LoggerFactory.getLogger(LegacySseTransport.class);

    void openStream(HttpServletRequest request, HttpServletResponse response, McpConfig.Server server, RequestChecks.Caller caller) throws IOException
    {
        // Before the session is made or the server's stream opened.
        ClientStreams.Place place = checks.reserveStream(caller, McpServlet.streamOpened(request));
        try
        {
            openStream(request, response, server, caller, place);
        }
        catch (IOException | RuntimeException x)
        {
            place.cancel();
            throw x;
        }
    }

    private void openStream(HttpServletRequest request, HttpServletResponse response, McpConfig.Server server, RequestChecks.Caller caller,
                            ClientStreams.Place place) throws IOException
    {
        String resume = McpServlet.sessionId(request);
        String header = request.getHeader(McpHeaders.LAST_EVENT_ID);
        McpSession session;
        String lastEventId;
        if (resume != null)
        {
            session = checks.session(resume, server, caller);
            relay.resumed();
            // Without a Last-Event-ID of the gateway's the client asks for a new stream, not for what earlier ones were sent.
            lastEventId = header != null && bus.isEventId(header) ? header : bus.lastEventId(session.id());
        }
        else
        {
            session = checks.newSession(server, caller);
            lastEventId = header;
        }
        ClientStream stream = ClientStream.start(request, response);
        place.open(stream);
        String sessionId = session.id();
        String endpoint = request.getContextPath() + "/mcp/" + server.name() + "/message?sessionId=" + sessionId;
        if (server.transport() == McpConfig.Transport.SSE && resume == null)
        {
            // The client hears of its endpoint once the upstream has announced its own; no thread waits for that.
            upstreams.openLegacy(Upstream.On.session(server, session), sessionId, stream).whenComplete((messageUrl, failure) ->
            {
                if (failure != null)
                    return;
                try
                {
                    bus.update(session.withUpstreamMessageUrl(messageUrl));
                    stream.onClose(() -> bus.delete(sessionId));
                    relay(server, session, lastEventId, stream, endpoint, caller.tools(server));
                }
                catch (IOException | RuntimeException x)
                {
                    stream.close();
                }
            });
            return;
        }
        relay(server, session, lastEventId, stream, endpoint, caller.tools(server));
    }

    /** Announces the message endpoint, then relays the session's log to the client stream. */
    private void relay(McpConfig.Server server, McpSession session, String lastEventId, ClientStream stream, String endpoint, ToolAccess tools)
        throws IOException
    {
        String sessionId = session.id();
        stream.event(null, "endpoint", endpoint);

        // Only a Streamable HTTP session-era upstream has a GET stream to hold.
        AtomicBoolean upstreamGetOpened = new AtomicBoolean(server.transport() != McpConfig.Transport.STREAMABLE);
        SessionBus.Subscription subscription = relay.subscribe(sessionId, lastEventId, new ClientStream.Delivery(stream, tools)
        {
            @Override
            void deliver(String eventId, String message) throws IOException
            {
                stream.event(eventId, "message", message);
                // Once initialize has given the upstream session, messages the server starts
                // arrive on its GET stream, which this replica holds for as long as it holds the client.
                if (!upstreamGetOpened.get())
                    holdUpstreamGet(server, sessionId, stream, upstreamGetOpened);
            }
        });
        stream.onClose(subscription::close);
    }

    /**
     * Holds the upstream's GET stream once the session record has the upstream session. Looked up
     * after an event was written: should the store not answer, the next event looks again. Letting
     * the failure through would mark the event undelivered, and the client would get it twice.
     */
    private void holdUpstreamGet(McpConfig.Server server, String sessionId, ClientStream stream, AtomicBoolean opened)
    {
        Optional<McpSession> session;
        try
        {
            session = bus.find(sessionId);
        }
        catch (RuntimeException x)
        {
            LOG.debug("MCP session {} not read; its upstream GET stream waits for the next event", sessionId, x);
            return;
        }
        session.filter(s -> s.upstreamSessionId().isPresent()).ifPresent(s ->
        {
            if (opened.compareAndSet(false, true))
                upstreams.holdGet(server, s, stream);
        });
    }

    /**
     * Relays a client message upstream and answers 202 once the upstream has accepted it; what the
     * upstream answers travels through the session log to whichever replica holds the stream.
     */
    void message(HttpServletRequest request, HttpServletResponse response, McpConfig.Server server, McpSession session, RequestChecks.Caller caller,
                 String body)
    {
        JsonRpc rpc = JsonRpc.parse(body);
        JsonRpcErrors.parsed(request, rpc);
        McpSpans.describe(request, rpc, session);
        // What the request causes reaches the client through the session's log, perhaps on
        // another replica: it carries the request's trace along.
        String trace = McpSpans.traceparent(request);
        AsyncContext async = request.getAsyncContext();
        gate.admit(request, server, caller, rpc).whenComplete((verdict, failure) ->
        {
            try
            {
                if (failure != null)
                    McpServlet.end(async, failure);
                else if (verdict.goes())
                    admitted(request, server, session, rpc, body, trace);
                else
                {
                    // Answers travel on the session's stream: the gateway's too, as the server's would.
                    relay.answer(session.id(), verdict.answer(), trace);
                    response.setStatus(HttpStatus.ACCEPTED_202);
                    async.complete();
                }
            }
            catch (RuntimeException x)
            {
                McpServlet.end(async, x);
            }
        });
    }

    /** Relays a message whose tool calls, if any, may go. */
    private void admitted(HttpServletRequest request, McpConfig.Server server, McpSession session, JsonRpc rpc, String body, String trace)
    {
        AsyncContext async = request.getAsyncContext();
        if (server.transport() == McpConfig.Transport.STATELESS)
        {
            bridged(async, server, session, rpc, trace);
            return;
        }
        CompletableFuture<Upstream.Exchange> sent;
        Map<String, String> headers = new HashMap<>();
        headers.put(HttpHeader.CONTENT_TYPE.asString(), "application/json");
        McpSpans.addTraceHeaders(request, headers);
        if (server.transport() == McpConfig.Transport.SSE)
        {
            String url = session.upstreamMessageUrl().orElseThrow(() -> GatewayException.unavailable("session not ready"));
            sent = upstream.exchange(Upstream.On.session(server, session), HttpMethod.POST, URI.create(url), headers, body);
        }
        else
        {
            headers.put(HttpHeader.ACCEPT.asString(), "application/json, text/event-stream");
            headers.put(McpHeaders.SESSION_ID, session.upstreamSessionId().orElse(null));
            headers.put(McpHeaders.PROTOCOL_VERSION, session.protocolVersion().orElse(null));
            sent = upstream.exchange(Upstream.On.session(server, session), HttpMethod.POST, server.url(), headers, body);
        }
        McpServlet.whenSent(async, sent, () -> { }, exchange -> accepted(async, server, session, exchange, trace));
    }

    /**
     * A message to a 2026-07-28-only upstream: initialize is answered by the bridge, other requests
     * go as stateless ones; either answer travels on the session's stream like any other.
     */
    private void bridged(AsyncContext async, McpConfig.Server server, McpSession session, JsonRpc rpc, String trace)
    {
        if (!rpc.isSingle())
            throw GatewayException.badRequest("a batch cannot be relayed to a 2026-07-28 server: send its messages one at a time");
        JsonNode message = rpc.messages().get(0);
        ((HttpServletResponse)async.getResponse()).setStatus(HttpStatus.ACCEPTED_202);
        if (rpc.isInitialize())
        {
            bridge.initialize(server, session, message).whenComplete((answer, failure) ->
            {
                if (failure != null)
                    McpServlet.end(async, failure);
                else
                {
                    try
                    {
                        relay.answer(session.id(), answer, trace);
                        async.complete();
                    }
                    catch (RuntimeException x)
                    {
                        McpServlet.end(async, x);
                    }
                }
            });
            return;
        }
        if (!rpc.hasRequests())
        {
            async.complete();
            return;
        }
        String pong = StatelessBridge.answeredHere(message);
        if (pong != null)
        {
            relay.answer(session.id(), pong, trace);
            async.complete();
            return;
        }
        bridge.send(server, session, message).whenComplete((exchange, failure) ->
        {
            if (failure != null)
            {
                McpServlet.end(async, failure);
                return;
            }
            relay.pump(server, session.id(), exchange, trace);
            async.complete();
        });
    }

    private void accepted(AsyncContext async, McpConfig.Server server, McpSession session, Upstream.Exchange exchange, String trace)
    {
        int status = exchange.status();
        HttpServletResponse response = (HttpServletResponse)async.getResponse();
        if (status / 100 == 2)
        {
            String upstreamSession = exchange.header(McpHeaders.SESSION_ID);
            if (server.transport() == McpConfig.Transport.STREAMABLE && upstreamSession != null && session.upstreamSessionId().isEmpty())
            {
                // Stored before the client hears back, so its next POST on any replica finds it.
                bus.update(session.withUpstreamSessionId(upstreamSession));
            }
            if (server.transport() == McpConfig.Transport.STREAMABLE && status != HttpStatus.ACCEPTED_202)
                relay.pump(server, session.id(), exchange, trace);
            else
                exchange.discard();
            response.setStatus(HttpStatus.ACCEPTED_202);
            async.complete();
            return;
        }
        if (status == HttpStatus.NOT_FOUND_404)
        {
            exchange.discard();
            throw relay.endedUpstream(session);
        }
        if (status != HttpStatus.BAD_REQUEST_400)
        {
            exchange.discard();
            throw new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_failed", "the MCP server answered " + status);
        }
        exchange.text().whenComplete((detail, failure) ->
        {
            if (failure != null)
            {
                McpServlet.end(async, failure);
                return;
            }
            try
            {
                response.setStatus(HttpStatus.BAD_REQUEST_400);
                response.setContentType("application/json");
                response.getWriter().write(detail);
            }
            catch (IOException | IllegalStateException x)
            {
                // The client is gone.
            }
            async.complete();
        });
    }
}
