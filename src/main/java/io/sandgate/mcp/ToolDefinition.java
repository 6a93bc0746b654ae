package io.sandgate.mcp;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.core.Digests;

/**
 * A tool's definition as it is pinned: the parts a model reads or a client relies on (name, title,
 * description, input and output schema, annotations), in a canonical JSON form (keys sorted at
 * every depth, no insignificant whitespace), and the SHA-256 of that form. What a server adds
 * besides ({@code _meta}, icons) changes no digest. A name listed twice with different definitions
 * in one answer is one definition holding both (a JSON array), which is never approved.
 *
 * @param canonical the canonical JSON object, or an array of them for a name listed ambiguously
 * @param digest lower-case hex SHA-256 of the canonical text
 */
record ToolDefinition(JsonNode canonical, String digest)
{
    private static final List<String> PINNED = List.of("name", "title", "description", "inputSchema", "outputSchema", "annotations");
    private static final ObjectMapper CANONICAL = JsonMapper.builder().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS).build();

    ToolDefinition
    {
        Objects.requireNonNull(canonical, "canonical");
        Objects.requireNonNull(digest, "digest");
    }

    /** The pinned parts of one entry of a {@code tools/list} result. */
    static ToolDefinition of(JsonNode tool)
    {
        ObjectNode pinned = CANONICAL.createObjectNode();
        for (String key : PINNED)
        {
            if (tool.has(key))
                pinned.set(key, sorted(tool.get(key)));
        }
        return ofCanonical(pinned);
    }

    /** One definition for a name a list holds more than once with different definitions. */
    static ToolDefinition ambiguous(List<ToolDefinition> definitions)
    {
        ArrayNode all = CANONICAL.createArrayNode();
        definitions.forEach(definition -> all.add(definition.canonical()));
        return ofCanonical(all);
    }

    /**
     * A definition too long to keep, kept as its digest and length: changes of it are still seen,
     * and an operator approves it by digest, without the admin API showing its text. No server's
     * definition has an {@code oversized} member: only the pinned parts are ever taken.
     */
    static ToolDefinition oversized(String name, ToolDefinition definition)
    {
        ObjectNode kept = CANONICAL.createObjectNode().put("name", name).put("oversized", definition.digest())
            .put("description", "(a definition of " + text(definition.canonical()).length() + " characters, too long to keep: only its digest is)");
        // Kept ambiguous when it was: such a definition is never approved.
        return new ToolDefinition(definition.ambiguous() ? CANONICAL.createArrayNode().add(kept) : kept, definition.digest());
    }

    /** A definition read back from the store, where it was kept in canonical form. */
    static ToolDefinition ofCanonical(JsonNode canonical)
    {
        JsonNode oversized = (canonical.isArray() ? canonical.path(0) : canonical).path("oversized");
        return new ToolDefinition(canonical, oversized.isTextual() ? oversized.asText() : Digests.sha256Hex(text(canonical)));
    }

    /** Whether this is a name listed with different definitions at once: such a tool is never served. */
    boolean ambiguous()
    {
        return canonical.isArray();
    }

    /** The description, or null; of the first definition when ambiguous. */
    JsonNode part(String key)
    {
        JsonNode first = ambiguous() ? canonical.path(0) : canonical;
        return first.get(key);
    }

    /** The canonical text: what the digest is of. */
    static String text(JsonNode canonical)
    {
        try
        {
            return CANONICAL.writeValueAsString(canonical);
        }
        catch (com.fasterxml.jackson.core.JsonProcessingException x)
        {
            throw new IllegalStateException(x);
        }
    }

    /** A copy with the members of every object in key order, so that the text depends on content alone. */
    private static JsonNode sorted(JsonNode node)
    {
        if (node.isObject())
        {
            List<String> keys = new ArrayList<>();
            node.fieldNames().forEachRemaining(keys::add);
            keys.sort(null);
            ObjectNode copy = CANONICAL.createObjectNode();
            for (String key : keys)
                copy.set(key, sorted(node.get(key)));
            return copy;
        }
        if (node.isArray())
        {
            ArrayNode copy = CANONICAL.createArrayNode();
            node.forEach(item -> copy.add(sorted(item)));
            return copy;
        }
        return node;
    }

}
