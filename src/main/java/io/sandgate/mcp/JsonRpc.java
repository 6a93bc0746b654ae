package io.sandgate.mcp;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Just enough JSON-RPC 2.0 to route MCP: is a body a message or a batch of them, its method and
 * params. The gateway never rewrites the requests it relays.
 */
final class JsonRpc
{
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * For clients' bodies, which the gateway must read as the server will (the tool a call names
     * above all): parsers differ on which of a key twice in one object counts, and on what follows
     * the first value (ignored, read as the next message, or the last value wins), so both are refused.
     */
    private static final ObjectMapper STRICT = JsonMapper.builder()
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .build();

    private final List<JsonNode> messages;
    private final boolean batch;

    private JsonRpc(List<JsonNode> messages, boolean batch)
    {
        this.messages = messages;
        this.batch = batch;
    }

    /** @throws GatewayException 400 ({@link JsonRpcErrors#NOT_JSON} or {@link JsonRpcErrors#NOT_A_MESSAGE}) when the body is not a JSON-RPC 2.0 message or a non-empty batch of them */
    static JsonRpc parse(String body)
    {
        JsonNode root;
        try
        {
            root = STRICT.readTree(body);
        }
        catch (JsonProcessingException x)
        {
            throw new GatewayException(HttpStatus.BAD_REQUEST_400, JsonRpcErrors.NOT_JSON, "body is not JSON" + why(x));
        }
        List<JsonNode> messages = new ArrayList<>();
        if (root != null && root.isArray())
            root.forEach(messages::add);
        else if (root != null)
            messages.add(root);
        if (messages.isEmpty())
            throw notAMessage("body is not a JSON-RPC message");
        for (JsonNode message : messages)
        {
            // A method that is not a string makes no request, nor a response that a server could
            // still read as one: the gateway would see no method where a lenient server sees one.
            boolean valid = message.isObject() && "2.0".equals(message.path("jsonrpc").asText(null))
                && (message.has("method") ? message.get("method").isTextual() : message.has("result") || message.has("error"));
            if (!valid)
                throw notAMessage("body is not a JSON-RPC 2.0 message");
        }
        return new JsonRpc(messages, root.isArray());
    }

    /** What is wrong with a body that is not one JSON value, where saying it helps; never the body itself. */
    private static String why(JsonProcessingException x)
    {
        String message = x.getOriginalMessage();
        if (message == null)
            return "";
        if (message.startsWith("Duplicate field"))
            return ": a key appears twice in one object";
        if (message.startsWith("Trailing token"))
            return ": more follows the first value (send a batch as one JSON array)";
        return "";
    }

    private static GatewayException notAMessage(String message)
    {
        return new GatewayException(HttpStatus.BAD_REQUEST_400, JsonRpcErrors.NOT_A_MESSAGE, message);
    }

    /** The id of a single request, which an error about it answers; null for a batch or a notification. */
    JsonNode id()
    {
        if (messages.size() != 1)
            return null;
        JsonNode id = messages.get(0).get("id");
        return id != null && (id.isTextual() || id.isNumber()) ? id : null;
    }

    /** The message, or the messages of a batch. */
    List<JsonNode> messages()
    {
        return messages;
    }

    /** Whether the body is one message rather than a batch (even a batch of one). */
    boolean isSingle()
    {
        return !batch;
    }

    /** The method of a single message, or null (a batch, or a response). */
    String method()
    {
        return isSingle() ? messages.get(0).path("method").asText(null) : null;
    }

    /** The params of a single message; a missing node when it has none. */
    JsonNode params()
    {
        return isSingle() ? messages.get(0).path("params") : MissingNode.getInstance();
    }

    boolean isInitialize()
    {
        return messages.size() == 1 && "initialize".equals(messages.get(0).path("method").asText());
    }

    /** Whether any message is a request (has a method and an id), which expects a response. */
    boolean hasRequests()
    {
        for (JsonNode message : messages)
        {
            if (message.path("method").isTextual() && message.has("id"))
                return true;
        }
        return false;
    }

    /** Splits a JSON body from the upstream into the messages it holds, each as compact text. */
    static List<String> split(String body)
    {
        List<String> result = new ArrayList<>();
        try
        {
            JsonNode root = JSON.readTree(body);
            if (root == null)
                return result;
            if (root.isArray())
                root.forEach(node -> result.add(node.toString()));
            else
                result.add(root.toString());
        }
        catch (JsonProcessingException x)
        {
            // Not JSON: nothing a client could parse either.
        }
        return result;
    }
}
