package io.sandgate.mcp;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.McpConfig;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Speaks for session-era clients (Streamable HTTP 2025, HTTP+SSE 2024-11-05) to an upstream that
 * knows only the 2026-07-28 stateless revision ({@code transport: stateless}). The gateway answers
 * {@code initialize} itself, from the upstream's {@code server/discover}, and keeps the session and
 * what the client said of itself; each later request goes upstream as a stateless one, with the
 * per-request {@code _meta} and routing headers that revision wants. Results pass back untouched
 * (their {@code resultType} and caching hints are extra fields to an older client).
 *
 * <p>Not bridged: input-required results (2026's way of asking the client mid-call, which a
 * session-era client would have to be asked on its stream) and {@code subscriptions/listen}
 * notifications (a session-era GET stream through this bridge carries none).
 */
final class StatelessBridge
{
    static final String REVISION = StatelessTransport.REVISIONS.get(0);
    /** What the gateway answers a client that asks for a revision it does not know, as servers do: their newest. */
    static final String NEWEST_SESSION_REVISION = "2025-11-25";
    /**
     * The most of a client's capabilities and info a bridged session keeps. They are stored for
     * every session and sent again with each request; unbounded, one client's sessions could fill
     * the store with up to {@code mcp.max-body-size} each.
     */
    static final int MAX_CLIENT = 16 * 1024;
    static final String META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
    private static final String META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final SessionBus bus;
    private final Upstream upstream;

    StatelessBridge(SessionBus bus, Upstream upstream)
    {
        this.bus = bus;
        this.upstream = upstream;
    }

    /**
     * Answers {@code initialize} for a session already stored (counted against its client), from
     * the upstream's {@code server/discover}; stores the negotiated revision and the client's
     * capabilities and info in the session. The future completes with the JSON-RPC response.
     */
    CompletableFuture<String> initialize(McpConfig.Server server, McpSession session, JsonNode initialize)
    {
        JsonNode params = initialize.path("params");
        String revision = revision(params);
        String said;
        try
        {
            said = clientSaid(params);
        }
        catch (RpcException x)
        {
            return CompletableFuture.failedFuture(x);
        }
        McpSession bridged = session.withProtocolVersion(revision).withClient(said);

        ObjectNode discover = JSON.createObjectNode().put("jsonrpc", "2.0").put("id", "sandgate-discover").put("method", "server/discover");
        discover.putObject("params");
        return send(server, bridged, discover).thenCompose(exchange -> exchange.text().thenApply(text ->
        {
            JsonNode result = result(text, exchange.isEventStream());
            if (exchange.status() != HttpStatus.OK_200 || result == null)
                throw new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_failed", "the MCP server did not answer server/discover (" + exchange.status() + ")");
            bus.update(bridged);
            ObjectNode answer = JSON.createObjectNode().put("jsonrpc", "2.0");
            answer.set("id", initialize.path("id"));
            ObjectNode initialized = answer.putObject("result").put("protocolVersion", revision);
            initialized.set("capabilities", result.path("capabilities").isObject() ? result.get("capabilities") : JSON.createObjectNode());
            JsonNode serverInfo = result.path("_meta").path(META_SERVER_INFO);
            initialized.set("serverInfo", serverInfo.isObject() ? serverInfo : JSON.createObjectNode().put("name", server.name()).put("version", "unknown"));
            if (result.path("instructions").isTextual())
                initialized.set("instructions", result.get("instructions"));
            return answer.toString();
        }));
    }

    /** The revision a session answers an initialize with: the one asked for, or the newest of the era when the gateway does not know it. */
    static String revision(JsonNode initializeParams)
    {
        String requested = initializeParams.path("protocolVersion").asText("");
        return StatelessTransport.SESSION_REVISIONS.contains(requested) ? requested : NEWEST_SESSION_REVISION;
    }

