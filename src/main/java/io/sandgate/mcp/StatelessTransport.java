package io.sandgate.mcp;

import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.McpConfig;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The 2026-07-28 revision of Streamable HTTP at {@code /mcp/{name}/mcp}: no {@code initialize} and
 * no session. Every request names its revision in {@code MCP-Protocol-Version} and in
 * {@code params._meta}, and its method and target in {@code Mcp-Method} and {@code Mcp-Name}, so
 * that the gateway routes and applies policy from headers it has checked against the body. The
 * gateway keeps nothing for these requests: any replica relays any of them, and the answer (JSON,
 * an event stream, or a {@code subscriptions/listen} stream) streams straight back, untouched.
 *
 * @see <a href="https://modelcontextprotocol.io/specification/2026-07-28/basic/transports">MCP transports, 2026-07-28</a>
 */
final class StatelessTransport
{
    /** The stateless revisions the gateway speaks. */
    static final List<String> REVISIONS = List.of("2026-07-28");
    /** The revisions of the initialize-and-session era. */
    static final Set<String> SESSION_REVISIONS = Set.of("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25");
    static final String META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
    static final String META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

    private final Upstream upstream;
    private final CallGate gate;

    StatelessTransport(Upstream upstream, CallGate gate)
    {
        this.upstream = upstream;
        this.gate = gate;
    }

    /**
     * Whether a POST is of the stateless era: it holds no session, and it names a revision that is
     * not of the session era or carries per-request {@code _meta}. Everything else (an
     * {@code initialize}, a session's request) is the session era's, as the reference server decides.
     */
    static boolean applies(HttpServletRequest request, JsonRpc rpc)
    {
        if (request.getHeader(McpHeaders.SESSION_ID) != null)
            return false;
        String version = header(request, McpHeaders.PROTOCOL_VERSION);
        boolean meta = rpc.params().has("_meta");
        return meta || version != null && !SESSION_REVISIONS.contains(version);
    }

    /** Checks a stateless request and relays it; the answer streams back as the upstream gives it. */
    void post(HttpServletRequest request, HttpServletResponse response, McpConfig.Server server, RequestChecks.Caller caller, JsonRpc rpc, String body)
    {
        check(request, rpc);
        McpServlet.whenAdmitted(request.getAsyncContext(), gate.admit(request, server, caller, rpc), () -> admitted(request, server, caller, rpc, body));
    }

    /** Relays a request whose tool calls, if any, may go. */
    private void admitted(HttpServletRequest request, McpConfig.Server server, RequestChecks.Caller caller, JsonRpc rpc, String body)
    {
        Map<String, String> headers = new HashMap<>();
        headers.put(HttpHeader.CONTENT_TYPE.asString(), "application/json");
        String accept = request.getHeader(HttpHeader.ACCEPT.asString());
        headers.put(HttpHeader.ACCEPT.asString(), accept == null ? "application/json, text/event-stream" : accept);
        // The routing headers and the tool's own Mcp-Param-* headers, which the server checks against the body.
        for (String name : Collections.list(request.getHeaderNames()))
        {
            String lower = name.toLowerCase(Locale.ROOT);
            if (lower.startsWith("mcp-") && !lower.equals("mcp-session-id"))
                headers.put(name, request.getHeader(name));
        }
        AsyncContext async = request.getAsyncContext();
        upstream.exchange(new Upstream.On(server, caller.owner()), HttpMethod.POST, server.url(), headers, body).whenComplete((exchange, failure) ->
        {
            if (failure != null)
            {
                McpServlet.end(async, failure);
                return;
            }
            McpServlet.relay(async, exchange, exchange.status(), caller.tools(server), rpc);
        });
    }

    /**
     * The transport's checks, in the order the reference server makes them, then the routing
     * headers: the gateway acts on {@code Mcp-Method} and {@code Mcp-Name}, so a body that says
     * otherwise must not get through.
     */
    static void check(HttpServletRequest request, JsonRpc rpc)
    {
        String version = header(request, McpHeaders.PROTOCOL_VERSION);
        if (version == null)
            throw mismatch("Missing MCP-Protocol-Version header");
        String method = rpc.method();
        if (method == null)
            throw new RpcException(HttpStatus.BAD_REQUEST_400, JsonRpcErrors.INVALID_REQUEST,
                "a " + version + " request is one JSON-RPC request or notification, not a batch or a response", null);
        JsonNode meta = rpc.params().path("_meta");
        if (!meta.path(META_PROTOCOL_VERSION).isTextual() || !meta.has(META_CLIENT_CAPABILITIES))
            throw new RpcException(HttpStatus.BAD_REQUEST_400, JsonRpcErrors.INVALID_PARAMS,
                "Invalid params: _meta must carry " + META_PROTOCOL_VERSION + " and " + META_CLIENT_CAPABILITIES, null);
        if (!version.equals(meta.path(META_PROTOCOL_VERSION).asText()))
            throw mismatch("MCP-Protocol-Version header does not match _meta");
        if (!REVISIONS.contains(version))
        {
            ObjectNode data = JsonNodeFactory.instance.objectNode();
            REVISIONS.forEach(data.putArray("supported")::add);
            data.put("requested", version);
            throw new RpcException(HttpStatus.BAD_REQUEST_400, JsonRpcErrors.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data);
        }
        String methodHeader = header(request, McpHeaders.METHOD);
        if (methodHeader == null)
            throw mismatch("Missing Mcp-Method header");
        if (!methodHeader.equals(method))
            throw mismatch("Mcp-Method header does not match the body's method");
        String name = name(method, rpc.params());
        String nameHeader = header(request, McpHeaders.NAME);
        if (name != null && nameHeader == null)
            throw mismatch("Missing Mcp-Name header");
        if (nameHeader != null && !nameHeader.equals(name))
            throw mismatch("Mcp-Name header does not match the body");
        // The revision removed initialize, and its servers answer it as a method they do not have.
        // Relayed, it would have a session-era upstream open a session that no
        // mcp.max-sessions-per-client counts: sessions are made on the session path only.
        if (rpc.isInitialize())
            throw new RpcException(HttpStatus.NOT_FOUND_404, JsonRpcErrors.METHOD_NOT_FOUND,
                "Method not found: " + version + " has no initialize (send server/discover; for a session, initialize without _meta)", null);
    }

    /** What {@code Mcp-Name} must say for a method: the tool, prompt, resource or task it is about; null when none. */
    static String name(String method, JsonNode params)
    {
        String field = switch (method)
        {
            case "tools/call", "prompts/get" -> "name";
            case "resources/read" -> "uri";
            case "tasks/get", "tasks/update", "tasks/cancel" -> "taskId";
            default -> null;
        };
        JsonNode value = field == null ? null : params.get(field);
        return value != null && value.isTextual() ? value.asText() : null;
    }

    /** A header's value without the optional white space around it, which is not part of the value (RFC 9110, 5.5). */
    private static String header(HttpServletRequest request, String name)
    {
        String value = request.getHeader(name);
        return value == null ? null : value.strip();
    }

    private static RpcException mismatch(String message)
    {
        return new RpcException(HttpStatus.BAD_REQUEST_400, JsonRpcErrors.HEADER_MISMATCH, message, null);
    }
}
