package io.sandgate.mcp.federation;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What a member sends the client, as the client of the federation must see it: a request of the
 * member's (sampling, elicitation, roots, ping) under an id that says whose it is, a resource URI
 * under its member's prefix. Responses to the client's requests carry the client's own id and
 * pass as they are, as do progress (the client's tokens) and the other notifications.
 */
public final class MemberMessages
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private MemberMessages()
    {
    }

    /** A member's message (or batch) as the federation's client gets it; text that is not JSON passes as it is. */
    public static String toClient(FederatedNames names, String member, String message)
    {
        JsonNode root = parse(message);
        if (root == null)
            return message;
        if (root instanceof ArrayNode batch)
        {
            batch.forEach(node -> rewrite(names, member, node));
            return batch.toString();
        }
        return rewrite(names, member, root) ? root.toString() : message;
    }

    /**
     * A message (or batch) of a session-era member for a 2026-07-28 client, which requires a
     * {@code resultType} on every result: a session-era result is complete.
     */
    public static String completed(String message)
    {
        JsonNode root = parse(message);
        if (root == null)
            return message;
        boolean changed = false;
        for (JsonNode node : root instanceof ArrayNode batch ? batch : java.util.List.of(root))
        {
            if (node.path("result") instanceof ObjectNode result && !result.has("resultType"))
            {
                result.put("resultType", "complete");
                changed = true;
            }
        }
        return changed ? root.toString() : message;
    }

    /** The message as JSON; null when it is not JSON, which passes as it came. */
    private static JsonNode parse(String message)
    {
        try
        {
            return JSON.readTree(message);
        }
        catch (JsonProcessingException x)
        {
            return null;
        }
    }

    /** Rewrites one message in place; whether anything changed. */
    private static boolean rewrite(FederatedNames names, String member, JsonNode node)
    {
        if (!(node instanceof ObjectNode message) || !message.path("method").isTextual())
            return false;
        if (message.has("id") && !message.get("id").isNull())
        {
            message.put("id", names.requestId(member, message.get("id")));
            return true;
        }
        if ("notifications/resources/updated".equals(message.get("method").asText()) && message.path("params").path("uri").isTextual())
        {
            ObjectNode params = (ObjectNode)message.get("params");
            params.put("uri", names.outward(member, params.get("uri").asText(), false));
            return true;
        }
        return false;
    }
}
