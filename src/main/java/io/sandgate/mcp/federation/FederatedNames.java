package io.sandgate.mcp.federation;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.config.McpFederation;

/**
 * How a federation names its members' tools, prompts, resources and requests towards the client,
 * and how a name the client sends finds its member again (docs/mcp-federation.md). The separator
 * holds a character no server name can, so at most one member's prefix begins any name.
 */
public final class FederatedNames
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private final McpFederation federation;

    public FederatedNames(McpFederation federation)
    {
        this.federation = federation;
    }

    public McpFederation federation()
    {
        return federation;
    }

    /** A name (or URI) the client sent, as its member knows it. */
    public record Routed(String member, String name)
    {
    }

    /** The member whose prefix begins {@code name}, and the name without it; empty when none does. */
    public Optional<Routed> route(String name)
    {
        if (name == null)
            return Optional.empty();
        for (String member : federation.servers())
        {
            String prefix = federation.prefixOf(member);
            if (name.startsWith(prefix))
                return Optional.of(new Routed(member, name.substring(prefix.length())));
        }
        return Optional.empty();
    }

    /**
     * The name a member's item has towards the client.
     *
     * @param clashes whether, under {@code when-needed}, the name must be told apart ({@link #clashing})
     */
    public String outward(String member, String name, boolean clashes)
    {
        return federation.prefix() == McpFederation.Prefix.ALWAYS || clashes ? federation.prefixOf(member) + name : name;
    }

    /**
     * The names that {@code when-needed} prefixes among the members' names given together: those
     * more than one member gives, and those that begin with a member's prefix (left alone, they
     * would route to that member). Empty under {@code always}, which prefixes every name.
     */
    public Set<String> clashing(Map<String, ? extends Collection<String>> namesByMember)
    {
        Set<String> clashing = new HashSet<>();
        if (federation.prefix() == McpFederation.Prefix.ALWAYS)
            return clashing;
        Map<String, String> firstMember = new HashMap<>();
        namesByMember.forEach((member, names) ->
        {
            for (String name : names)
            {
                String other = firstMember.putIfAbsent(name, member);
                if (other != null && !other.equals(member) || route(name).isPresent())
                    clashing.add(name);
            }
        });
        return clashing;
    }

    /**
     * The id a member's request to the client (sampling, elicitation...) gets: its member and its
     * own id, so that ids of two members never collide and the client's answer finds its way back
     * on any replica without a look-up.
     */
    public String requestId(String member, JsonNode id)
    {
        return federation.prefixOf(member) + id.toString();
    }

    /** The member and its own id that a client's answer is for; empty when the id is none the federation gave. */
    public Optional<MemberId> memberRequest(JsonNode id)
    {
        if (id == null || !id.isTextual())
            return Optional.empty();
        Optional<Routed> routed = route(id.asText());
        if (routed.isEmpty())
            return Optional.empty();
        try
        {
            JsonNode own = JSON.readTree(routed.get().name());
            if (own != null && (own.isTextual() || own.isIntegralNumber()))
                return Optional.of(new MemberId(routed.get().member(), own));
        }
        catch (JsonProcessingException x)
        {
            // Not an id the federation made.
        }
        return Optional.empty();
    }

    /** A member's own request id. */
    public record MemberId(String member, JsonNode id)
    {
    }
}
