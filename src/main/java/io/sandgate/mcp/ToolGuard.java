package io.sandgate.mcp;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import jakarta.servlet.AsyncContext;
import org.eclipse.jetty.http.HttpStatus;

/**
 * A server's tool policy ({@code mcp.servers[].tools}) on the MCP face: a call of a tool the policy
 * hides is answered by the gateway as one of a tool the server does not have, and
 * {@code tools/list} answers lose the tools it hides, on every transport and revision, so that a
 * hidden tool is neither listed nor callable. The same goes for the tools a server's pins hide
 * ({@link ToolPins}), which read every list to check it. Servers without a policy or pins cost
 * nothing: no answer is read.
 */
final class ToolGuard
{
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Splits an event stream after each line end, keeping it: an empty line (its line end alone) ends an event. */
    private static final Pattern LINE_END = Pattern.compile("(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)");

    private ToolGuard()
    {
    }

    /**
     * The answer to a call the gateway refuses, as the server would give it: a JSON-RPC error
     * response with the code of invalid params. Null when the request calls no such tool. Refused are
     * a call of a tool the policy or the pins hide, answered as one of a tool the server does not have, and a
     * call that names its tool with anything but a string, with or without a policy: servers read
     * such a name in ways of their own ({@code ["add"]} as {@code add}, by a JavaScript property
     * lookup), so the policy could not judge the call the server reads. The tool is the body's: on a
     * 2026-07-28 request it was checked to be what {@code Mcp-Name} says. (Not an HTTP 403: clients
     * take that for an authorization failure and may start logging in again.)
     *
     * @param access what the caller may call ({@link RequestChecks.Caller#tools}): the server's policy as
     *        it applies to the caller, and its pins
     * @throws RpcException 400 for a batch that holds such a call, refused whole
     */
    static String refusal(ToolAccess access, JsonRpc rpc)
    {
        for (JsonNode message : rpc.messages())
        {
            if (!"tools/call".equals(message.path("method").asText()))
                continue;
            JsonNode name = message.path("params").path("name");
            String text = refused(access, name);
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
    private static String refused(ToolAccess access, JsonNode name)
    {
        if (!name.isTextual())
            return "Invalid params: tools/call names its tool with a string (params.name)";
        if (access.allows(name.asText()))
            return null;
        return "Unknown tool: " + name.asText() + " is not available on MCP server " + access.server().name();
    }

    /** Whether an answer to this request must be read and cut rather than streamed as it comes. */
    static boolean cutsAnswer(ToolAccess access, JsonRpc rpc)
    {
        if (!access.readsLists())
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
    static void relayCut(ToolAccess access, Upstream.Exchange exchange, AsyncContext async)
    {
        exchange.text().whenComplete((text, failure) ->
        {
            try
            {
                if (failure == null)
                    async.getResponse().getWriter().write(exchange.isEventStream() ? cutEvents(access, text) : cut(access, text));
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

    /**
     * An event-stream answer relayed event by event, the data of each cut as {@link #cut} cuts a
     * message: a {@code tools/list} result is cut wherever a server puts it, also on the answer to
     * another request, where a client's SDK still matches it by id to its pending list request; each
     * event keeps its id, name and retry, so a client can resume the stream as the server meant. Not
     * read whole first, so that a call's progress reaches the client as it comes; a client that
     * does not read holds the server's answer back, not the replica's memory.
     */
    static void relayCutEvents(ToolAccess access, Upstream.Exchange exchange, AsyncContext async) throws IOException
    {
        ClientStream stream = ClientStream.start(async);
        stream.onClose(() -> exchange.abort(new java.util.concurrent.CancellationException("client stream closed")));
        // Handing on only writes to the client's queue: the thread that brings the bytes may do it.
        new EventStreamPump(exchange.content(), Runnable::run, event ->
        {
            try
            {
                stream.event(event.id(), event.name(), cut(access, event.data()), event.retry());
                java.util.concurrent.CompletableFuture<Void> room = new java.util.concurrent.CompletableFuture<>();
                return stream.ready(() -> room.complete(null)) ? EventStreamPump.HANDED_ON : room;
            }
            catch (IOException x)
            {
                return java.util.concurrent.CompletableFuture.failedFuture(x);
            }
        }, ended -> stream.close()).start();
    }

    /**
     * An event stream with the data of each event cut, the data as a client reads it: the
     * {@code data:} lines of one event joined, whatever ends its lines (LF, CRLF or CR), as
     * {@link SseParser} reads the session's messages. An event that loses a tool has its data on
     * one line; every other line, and every event left whole, passes as it came.
     */
    static String cutEvents(ToolAccess access, String events)
    {
        StringBuilder result = new StringBuilder(events.length());
        List<String> event = new ArrayList<>();
        for (String line : LINE_END.split(events))
        {
            if (line.equals("\n") || line.equals("\r\n") || line.equals("\r"))
            {
                cutEvent(access, event, result);
                result.append(line);
            }
            else
            {
                event.add(line);
            }
        }
        cutEvent(access, event, result);
        return result.toString();
    }

    /** Appends the lines of one event, its data cut, and forgets them. */
    private static void cutEvent(ToolAccess access, List<String> lines, StringBuilder result)
    {
        StringBuilder data = null;
        for (String line : lines)
        {
            String value = dataValue(line);
            if (value != null)
                data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
        }
        String whole = data == null ? null : data.toString();
        String cut = whole == null ? null : cut(access, whole);
        // cut() gives back the very string it was given when it cuts nothing.
        boolean unchanged = cut == whole;
        boolean written = false;
        for (String line : lines)
        {
            if (unchanged || dataValue(line) == null)
                result.append(line);
            else if (!written)
            {
                written = true;
                result.append("data: ").append(cut).append('\n');
            }
        }
        lines.clear();
    }

    /** The value of a {@code data} field line (with its line end), or null for any other line. */
    private static String dataValue(String line)
    {
        String content = line.replaceFirst("(\r\n|\r|\n)\\z", "");
        if (content.equals("data"))
            return "";
        if (!content.startsWith("data:"))
            return null;
        String value = content.substring("data:".length());
        return value.startsWith(" ") ? value.substring(1) : value;
    }

    /**
     * A JSON-RPC message or batch without the tools the policy or the pins hide in any
     * {@code tools/list} result (a result that holds a {@code tools} array of named tools); anything
     * else unchanged. The pins see each such result whole, before the policy narrows it for the caller.
     */
    static String cut(ToolAccess access, String message)
    {
        // A JSON escape in the key would hide it from the shortcut, not from a client's parser.
        if (!access.readsLists() || !message.contains("\"tools\"") && !message.contains("\\u"))
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
                Set<String> hidden = access.hiddenOf(tools);
                for (Iterator<JsonNode> i = tools.elements(); i.hasNext(); )
                {
                    JsonNode name = i.next().path("name");
                    if (!name.isTextual() || !access.policy().allows(name.asText()) || hidden.contains(name.asText()))
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
