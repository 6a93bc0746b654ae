package io.sandgate.mcp.federation;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What a member sends the client, as the client of the federation must see it: a request of the
 * member's (sampling, elicitation, roots, ping) under an id that says whose it is, a resource URI
 * under its member's prefix, a cancellation of the member's own request under that request's id.
 * A member is not trusted with anything of the client's but the request routed to it: only the
 * response to that request and progress of its token pass; a response anywhere else (a forged
 * list, another member's answer) and progress of another call's token are dropped.
 */
public final class MemberMessages
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private MemberMessages()
    {
    }

    /**
     * The request of the client's a member is answering: its id and progress token, the only ones
     * the member's messages may carry.
     *
     * @param id null on a member's GET stream, where no response belongs (the spec forbids them there)
     * @param progressToken null when the request asked for no progress
     */
    public record Answering(JsonNode id, JsonNode progressToken, JsonNode clientId, JsonNode clientProgressToken)
    {
        /** A member's GET stream: no request of the client's is answered on it. */
        public static final Answering NOTHING = new Answering(null, null, null, null);

        public Answering(JsonNode id, JsonNode progressToken)
        {
            this(id, progressToken, null, null);
        }

        /** The request a routed message is. */
        public static Answering request(JsonNode message)
        {
            return new Answering(message.get("id"), progressToken(message));
        }

        /**
         * A routed request as the member got it ({@code sent}) and as the client sent it
         * ({@code message}): the same, or with an id and progress token of the gateway's in place of
         * the client's; either way its answer goes to the client under the client's.
         */
        public static Answering request(JsonNode sent, JsonNode message)
        {
            return new Answering(sent.get("id"), progressToken(sent), message.get("id"), progressToken(message));
        }

        private static JsonNode progressToken(JsonNode message)
        {
            JsonNode token = message.path("params").path("_meta").get("progressToken");
            return token == null || token.isNull() ? null : token;
        }
    }

    /**
     * A member's message (or batch) as the federation's client gets it; null when nothing of it
     * may reach the client (text that is not JSON included).
     */
    public static String toClient(FederatedNames names, String member, String message, Answering answering)
    {
        JsonNode root = parse(message);
        if (root == null)
            return null;
        if (root instanceof ArrayNode batch)
        {
            ArrayNode kept = JSON.createArrayNode();
            batch.forEach(node ->
            {
                if (rewrite(names, member, node, answering))
                    kept.add(node);
            });
            return kept.isEmpty() ? null : kept.toString();
        }
        return rewrite(names, member, root, answering) ? root.toString() : null;
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

    /** Rewrites one message in place; whether it may reach the client. */
    private static boolean rewrite(FederatedNames names, String member, JsonNode node, Answering answering)
    {
        if (!(node instanceof ObjectNode message))
            return false;
        if (!message.path("method").isTextual())
        {
            if (answering.id() == null || !answering.id().equals(message.get("id")))
                return false;
            if (answering.clientId() != null)
                message.set("id", answering.clientId());
            return true;
        }
        if (message.has("id") && !message.get("id").isNull())
        {
            message.put("id", names.requestId(member, message.get("id")));
            return true;
        }
        JsonNode params = message.path("params");
        return switch (message.get("method").asText())
        {
            case "notifications/progress" ->
            {
                if (answering.progressToken() == null || !answering.progressToken().equals(params.get("progressToken")))
                    yield false;
                if (answering.clientProgressToken() != null)
                    ((ObjectNode)params).set("progressToken", answering.clientProgressToken());
                yield true;
            }
            case "notifications/cancelled" -> cancelsOwn(names, member, params);
            case "notifications/resources/updated" ->
            {
                if (params.path("uri").isTextual())
                    ((ObjectNode)params).put("uri", names.outward(member, params.get("uri").asText(), false));
                yield true;
            }
            default -> true;
        };
    }

    /**
     * A member cancels only its own requests: the id it names is put under its prefix, as its
     * requests' ids are, and one under another member's prefix (a try at another member's
     * request) is dropped.
     */
    private static boolean cancelsOwn(FederatedNames names, String member, JsonNode params)
    {
        JsonNode requestId = params.get("requestId");
        if (!(params instanceof ObjectNode object) || requestId == null || !(requestId.isTextual() || requestId.isIntegralNumber()))
            return false;
        if (requestId.isTextual() && names.route(requestId.asText()).filter(routed -> !routed.member().equals(member)).isPresent())
            return false;
        object.put("requestId", names.requestId(member, requestId));
        return true;
    }
}
