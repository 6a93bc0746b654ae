package io.sandgate.mcp;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What the gateway holds of one tool of a pinned server: the definition an operator approved (or
 * trusted at the server's first list), and the one the server serves where that differs, since
 * when, and the digests an operator rejected. Kept in the {@link ToolPinStore} as canonical JSON.
 *
 * @param approved null for a tool the server added after its first list, until approved
 * @param served null while the server serves the approved definition
 * @param since when the served definition was first seen; null with it
 * @param rejected digests an operator rejected, newest last: not reported again
 */
record ToolPin(ToolDefinition approved, ToolDefinition served, Instant since, List<String> rejected)
{
    /** Rejections remembered per tool: a server cycling through definitions cannot grow its record without bound. */
    static final int MAX_REJECTED = 16;
    private static final ObjectMapper JSON = new ObjectMapper();

    ToolPin
    {
        rejected = List.copyOf(rejected);
    }

    /** A tool trusted as first listed. */
    static ToolPin trusted(ToolDefinition definition)
    {
        return new ToolPin(definition, null, null, List.of());
    }

    /** Whether the definition listed is one clients may not see under {@code enforce}. */
    boolean hides(ToolDefinition listed)
    {
        return approved == null || listed.ambiguous() || !listed.digest().equals(approved.digest());
    }

    /** Whether calls may go under {@code enforce}: the server serves what was approved, as far as its lists showed. */
    boolean callable()
    {
        return approved != null && served == null;
    }

    /** Whether an operator has a change to decide on. */
    boolean pending()
    {
        return served != null && !rejected.contains(served.digest());
    }

    /** {@code added} for a tool never approved, else {@code changed}. */
    String kind()
    {
        return approved == null ? "added" : "changed";
    }

    /** This tool as the server now lists it. */
    ToolPin serving(ToolDefinition listed, Instant now)
    {
        if (!hides(listed))
            return new ToolPin(approved, null, null, rejected);
        return new ToolPin(approved, listed, now, rejected);
    }

    /** The served definition approved. */
    ToolPin approve()
    {
        List<String> left = new ArrayList<>(rejected);
        left.remove(served.digest());
        return new ToolPin(served, null, null, left);
    }

    /** The served definition rejected: still served, so still hidden, but no longer reported. */
    ToolPin reject()
    {
        List<String> more = new ArrayList<>(rejected);
        more.remove(served.digest());
        more.add(served.digest());
        return new ToolPin(approved, served, since, more.subList(Math.max(0, more.size() - MAX_REJECTED), more.size()));
    }

    /** The stored form: canonical, so that the same record is always the same text for a compare-and-set. */
    String toJson()
    {
        ObjectNode node = JSON.createObjectNode();
        if (approved != null)
            node.set("approved", approved.canonical());
        if (served != null)
        {
            node.set("served", served.canonical());
            node.put("since", since.toString());
        }
        if (!rejected.isEmpty())
            rejected.forEach(node.putArray("rejected")::add);
        return ToolDefinition.text(node);
    }

    /** @throws IllegalArgumentException for a record this version did not write */
    static ToolPin parse(String json)
    {
        try
        {
            JsonNode node = JSON.readTree(json);
            ToolDefinition approved = node.has("approved") ? ToolDefinition.ofCanonical(node.get("approved")) : null;
            ToolDefinition served = node.has("served") ? ToolDefinition.ofCanonical(node.get("served")) : null;
            Instant since = served == null ? null : Instant.parse(node.path("since").asText());
            List<String> rejected = new ArrayList<>();
            node.path("rejected").forEach(digest -> rejected.add(digest.asText()));
            if (approved == null && served == null)
                throw new IllegalArgumentException("neither approved nor served");
            return new ToolPin(approved, served, since, rejected);
        }
        catch (JsonProcessingException | RuntimeException x)
        {
            throw new IllegalArgumentException("unreadable tool pin: " + x.getMessage(), x);
        }
    }
}
