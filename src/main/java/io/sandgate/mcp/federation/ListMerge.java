package io.sandgate.mcp.federation;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * One page of a federated list from the members' pages: their items in the federation's member
 * order, renamed as {@link FederatedNames} says, and the cursor of the members that have more.
 */
public final class ListMerge
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private ListMerge()
    {
    }

    /**
     * @param pages each answering member's result, in the federation's order; members that failed are absent
     * @return the list result for the client
     */
    public static ObjectNode merge(FederatedNames names, ListKind kind, Map<String, JsonNode> pages)
    {
        return merge(names, kind, pages, member ->
        {
        });
    }

    /**
     * As {@link #merge(FederatedNames, ListKind, Map)}, telling of each member whose own cursor
     * would make the federation's longer than a federation's cursor may be: that member is left
     * out of the pages after this one, so that the others page on with a cursor the federation
     * takes back.
     */
    public static ObjectNode merge(FederatedNames names, ListKind kind, Map<String, JsonNode> pages, Consumer<String> cursorTooLong)
    {
        Map<String, List<String>> keys = new LinkedHashMap<>();
        pages.forEach((member, page) -> keys.put(member, keysOf(kind, page)));
        Set<String> clashing = names.clashing(keys);
        ObjectNode result = JSON.createObjectNode();
        ArrayNode items = result.putArray(kind.items());
        Map<String, String> next = new LinkedHashMap<>();
        pages.forEach((member, page) ->
        {
            for (JsonNode item : page.path(kind.items()))
            {
                if (!item.isObject() || !item.path(kind.key()).isTextual())
                    continue;
                ObjectNode renamed = ((ObjectNode)item).deepCopy();
                String key = item.get(kind.key()).asText();
                boolean clashes = clashing.contains(key);
                renamed.put(kind.key(), names.outward(member, key, clashes));
                if (kind.label() != null && item.path(kind.label()).isTextual())
                    renamed.put(kind.label(), names.outward(member, item.get(kind.label()).asText(), clashes));
                items.add(renamed);
            }
            if (page.path("nextCursor").isTextual())
            {
                next.put(member, page.get("nextCursor").asText());
                if (FederatedCursor.encode(next).length() > FederatedCursor.MAX_LENGTH)
                {
                    next.remove(member);
                    cursorTooLong.accept(member);
                }
            }
        });
        String cursor = FederatedCursor.encode(next);
        if (cursor != null)
            result.put("nextCursor", cursor);
        pages.values().forEach(page -> mergeExtras(kind, page, result));
        return result;
    }

    /**
     * What a page holds besides its items and cursor (2026-07-28's {@code resultType} and caching
     * hints): the first page's, except that the merged page may be cached only as briefly as the
     * briefest member's, and only privately if any member's is private.
     */
    private static void mergeExtras(ListKind kind, JsonNode page, ObjectNode result)
    {
        page.fields().forEachRemaining(entry ->
        {
            String field = entry.getKey();
            JsonNode value = entry.getValue();
            if (field.equals(kind.items()) || field.equals("nextCursor"))
                return;
            JsonNode have = result.get(field);
            if (have == null)
                result.set(field, value.deepCopy());
            else if (field.equals("ttlMs") && value.isNumber() && have.isNumber() && value.asLong() < have.asLong())
                result.set(field, value);
            else if (field.equals("cacheScope") && "private".equals(value.asText()))
                result.set(field, value);
        });
    }

    /** What the items of a page route by. */
    public static List<String> keysOf(ListKind kind, JsonNode page)
    {
        List<String> keys = new ArrayList<>();
        for (JsonNode item : page.path(kind.items()))
        {
            if (item.path(kind.key()).isTextual())
                keys.add(item.get(kind.key()).asText());
        }
        return keys;
    }

    /**
     * The union of the members' capabilities, as {@code initialize} answers them: an object
     * present when any member has it, a flag ({@code listChanged}, {@code subscribe}) true when
     * any member's is.
     */
    public static ObjectNode capabilities(List<JsonNode> members)
    {
        ObjectNode union = JSON.createObjectNode();
        for (JsonNode capabilities : members)
        {
            if (capabilities.isObject())
                mergeInto(union, (ObjectNode)capabilities);
        }
        return union;
    }

    private static void mergeInto(ObjectNode into, ObjectNode from)
    {
        from.fields().forEachRemaining(entry ->
        {
            JsonNode have = into.get(entry.getKey());
            JsonNode add = entry.getValue();
            if (have instanceof ObjectNode object && add.isObject())
                mergeInto(object, (ObjectNode)add);
            else if (have == null || have.isBoolean() && add.isBoolean() && add.asBoolean())
                into.set(entry.getKey(), add.deepCopy());
        });
    }
}
