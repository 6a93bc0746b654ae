package io.sandgate.testing;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

/**
 * An MCP server (Streamable HTTP, a 2025 session) that attacks the gateway in front of it in ways
 * no SDK lets a server: it sends what the test scripts on its GET stream (responses with any id,
 * cancellations and progress of other requests), puts scripted messages before the answer to a
 * {@code tools/call}, pages its lists forever with a cursor of the test's, answers {@code tools/list}
 * with an error of the test's text, or answers it with an event stream that never ends; or cuts a
 * call's answer short after its first event and, when the gateway resumes it on a GET stream
 * ({@code Last-Event-ID}), replays whatever the test scripts before the answer. Every request it
 * receives is recorded.
 */
public final class HostileMcpServer implements AutoCloseable
{
    private static final ObjectMapper JSON = new ObjectMapper();

    /** How {@code tools/list} is answered. */
    public enum ListAnswer
    {
        /** One tool, {@code tool}, and {@link #cursor} as {@code nextCursor} when set. */
        NORMAL,
        /** An event stream that writes 16 KiB of padding a hundredth of a second, and never ends. */
        FLOOD,
        /** An event stream that writes a byte a tenth of a second, and never ends. */
        TRICKLE,
        /** A JSON-RPC error whose message is {@link #errorText}. */
        ERROR
    }

    /** Every JSON-RPC message POSTed, in order. */
    public final List<JsonNode> received = new CopyOnWriteArrayList<>();
    /** Sent on each GET stream when it opens, as they are (JSON text); the stream then stays open. */
    public final List<String> onGet = new CopyOnWriteArrayList<>();
    /** Sent on a {@code tools/call}'s event stream before its response; {@code $TOKEN} becomes the call's progress token. */
    public final List<String> beforeCallAnswer = new CopyOnWriteArrayList<>();
    /**
     * When set, a {@code tools/call}'s answer ends after one event (id {@value #CUT_EVENT_ID}, no
     * data) and a GET stream resuming after that id sends these, then the answer; {@code $TOKEN}
     * becomes the call's progress token.
     */
    public final List<String> onResume = new CopyOnWriteArrayList<>();
    public volatile boolean cutCallAnswers;
    public static final String CUT_EVENT_ID = "cut-1";
    private volatile String cutCall;
    /** Whether an answer that never ends was cut by the gateway. */
    public final AtomicBoolean endlessAnswerCut = new AtomicBoolean();
    public volatile ListAnswer listAnswer = ListAnswer.NORMAL;
    /** The {@code nextCursor} of every page of every list; null for lists of one page. */
    public volatile String cursor;
    public volatile String errorText = "failed";

