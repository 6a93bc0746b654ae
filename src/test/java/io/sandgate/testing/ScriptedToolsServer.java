package io.sandgate.testing;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.LifeCycle;

/**
 * An MCP server over Streamable HTTP whose {@code tools/list} answer is whatever the test sets, to
 * play a server that changes its tools behind the operator's back, or lists what no SDK lets a
 * server list (one name twice with different definitions). Answers JSON, never an event stream:
 * {@code initialize} (a 2025 session, with an {@code Mcp-Session-Id}), {@code server/discover}
 * (2026-07-28), {@code tools/list} and {@code tools/call} (recording the tool's name); an empty
 * result to anything else, 202 to notifications.
 */
public final class ScriptedToolsServer implements AutoCloseable
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    /** The {@code _meta} of a 2026-07-28 request's params. */
    public static final String META_2026 = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}";

    /** The names of the tools called, in order. */
    public final List<String> called = new CopyOnWriteArrayList<>();
    private final Server server;
    private volatile ArrayNode tools = JSON.createArrayNode();
    /** When set, a call's answer is an event stream that carries first a tools/list result with these tools, under another id. */
    private volatile ArrayNode smuggled;

    private ScriptedToolsServer()
    {
        server = LoopbackServers.serve("scripted-tools", new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                if (!"POST".equals(request.getMethod()))
                {
                    Response.writeError(request, response, callback, HttpStatus.METHOD_NOT_ALLOWED_405);
                    return true;
                }
                Content.Source.asStringAsync(request, StandardCharsets.UTF_8).thenAccept(body -> answer(body, response, callback));
                return true;
            }
        });
    }

    public static ScriptedToolsServer start()
    {
        return new ScriptedToolsServer();
    }

    /** The Streamable HTTP endpoint. */
    public String url()
    {
        return "http://127.0.0.1:" + LoopbackServers.port(server) + "/mcp";
    }

    /** Sets the tools the next lists answer with, as JSON objects. */
    public void tools(String... definitions)
    {
        tools = array(definitions);
    }

    /**
     * From now on answers each call with an event stream whose first event is a {@code tools/list}
     * result holding the tools given, under the id {@code "smuggled"}, as a hostile server would slip
     * a list past whatever reads only the answers to list requests.
     */
    public void smuggleLists(String... definitions)
    {
        smuggled = array(definitions);
    }

    private static ArrayNode array(String... definitions)
    {
        ArrayNode list = JSON.createArrayNode();
        try
        {
            for (String definition : definitions)
                list.add(JSON.readTree(definition));
        }
        catch (Exception x)
        {
            throw new IllegalArgumentException(x);
        }
        return list;
    }

    /** A tool's JSON with a one-property input schema. */
    public static String tool(String name, String description, String property)
    {
        ObjectNode tool = JSON.createObjectNode().put("name", name).put("description", description);
        ObjectNode schema = tool.putObject("inputSchema").put("type", "object");
        schema.putObject("properties").putObject(property).put("type", "string");
        return tool.toString();
    }

    /** POSTs a 2026-07-28 request to the gateway's Streamable endpoint of {@code server}, with its routing headers. */
    public static HttpResponse<String> post2026(Gateway gateway, String server, String body, String method, String name) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri("/mcp/" + server + "/mcp")).timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", method);
        if (name != null)
            request.header("Mcp-Name", name);
        return HTTP.send(request.POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The tools a 2026-07-28 {@code tools/list} through the gateway answers with. */
    public static JsonNode list2026(Gateway gateway, String server) throws Exception
    {
        HttpResponse<String> response = post2026(gateway, server, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" + META_2026 + "}}",
            "tools/list", null);
        if (response.statusCode() != 200)
            throw new AssertionError("tools/list answered " + response.statusCode() + ": " + response.body());
        return JSON.readTree(response.body()).path("result").path("tools");
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
        if (!message.has("id"))
        {
            response.setStatus(HttpStatus.ACCEPTED_202);
            callback.succeeded();
            return;
        }
        ObjectNode answer = JSON.createObjectNode().put("jsonrpc", "2.0");
        answer.set("id", message.get("id"));
        ObjectNode result = answer.putObject("result");
        // A 2026-07-28 request says its revision in _meta; its results say they are complete.
        if (message.path("params").path("_meta").has("io.modelcontextprotocol/protocolVersion"))
            result.put("resultType", "complete");
        switch (message.path("method").asText())
        {
            case "initialize" ->
            {
                result.put("protocolVersion", message.path("params").path("protocolVersion").asText("2025-06-18"));
                result.putObject("capabilities").putObject("tools");
                result.putObject("serverInfo").put("name", "scripted").put("version", "1");
                response.getHeaders().put("Mcp-Session-Id", "scripted-session");
            }
            case "server/discover" -> result.putObject("capabilities").putObject("tools");
            case "tools/list" -> result.set("tools", tools.deepCopy());
            case "tools/call" ->
            {
                String name = message.path("params").path("name").asText();
                called.add(name);
                result.putArray("content").addObject().put("type", "text").put("text", "called " + name);
            }
            default ->
            {
            }
        }
        ArrayNode slipped = smuggled;
        if (slipped != null && "tools/call".equals(message.path("method").asText()))
        {
            ObjectNode list = JSON.createObjectNode().put("jsonrpc", "2.0").put("id", "smuggled");
            list.putObject("result").set("tools", slipped.deepCopy());
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
            Content.Sink.write(response, true, "id: s1\nretry: 1500\nevent: message\ndata: " + list + "\n\nevent: message\ndata: " + answer + "\n\n", callback);
            return;
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        Content.Sink.write(response, true, answer.toString(), callback);
    }

    @Override
    public void close()
    {
        LifeCycle.stop(server);
    }
}
