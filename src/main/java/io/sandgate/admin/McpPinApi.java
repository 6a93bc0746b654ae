package io.sandgate.admin;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandgate.config.McpConfig;
import io.sandgate.mcp.ToolPins;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The pending tool changes of the MCP servers that pin their tools ({@code mcp.servers[].pin}), and
 * the operator's decision on each:
 * <ul>
 * <li>{@code GET /mcp/servers/{name}/tools/pending}: each change with its old and new description
 * and schemas, kind ({@code changed}, {@code added}), digests and when it was first seen;</li>
 * <li>{@code GET /mcp/tools/pending}: the same for every pinning server, for the dashboard;</li>
 * <li>{@code POST /mcp/servers/{name}/tools/{tool}/approve} and {@code .../reject}, with an optional
 * body {@code {"digest": "..."}}: the definition decided on must still be the one served (409 when
 * the server changed it again since it was shown). In force on every replica within a second.</li>
 * </ul>
 * 404 for a server that does not pin, or a tool with nothing to decide.
 */
public final class McpPinApi
{
    private McpPinApi()
    {
    }

    public static List<AdminServlet.Route> routes(McpConfig config, ToolPins pins)
    {
        return List.of(
            new AdminServlet.Route("GET", "/mcp/tools/pending", call -> all(config, pins)),
            new AdminServlet.Route("GET", "/mcp/servers/{name}/tools/pending", call -> stored(() -> pins.pending(server(pins, call.id())))),
            new AdminServlet.Route("POST", "/mcp/servers/{name}/tools/{tool}/approve", call -> decide(pins, call, true)),
            new AdminServlet.Route("POST", "/mcp/servers/{name}/tools/{tool}/reject", call -> decide(pins, call, false)));
    }

    private static Map<String, Object> all(McpConfig config, ToolPins pins)
    {
        Map<String, Object> servers = new LinkedHashMap<>();
        for (McpConfig.Server server : config.servers())
        {
            if (server.pin() == McpConfig.PinMode.OFF)
                continue;
            Map<String, Object> view = new LinkedHashMap<>();
            view.put("pin", server.pin().name().toLowerCase(Locale.ROOT));
            view.put("pending", stored(() -> pins.pending(server.name())));
            servers.put(server.name(), view);
        }
        return Map.of("servers", servers);
    }

    private static Object decide(ToolPins pins, AdminServlet.Call call, boolean approve)
    {
        String server = server(pins, call.id());
        String tool = call.second();
        Optional<String> digest = digest(call.body());
        Optional<ToolPins.Change> decided = stored(() -> approve ? pins.approve(server, tool, digest) : pins.reject(server, tool, digest));
        ToolPins.Change change = decided.orElseThrow(() -> GatewayException.notFound("no pending change of tool " + tool + " on MCP server " + server));
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("decision", approve ? "approved" : "rejected");
        view.put("change", change);
        return view;
    }

    private static String server(ToolPins pins, String name)
    {
        return pins.pinning(name).map(McpConfig.Server::name)
            .orElseThrow(() -> GatewayException.notFound("no MCP server " + name + " that pins its tools (mcp.servers[].pin)"));
    }

    private static Optional<String> digest(JsonNode body)
    {
        if (body == null)
            return Optional.empty();
        JsonNode digest = body.path("digest");
        if (!body.isObject() || !digest.isMissingNode() && !digest.isTextual())
            throw GatewayException.badRequest("body: expected {\"digest\": \"<sha-256 hex of the definition decided on>\"} or none");
        return digest.isTextual() ? Optional.of(digest.asText()) : Optional.empty();
    }

    /** Runs a call on the store; a store that does not answer is 503, not a failure of the gateway. */
    private static <T> T stored(Supplier<T> call)
    {
        try
        {
            return call.get();
        }
        catch (IllegalArgumentException | GatewayException x)
        {
            throw x;
        }
        catch (RuntimeException x)
        {
            throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE_503, "store_unavailable", "the pinned tools could not be read or written; nothing changed");
        }
    }
}