    /**
     * What a client said of itself at initialize ({@code {"capabilities":...,"clientInfo":...}}),
     * as a session the gateway speaks for keeps it.
     *
     * @throws RpcException invalid params when it is over {@link #MAX_CLIENT}
     */
    static String clientSaid(JsonNode initializeParams)
    {
        ObjectNode client = JSON.createObjectNode();
        client.set("capabilities", initializeParams.path("capabilities").isObject() ? initializeParams.get("capabilities") : JSON.createObjectNode());
        if (initializeParams.path("clientInfo").isObject())
            client.set("clientInfo", initializeParams.get("clientInfo"));
        String said = client.toString();
        if (said.length() > MAX_CLIENT)
            throw new RpcException(HttpStatus.BAD_REQUEST_400, JsonRpcErrors.INVALID_PARAMS,
                "initialize: capabilities and clientInfo together take " + said.length() + " characters, at most " + MAX_CLIENT
                    + " are kept for a session the gateway holds", null);
        return said;
    }

    /**
     * Sends one message of a bridged session upstream as a 2026-07-28 request: the client's
     * {@code _meta} kept, the revision, capabilities and client info the session holds added.
     */
    CompletableFuture<Upstream.Exchange> send(McpConfig.Server server, McpSession session, JsonNode message)
    {
        ObjectNode request = message.deepCopy();
        ObjectNode params = request.path("params").isObject() ? (ObjectNode)request.get("params") : request.putObject("params");
        ObjectNode meta = params.path("_meta").isObject() ? (ObjectNode)params.get("_meta") : params.putObject("_meta");
        JsonNode client = client(session);
        meta.put(StatelessTransport.META_PROTOCOL_VERSION, REVISION);
        meta.set(StatelessTransport.META_CLIENT_CAPABILITIES, client.path("capabilities").isObject() ? client.get("capabilities") : JSON.createObjectNode());
        if (client.path("clientInfo").isObject())
            meta.set(META_CLIENT_INFO, client.get("clientInfo"));

        String method = request.path("method").asText();
        Map<String, String> headers = new HashMap<>();
        headers.put(HttpHeader.CONTENT_TYPE.asString(), "application/json");
        headers.put(HttpHeader.ACCEPT.asString(), "application/json, text/event-stream");
        headers.put(McpHeaders.PROTOCOL_VERSION, REVISION);
        headers.put(McpHeaders.METHOD, method);
        headers.put(McpHeaders.NAME, StatelessTransport.name(method, params));
        return upstream.exchange(Upstream.On.session(server, session), HttpMethod.POST, server.url(), headers, request.toString());
    }

    /**
     * The answer to a session-era request the gateway gives itself, or null: {@code ping} asks
     * whether the other end of the session is alive, and the session's other end is the gateway
     * (2026-07-28 has no ping).
     */
    static String answeredHere(JsonNode message)
    {
        if (!"ping".equals(message.path("method").asText()))
            return null;
        ObjectNode pong = JSON.createObjectNode().put("jsonrpc", "2.0");
        pong.set("id", message.path("id"));
        pong.putObject("result");
        return pong.toString();
    }

    /**
     * The status a session-era client gets for an upstream answer. 2026-07-28 servers give JSON-RPC
     * errors HTTP statuses of their own (404 for an unknown method), which a session-era client
     * reads as the transport's (404: the session is gone): an error that is a JSON-RPC message goes
     * to it with 200, as its revision answers errors.
     */
    static int sessionEraStatus(Upstream.Exchange exchange)
    {
        String type = exchange.header(HttpHeader.CONTENT_TYPE.asString());
        boolean message = type != null && (type.startsWith("application/json") || exchange.isEventStream());
        return exchange.status() / 100 == 4 && message ? HttpStatus.OK_200 : exchange.status();
    }

    private static JsonNode client(McpSession session)
    {
        try
        {
            return session.client().isPresent() ? JSON.readTree(session.client().get()) : JSON.createObjectNode();
        }
        catch (JsonProcessingException x)
        {
            return JSON.createObjectNode();
        }
    }

    /** The result of the one response in an answer, JSON or an event stream; null when there is none. */
    private static JsonNode result(String text, boolean eventStream)
    {
        for (String line : eventStream ? text.split("\n") : new String[] {text})
        {
            String json = eventStream ? (line.startsWith("data:") ? line.substring("data:".length()).strip() : "") : line;
            if (json.isEmpty())
                continue;
            try
            {
                JsonNode message = JSON.readTree(json);
                if (message.path("result").isObject())
                    return message.get("result");
            }
            catch (JsonProcessingException x)
            {
                // Not this line.
            }
        }
        return null;
    }
}
