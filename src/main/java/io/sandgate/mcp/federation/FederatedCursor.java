package io.sandgate.mcp.federation;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A federation's list cursor: each member's own cursor for its next page, opaque to the client
 * (base64url of {@code {"v":1,"m":{member: cursor or null}}}). A member absent from it has no page
 * left; null asks a member for its first page.
 */
public final class FederatedCursor
{
    /**
     * A cursor longer than this is none the gateway made: members' own cursors are short, and
     * {@link ListMerge} leaves out of the next pages a member whose cursor is not.
     */
    public static final int MAX_LENGTH = 4096;
    /** Strict: a cursor with anything after its object is none the federation made. */
    private static final ObjectMapper JSON = JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).build();

    private FederatedCursor()
    {
    }

    /** Every member from its first page, the state of a list asked for without a cursor. */
    public static Map<String, String> first(List<String> members)
    {
        Map<String, String> state = new LinkedHashMap<>();
        members.forEach(member -> state.put(member, null));
        return state;
    }

    /** The cursor for the members' next pages; null when no member has one. */
    public static String encode(Map<String, String> next)
    {
        if (next.isEmpty())
            return null;
        ObjectNode root = JSON.createObjectNode().put("v", 1);
        ObjectNode members = root.putObject("m");
        next.forEach(members::put);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(root.toString().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The members' cursors a federation's cursor holds, in the federation's order.
     *
     * @throws IllegalArgumentException when it is none the federation made: not base64url JSON of
     *         that shape, too long, or naming a member outside {@code members}
     */
    public static Map<String, String> decode(String cursor, List<String> members)
    {
        if (cursor.length() > MAX_LENGTH)
            throw new IllegalArgumentException("cursor too long");
        JsonNode root;
        try
        {
            root = JSON.readTree(Base64.getUrlDecoder().decode(cursor));
        }
        catch (IllegalArgumentException | java.io.IOException x)
        {
            throw new IllegalArgumentException("cursor is not one this federation gave");
        }
        if (root == null || root.path("v").asInt() != 1 || !root.path("m").isObject() || root.path("m").isEmpty())
            throw new IllegalArgumentException("cursor is not one this federation gave");
        Map<String, String> state = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> i = root.get("m").fields(); i.hasNext(); )
        {
            Map.Entry<String, JsonNode> entry = i.next();
            if (!members.contains(entry.getKey()) || !(entry.getValue().isTextual() || entry.getValue().isNull()))
                throw new IllegalArgumentException("cursor is not one this federation gave");
        }
        for (String member : members)
        {
            JsonNode value = root.get("m").get(member);
            if (value != null)
                state.put(member, value.isNull() ? null : value.asText());
        }
        return state;
    }
}
