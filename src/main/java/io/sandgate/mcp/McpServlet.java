package io.sandgate.mcp;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

import io.opentelemetry.api.trace.Span;
import io.sandgate.config.McpConfig;
import io.sandgate.config.McpFederation;
import io.sandgate.tracing.TraceAttributes;
import io.sandgate.web.AccessNote;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.ClientLimitFilter;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import io.sandgate.web.LogContext;
import io.sandgate.web.RequestBodies;
import io.sandgate.web.ServerSpan;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Servlet glue of the MCP face, mapped at {@code /mcp/*}: {@code /mcp/{name}/sse} and
 * {@code /mcp/{name}/message} (HTTP+SSE), {@code /mcp/{name}/mcp} (Streamable HTTP). It reads what
 * the {@link RequestChecks} decide on (origin, credential, client address) from the request and
 * hands the request on to the transport its endpoint names.
 */
public final class McpServlet extends HttpServlet
{
    private static final Set<String> ENDPOINTS = Set.of("sse", "message", "mcp");

    private final RequestChecks checks;
    private final ClientInfo clients;
    private final int maxBodySize;
    private final LegacySseTransport sse;
    private final StreamableTransport streamable;
    private final FederatedTransport federated;

    /**
     * @param clients how the client's address is read from a request, behind trusted proxies
     * @param maxBodySize the largest JSON-RPC body read, bytes ({@code mcp.max-body-size})
     */
    McpServlet(RequestChecks checks, ClientInfo clients, int maxBodySize, LegacySseTransport sse, StreamableTransport streamable, FederatedTransport federated)
    {
        this.federated = federated;
        this.checks = checks;
        this.clients = clients;
        this.maxBodySize = maxBodySize;
        this.sse = sse;
        this.streamable = streamable;
    }

    /** Every error this servlet's paths answer, the per-client limit's included, is a JSON-RPC error response. */
    @Override
    public void init()
    {
        Errors.body(getServletContext(), getServletName(), new JsonRpcErrors());
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException
    {
        AccessNote.face(request, AccessNote.Face.MCP);
        try
        {
            String path = request.getPathInfo();
            String[] parts = path == null ? new String[0] : path.split("/", -1);
            if (parts.length != 3)
                throw GatewayException.notFound("not an MCP endpoint: use /mcp/{server}/sse, /message or /mcp");
            McpFederation federation = federated.federation(parts[1]);
            if (federation != null)
            {
                federated(request, response, federation, parts[2]);
                return;
            }
            McpConfig.Server server = checks.server(parts[1]);
            LogContext.put(LogContext.Field.MCP_SERVER, server.name());
            describe(ServerSpan.of(request), request.getMethod(), server, parts[2]);
            checks.checkOrigin(request.getHeader(HttpHeader.ORIGIN.asString()));
            if (!ENDPOINTS.contains(parts[2]))
                throw GatewayException.notFound("not an MCP endpoint: use /mcp/{server}/sse, /message or /mcp");
            RequestChecks.Caller caller = checks.caller(server, parts[2], request.getHeader(HttpHeader.AUTHORIZATION.asString()), clients.clientAddress(request));
            String method = request.getMethod();
            switch (parts[2])
            {
                case "sse" -> only(method, "GET", () -> sse.openStream(request, response, server, caller));
                case "message" -> only(method, "POST", () ->
                {
                    McpSession session = checks.session(sessionId(request), server, caller);
                    withBody(request, response, body -> sse.message(request, response, server, session, caller, body));
                });
                case "mcp" ->
                {
                    switch (method)
                    {
                        case "POST" -> withBody(request, response, body -> streamable.post(request, response, server, caller, body));
                        case "GET" -> streamable.get(request, response, server, caller);
                        case "DELETE" -> streamable.delete(request, response, server, caller);
                        default -> throw new GatewayException(HttpStatus.METHOD_NOT_ALLOWED_405, "method_not_allowed", "use POST, GET or DELETE");
                    }
                }
                default -> throw GatewayException.notFound("not an MCP endpoint: use /mcp/{server}/sse, /message or /mcp");
            }
        }
        catch (RuntimeException x)
        {
            Errors.write(request, response, Errors.map(x, Errors.Peer.MCP_SERVER));
        }
    }

    /** A request to a federation, served at {@code /mcp/{federation}/mcp} only. */
    private void federated(HttpServletRequest request, HttpServletResponse response, McpFederation federation, String endpoint) throws IOException
    {
        LogContext.put(LogContext.Field.MCP_SERVER, federation.name());
        checks.checkOrigin(request.getHeader(HttpHeader.ORIGIN.asString()));
        if (!"mcp".equals(endpoint))
            throw GatewayException.notFound("not an MCP endpoint: a federation is served at /mcp/{federation}/mcp");
        RequestChecks.Caller caller = checks.caller(federation, request.getHeader(HttpHeader.AUTHORIZATION.asString()), clients.clientAddress(request));
        switch (request.getMethod())
        {
            case "POST" -> withBody(request, response, body -> federated.post(request, response, federation, caller, body));
            case "GET" -> federated.get(request, federation, caller);
            case "DELETE" -> federated.delete(request, response, federation, caller);
            default -> throw new GatewayException(HttpStatus.METHOD_NOT_ALLOWED_405, "method_not_allowed", "use POST, GET or DELETE");
        }
    }

    /**
     * Names the request's server span by the endpoint until the JSON-RPC message, once read, names
     * it by the MCP method; does nothing when tracing is off. A path that is no endpoint names
     * nothing: span names stay few.
     */
    private static void describe(Span span, String method, McpConfig.Server server, String endpoint)
    {
        if (span == null || !ENDPOINTS.contains(endpoint))
            return;
        String route = "/mcp/{server}/" + endpoint;
        span.updateName(TraceAttributes.namePart(method) + " " + route);
        span.setAttribute(TraceAttributes.HTTP_ROUTE, route);
        span.setAttribute(TraceAttributes.MCP_SERVER, server.name());
    }

    interface Handler
    {
        void handle() throws IOException;
    }

    private interface BodyHandler
    {
        void handle(String body) throws IOException;
    }

    /**
     * Goes asynchronous, reads the body without holding the thread, then runs the handler, which
     * completes the exchange (through {@link #end} on failure).
     */
    private void withBody(HttpServletRequest request, HttpServletResponse response, BodyHandler handler) throws IOException
    {
        AsyncContext async = request.startAsync();
        // The upstream's own timeouts bound the exchange; an SSE answer may last.
        async.setTimeout(0);
        readBody(request).whenComplete((body, failure) ->
        {
            if (failure != null)
            {
                end(async, failure);
                return;
            }
            try
            {
                handler.handle(body);
            }
            catch (IOException | RuntimeException x)
            {
                end(async, x);
            }
        });
    }

    /** Reads a request body without holding the thread; the limit is {@code mcp.max-body-size}. */
    private CompletableFuture<String> readBody(HttpServletRequest request) throws IOException
    {
        return RequestBodies.read(request, maxBodySize).thenApply(bytes -> new String(bytes, StandardCharsets.UTF_8));
    }

    /**
     * Once a request's stream has started, it no longer counts among its client's requests in
     * progress ({@code server.max-concurrent-requests-per-client}) but among its streams.
     */
    static Runnable streamOpened(HttpServletRequest request)
    {
        return () -> ClientLimitFilter.streamOpened(request);
    }

    /**
     * Answers with an upstream's answer, under the status given: its type, and its body streamed as
     * it comes, event by event with each cut when the server's tool policy or pins cut its lists, or
     * read whole first when it answers a {@code tools/list}. Completes the exchange.
     */
    static void relay(AsyncContext async, Upstream.Exchange exchange, int status, ToolAccess tools, JsonRpc rpc)
    {
        try
        {
            HttpServletResponse response = (HttpServletResponse)async.getResponse();
            response.setStatus(status);
            String type = exchange.header(HttpHeader.CONTENT_TYPE.asString());
            if (type != null)
                response.setContentType(type);
            if (exchange.isEventStream())
                response.setHeader(McpHeaders.X_ACCEL_BUFFERING, "no");
            // A server whose lists are cut gets every answer read: it may put a list on any of them.
            if (!tools.readsLists())
                exchange.relayTo(async);
            else if (exchange.isEventStream() && !ToolGuard.cutsAnswer(tools, rpc))
                ToolGuard.relayCutEvents(tools, exchange, async);
            else
                ToolGuard.relayCut(tools, exchange, async);
        }
        catch (IOException | RuntimeException x)
        {
            exchange.discard();
            end(async, x);
        }
    }

    /** Ends an asynchronous MCP exchange with a JSON-RPC message the gateway answers itself. */
    static void answer(AsyncContext async, String message) throws IOException
    {
        answer(async, new CallGate.Verdict(message, HttpStatus.OK_200, 0));
    }

    /** Ends an asynchronous MCP exchange with the gateway's own answer to its tool calls. */
    static void answer(AsyncContext async, CallGate.Verdict verdict) throws IOException
    {
        HttpServletResponse response = (HttpServletResponse)async.getResponse();
        response.setStatus(verdict.status());
        if (verdict.retryAfterSeconds() > 0)
            response.setHeader(HttpHeader.RETRY_AFTER.asString(), Long.toString(verdict.retryAfterSeconds()));
        String message = verdict.answer();
        response.setContentType("application/json");
        response.getWriter().write(message);
        async.complete();
    }

    /**
     * Goes on once the request's tool calls are judged: with {@code next} when they may go, else
     * with the gateway's own answer. Ends the exchange when either fails.
     */
    static void whenAdmitted(AsyncContext async, CompletableFuture<CallGate.Verdict> verdict, Handler next)
    {
        verdict.whenComplete((judged, failure) ->
        {
            try
            {
                if (failure != null)
                    end(async, failure);
                else if (judged.goes())
                    next.handle();
                else
                    answer(async, judged);
            }
            catch (IOException | RuntimeException x)
            {
                end(async, x);
            }
        });
    }

    /**
     * Goes on with an upstream exchange once it is there. Not getting one, or {@code next} failing
     * with it (the exchange then discarded), ends the client's request with that failure.
     *
     * @param failed runs first when there is no exchange: what was reserved for it is given back
     */
    static void whenSent(AsyncContext async, CompletableFuture<Upstream.Exchange> sent, Runnable failed, Consumer<Upstream.Exchange> next)
    {
        sent.whenComplete((exchange, failure) ->
        {
            if (failure != null)
            {
                failed.run();
                end(async, failure);
                return;
            }
            try
            {
                next.accept(exchange);
            }
            catch (RuntimeException x)
            {
                exchange.discard();
                end(async, x);
            }
        });
    }

    /** Ends an asynchronous MCP exchange with the error its failure maps to. */
    static void end(AsyncContext async, Throwable failure)
    {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        try
        {
            Errors.write((HttpServletRequest)async.getRequest(), (HttpServletResponse)async.getResponse(), Errors.map(cause, Errors.Peer.MCP_SERVER));
        }
        catch (IOException | IllegalStateException x)
        {
            // The client is gone; there is nobody left to tell.
        }
        finally
        {
            async.complete();
        }
    }

    /**
     * The {@code sessionId} of the query string. Read there rather than through {@code getParameter},
     * which would take a form-encoded body (some HTTP+SSE clients label their JSON so) as parameters
     * and leave nothing to relay.
     */
    static String sessionId(HttpServletRequest request)
    {
        String query = request.getQueryString();
        if (query == null)
            return null;
        try
        {
            for (String pair : query.split("&"))
            {
                int equals = pair.indexOf('=');
                String name = equals < 0 ? pair : pair.substring(0, equals);
                if ("sessionId".equals(URLDecoder.decode(name, StandardCharsets.UTF_8)))
                    return equals < 0 ? "" : URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
            }
        }
        catch (IllegalArgumentException x)
        {
            // A broken escape names no session the gateway could have issued.
        }
        return null;
    }

    private static void only(String method, String allowed, Handler handler) throws IOException
    {
        if (!allowed.equals(method))
            throw new GatewayException(HttpStatus.METHOD_NOT_ALLOWED_405, "method_not_allowed", "use " + allowed);
        handler.handle();
    }
}
