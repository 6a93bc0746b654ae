package io.sandgate.mcp;

import java.io.IOException;
import java.util.Iterator;
import java.util.List;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.McpConfig;
import jakarta.servlet.AsyncContext;
import org.eclipse.jetty.http.HttpStatus;

/**
 * A server's tool policy ({@code mcp.servers[].tools}) on the MCP face: a call of a tool the policy
 * hides is answered by the gateway as one of a tool the server does not have, and
 * {@code tools/list} answers lose the tools it hides, on every transport and revision, so that a
 * hidden tool is neither listed nor callable. Servers without a policy cost nothing: no answer is read.
 */
final class ToolGuard
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private ToolGuard()
    {
    }

    /**
     * The answer to a call the gateway refuses, as the server would give it: a JSON-RPC error
     * response with the code of invalid params. Null when the request calls no such tool. Refused are
     * a call of a tool the policy hides, answered as one of a tool the server does not have, and a
     * call that names its tool with anything but a string, with or without a policy: servers read
     * such a name in ways of their own ({@code ["add"]} as {@code add}, by a JavaScript property
     * lookup), so the policy could not judge the call the server reads. The tool is the body's: on a
     * 2026-07-28 request it was checked to be what {@code Mcp-Name} says. (Not an HTTP 403: clients
     * take that for an authorization failure and may start logging in again.)
     *
     * @throws RpcException 400 for a batch that holds such a call, refused whole
     */
    static String refusal(McpConfig.Server server, JsonRpc rpc)
    {
        for (JsonNode message : rpc.messages())
        {
            if (!"tools/call".equals(message.path("method").asText()))
                continue;
            JsonNode name = message.path("params").path("name");
            String text = refused(server, name);
            if (text == null)
                continue;
            if (!rpc.isSingle())
                throw new RpcException(HttpStatus.BAD_REQUEST_400, name.isTextual() ? JsonRpcErrors.INVALID_REQUEST : JsonRpcErrors.INVALID_PARAMS,
                    "a batch holds a call that is refused: " + text, null);
            ObjectNode error = JSON.createObjectNode().put("jsonrpc", "2.0");
            error.set("id", message.path("id"));
            error.putObject("error").put("code", JsonRpcErrors.INVALID_PARAMS).put("message", text);
            return error.toString();
        }
        return null;
    }

    /** Why a call naming this tool is refused, or null when it is not. */
    private static String refused(McpConfig.Server server, JsonNode name)
    {
        if (!name.isTextual())
            return "Invalid params: tools/call names its tool with a string (params.name)";
        if (server.tools().allows(name.asText()))
            return null;
        return "Unknown tool: " + name.asText() + " is not available on MCP server " + server.name();
    }

    /** Whether an answer to this request must be read and cut rather than streamed as it comes. */
    static boolean cutsAnswer(McpConfig.Server server, JsonRpc rpc)
    {
        if (server.tools().allowsAll())
            return false;
        for (JsonNode message : rpc.messages())
        {
            if ("tools/list".equals(message.path("method").asText()))
                return true;
        }
        return false;
    }

    /**
     * Reads a whole answer, JSON or an event stream, cuts its {@code tools/list} results and writes
     * it to the client of {@code async}, then completes it.
     */
    static void relayCut(McpConfig.ToolPolicy policy, Upstream.Exchange exchange, AsyncContext async)
    {
        exchange.text().whenComplete((text, failure) ->
        {
            try
            {
                if (failure == null)
                    async.getResponse().getWriter().write(exchange.isEventStream() ? cutEvents(policy, text) : cut(policy, text));
            }
            catch (IOException | RuntimeException x)
            {
                // The client is gone.
            }
            finally
            {
                async.complete();
            }
        });
    }

    /** The {@code data:} lines of an event stream, each cut. */
    static String cutEvents(McpConfig.ToolPolicy policy, String events)
    {
        StringBuilder result = new StringBuilder(events.length());
        for (String line : events.split("(?<=\n)"))
        {
            if (line.startsWith("data:"))
            {
                boolean newline = line.endsWith("\n");
                String data = line.substring("data:".length(), line.length() - (newline ? 1 : 0)).strip();
                result.append("data: ").append(cut(policy, data)).append(newline ? "\n" : "");
            }
            else
            {
                result.append(line);
            }
        }
        return result.toString();
    }

    /**
     * A JSON-RPC message or batch without the tools the policy hides in any {@code tools/list}
     * result (a result that holds a {@code tools} array of named tools); anything else unchanged.
     */
    static String cut(McpConfig.ToolPolicy policy, String message)
    {
        if (policy.allowsAll() || !message.contains("\"tools\""))
            return message;
        JsonNode root;
        try
        {
            root = JSON.readTree(message);
        }
        catch (JsonProcessingException x)
        {
            return message;
        }
        boolean cut = false;
        for (JsonNode node : root.isArray() ? root : List.of(root))
        {
            if (node.path("result").path("tools") instanceof ArrayNode tools)
            {
                for (Iterator<JsonNode> i = tools.elements(); i.hasNext(); )
                {
                    if (!policy.allows(i.next().path("name").asText("")))
                    {
                        i.remove();
                        cut = true;
                    }
                }
            }
        }
        return cut ? root.toString() : message;
    }
}
