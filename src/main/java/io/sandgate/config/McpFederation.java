package io.sandgate.config;

import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One entry of {@code mcp.federations}: several MCP servers served as one at
 * {@code /mcp/{name}/mcp}, their names prefixed (docs/mcp-federation.md).
 *
 * @param name path segment, /mcp/{name}/mcp; never a server's name
 * @param servers the members, names of {@code mcp.servers}, in the order lists merge them
 * @param prefix when a member's names get its prefix
 * @param separator between a member's name and its item's name
 * @param auth how its callers authenticate ({@code mcp.auth}, with the federation's own resource
 *        URL and audience); empty: its endpoint is open
 */
public record McpFederation(String name, List<String> servers, Prefix prefix, String separator, Optional<McpAuthConfig> auth)
{
    public static final String DEFAULT_SEPARATOR = "__";

    /** When names get their member's prefix. */
    public enum Prefix
    {
        /** Every name. */
        ALWAYS,
        /** Only names that clash with another member's, or that begin with a member's prefix. */
        WHEN_NEEDED
    }

    /** An open federation. */
    public McpFederation(String name, List<String> servers, Prefix prefix, String separator)
    {
        this(name, servers, prefix, separator, Optional.empty());
    }

    public McpFederation
    {
        Objects.requireNonNull(auth, "auth");
        String at = ConfigKeys.MCP_FEDERATIONS.name() + ": " + name + ": ";
        if (name == null || !name.matches("[a-z0-9][a-z0-9-]{0,62}"))
            throw new IllegalArgumentException(ConfigKeys.MCP_FEDERATIONS.name() + ": name " + name + " (expected: lower-case letters, digits and '-')");
        Objects.requireNonNull(prefix, "prefix");
        if (servers == null || servers.isEmpty())
            throw new IllegalArgumentException(at + "servers: none (expected: a list of names of mcp.servers)");
        servers = List.copyOf(servers);
        if (new HashSet<>(servers).size() != servers.size())
            throw new IllegalArgumentException(at + "servers: " + servers + " (expected: each server once)");
        // Tool names allow these (MCP 2025-11-25, "Tool names"); a character that server names
        // cannot hold keeps any two members' prefixes from both beginning one name.
        if (separator == null || !separator.matches("[A-Za-z0-9_.-]{1,8}") || !separator.matches(".*[A-Z_.].*"))
            throw new IllegalArgumentException(at + "separator " + separator
                + " (expected: 1 to 8 of A-Z a-z 0-9 _ - ., at least one of them A-Z, _ or . , which server names cannot hold)");
    }

    /** The prefix of a member's names. */
    public String prefixOf(String member)
    {
        return member + separator;
    }

    /**
     * Parses one entry: {@code {name, servers, prefix, separator}}.
     *
     * @param globalAuth {@code mcp.auth}, or null: the federation's callers authenticate as it says
     * @param publicOrigin the first of {@code server.public-origins}, or null
     */
    static McpFederation parse(Map<?, ?> raw, Map<String, ?> globalAuth, String publicOrigin)
    {
        ConfigTable entry = ConfigTable.of(raw, ConfigKeys.MCP_FEDERATIONS.name(), "{name, servers, prefix, separator}",
            Set.of("name", "servers", "prefix", "separator"));
        String name = entry.text("name", null);
        String at = ConfigKeys.MCP_FEDERATIONS.name() + ": " + name + ": ";
        Object servers = entry.raw("servers");
        if (!(servers instanceof List<?> items) || items.stream().anyMatch(item -> !(item instanceof String)))
            throw new IllegalArgumentException(at + "servers: " + servers + " (expected: a list of names of mcp.servers)");
        String prefix = entry.text("prefix", "always");
        Prefix parsed = switch (prefix.toLowerCase(Locale.ROOT))
        {
            case "always" -> Prefix.ALWAYS;
            case "when-needed" -> Prefix.WHEN_NEEDED;
            default -> throw new IllegalArgumentException(at + "prefix " + prefix + " (expected: always or when-needed)");
        };
        Optional<McpAuthConfig> auth = McpAuthConfig.resolve(globalAuth, null, at + "auth", name, publicOrigin);
        return new McpFederation(name, items.stream().map(Object::toString).toList(), parsed, entry.text("separator", DEFAULT_SEPARATOR), auth);
    }

    /**
     * Checks the federation against the servers: its members must be servers the federation can
     * serve, and its name no server's (paths and session records share one name space).
     */
    /**
     * The federation checks its callers' tokens with its own table ({@code mcp.auth}): a member whose
     * own table asks more (another issuer or key source, algorithms the federation does not take,
     * scopes the federation does not require) would be reached through the federation by callers it
     * refuses on its own endpoint. Audiences differ by design: each endpoint is its own resource.
     */
    private static void requireNoWider(String at, String member, McpAuthConfig own, McpAuthConfig federation)
    {
        boolean sameSource = own.issuers().equals(federation.issuers()) && own.jwksUrl().equals(federation.jwksUrl())
            && own.introspection().equals(federation.introspection());
        if (!sameSource || !own.algorithms().containsAll(federation.algorithms()) || !federation.scopes().containsAll(own.scopes()))
            throw new IllegalArgumentException(at + "server " + member + " authenticates its callers otherwise than the federation does (its issuers, key source, "
                + "algorithms or required scopes " + own.scopes() + "), so the federation would let in callers it refuses (expected: members whose auth "
                + "is mcp.auth's, with no scope the federation does not require too)");
    }

    void check(List<McpConfig.Server> all)
    {
        String at = ConfigKeys.MCP_FEDERATIONS.name() + ": " + name + ": ";
        for (McpConfig.Server server : all)
        {
            if (server.name().equals(name))
                throw new IllegalArgumentException(at + "name is a server's too (expected: a name no entry of mcp.servers has)");
        }
        for (String member : servers)
        {
            McpConfig.Server server = all.stream().filter(s -> s.name().equals(member)).findFirst().orElse(null);
            if (server == null)
                throw new IllegalArgumentException(at + "server " + member + " is not in mcp.servers (expected: names of mcp.servers)");
            // Open, the federation would let anyone reach what the member lets only its callers reach.
            if (server.auth().isPresent() && auth.isEmpty())
                throw new IllegalArgumentException(at + "server " + member + " authenticates its callers, and the federation's are not (expected: mcp.auth set, "
                    + "which the federation's callers then authenticate with, or members without auth)");
            if (server.auth().isPresent())
                requireNoWider(at, member, server.auth().get(), auth.get());
        }
    }
}