    private final Server server;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    private HostileMcpServer()
    {
        server = LoopbackServers.serve("hostile-mcp", new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                if ("GET".equals(request.getMethod()))
                {
                    stream(response);
                    StringBuilder events = new StringBuilder();
                    String cut = cutCall;
                    if (CUT_EVENT_ID.equals(request.getHeaders().get("Last-Event-ID")) && cut != null)
                        events.append(cut);
                    else
                        onGet.forEach(message -> events.append("data: ").append(message).append("\n\n"));
                    // Never completed: the stream stays open until the gateway leaves.
                    Content.Sink.write(response, false, events.toString(), Callback.NOOP);
                    return true;
                }
                if ("DELETE".equals(request.getMethod()))
                {
                    response.setStatus(HttpStatus.NO_CONTENT_204);
                    callback.succeeded();
                    return true;
                }
                Content.Source.asStringAsync(request, StandardCharsets.UTF_8).thenAccept(body -> answer(body, response, callback));
                return true;
            }
        });
    }

    public static HostileMcpServer start()
    {
        return new HostileMcpServer();
    }

    /** The Streamable HTTP endpoint. */
    public String url()
    {
        return "http://127.0.0.1:" + LoopbackServers.port(server) + "/mcp";
    }

    /** The requests received of one method. */
    public List<JsonNode> received(String method)
    {
        return received.stream().filter(message -> method.equals(message.path("method").asText())).toList();
    }

    private static void stream(Response response)
    {
        response.setStatus(HttpStatus.OK_200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
    }

    private void answer(String body, Response response, Callback callback)
    {
        JsonNode message;
        try
        {
            message = JSON.readTree(body);
        }
        catch (Exception x)
        {
            Response.writeError(null, response, callback, HttpStatus.BAD_REQUEST_400);
            return;
        }
        received.add(message);
        if (!message.has("id"))
        {
            response.setStatus(HttpStatus.ACCEPTED_202);
            callback.succeeded();
            return;
        }
        String method = message.path("method").asText();
        ObjectNode answer = JSON.createObjectNode().put("jsonrpc", "2.0");
        answer.set("id", message.get("id"));
        ObjectNode result = answer.putObject("result");
        switch (method)
        {
            case "initialize" ->
            {
                result.put("protocolVersion", message.path("params").path("protocolVersion").asText("2025-06-18"));
                ObjectNode capabilities = result.putObject("capabilities");
                capabilities.putObject("tools");
                capabilities.putObject("prompts");
                capabilities.putObject("resources");
                result.putObject("serverInfo").put("name", "hostile").put("version", "1");
                response.getHeaders().put("Mcp-Session-Id", "hostile-session");
            }
            case "tools/list" ->
            {
                switch (listAnswer)
                {
                    case FLOOD, TRICKLE ->
                    {
                        stream(response);
                        endless(response, callback, listAnswer == ListAnswer.FLOOD);
                        return;
                    }
                    case ERROR ->
                    {
                        answer.remove("result");
                        answer.putObject("error").put("code", -32603).put("message", errorText);
                    }
                    case NORMAL -> page(result, "tools").addObject().put("name", "tool").putObject("inputSchema").put("type", "object");
                }
            }
            case "prompts/list" -> page(result, "prompts");
            case "resources/list" -> page(result, "resources");
            case "resources/templates/list" -> page(result, "resourceTemplates");
            case "tools/call" ->
            {
                result.putArray("content").addObject().put("type", "text").put("text", "hostile answer");
                JsonNode token = message.path("params").path("_meta").path("progressToken");
                StringBuilder events = new StringBuilder();
                for (String before : beforeCallAnswer)
                    events.append("data: ").append(before.replace("$TOKEN", token.toString())).append("\n\n");
                events.append("data: ").append(answer).append("\n\n");
                stream(response);
                if (cutCallAnswers)
                {
                    StringBuilder replay = new StringBuilder();
                    for (String resumed : onResume)
                        replay.append("data: ").append(resumed.replace("$TOKEN", token.toString())).append("\n\n");
                    cutCall = replay.append("data: ").append(answer).append("\n\n").toString();
                    Content.Sink.write(response, true, "id: " + CUT_EVENT_ID + "\nretry: 100\ndata: \n\n", callback);
                    return;
                }
                Content.Sink.write(response, true, events.toString(), callback);
                return;
            }
            default ->
            {
            }
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        Content.Sink.write(response, true, answer.toString(), callback);
    }

    private com.fasterxml.jackson.databind.node.ArrayNode page(ObjectNode result, String items)
    {
        if (cursor != null)
            result.put("nextCursor", cursor);
        return result.putArray(items);
    }

    /** Writes an event stream's comment lines until a write fails: the gateway cut it. Paced, so that a gateway that buffers it all is slowly filled, not killed. */
    private void endless(Response response, Callback callback, boolean flood)
    {
        String chunk = flood ? ": " + "x".repeat(16 * 1024) + "\n" : ":";
        long pause = flood ? 10 : 100;
        Content.Sink.write(response, false, chunk, new Callback()
        {
            @Override
            public void succeeded()
            {
                if (!timer.isShutdown())
                    timer.schedule(() -> endless(response, callback, flood), pause, TimeUnit.MILLISECONDS);
            }

            @Override
            public void failed(Throwable x)
            {
                endlessAnswerCut.set(true);
                callback.failed(x);
            }
        });
    }

    @Override
    public void close()
    {
        timer.shutdownNow();
        LoopbackServers.stop(server, "hostile MCP server");
    }
}
