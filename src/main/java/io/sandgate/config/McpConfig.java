package io.sandgate.config;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The MCP face.
 *
 * @param servers upstream MCP servers, each reachable at /mcp/{name}/...
 * @param keepalive SSE comment interval on client streams
 * @param sessionTtl a session unused this long expires on every replica
 * @param replayBuffer events kept per session for Last-Event-ID resume
 * @param replayBufferBytes bytes of messages kept per session for Last-Event-ID resume
 * @param replayBufferBytesPerClient bytes of messages one client's sessions keep together (memory store)
 * @param maxBodySize largest JSON-RPC body accepted, bytes
 * @param maxSessionsPerClient live 2025-era sessions one client address may hold, across replicas
 * @param maxStreamsPerClient open client streams one client address may hold on one replica
 * @param allowedOrigins browser origins allowed besides the gateway's own; "*" for any
 * @param principalLabel whether tool-call counters are labelled by caller
 * @param federations servers served together, each at /mcp/{name}/mcp
 */
public record McpConfig(List<Server> servers, @Setting("mcp.keepalive-interval") Duration keepalive, Duration sessionTtl, int replayBuffer, int replayBufferBytes, int replayBufferBytesPerClient, int maxBodySize,
                        int maxSessionsPerClient, int maxStreamsPerClient, List<String> allowedOrigins, boolean principalLabel, List<McpFederation> federations)
{
    /** Without federations. */
    public McpConfig(List<Server> servers, Duration keepalive, Duration sessionTtl, int replayBuffer, int replayBufferBytes, int replayBufferBytesPerClient, int maxBodySize,
                     int maxSessionsPerClient, int maxStreamsPerClient, List<String> allowedOrigins, boolean principalLabel)
    {
        this(servers, keepalive, sessionTtl, replayBuffer, replayBufferBytes, replayBufferBytesPerClient, maxBodySize, maxSessionsPerClient, maxStreamsPerClient,
            allowedOrigins, principalLabel, List.of());
    }

    /** How Sandgate talks to an upstream MCP server. */
    public enum Transport
    {
        /** Streamable HTTP (2025-03-26 and later): POST/GET/DELETE on one URL. */
        STREAMABLE,
        /** HTTP+SSE (2024-11-05): a GET event stream and a message URL it announces. */
        SSE,
        /**
         * Streamable HTTP in its 2026-07-28 stateless revision only: no initialize, no sessions. The
         * gateway holds the sessions of 2025-era clients itself and speaks for them.
         */
        STATELESS
    }

    /**
     * Whether a server's tool definitions are pinned ({@code mcp.servers[].pin}): its tools as first
     * listed, or as an operator approved them, are the only ones its clients see and call.
     */
    public enum PinMode
    {
        /** Definitions are not recorded. */
        OFF,
        /** A changed or new definition is reported and stays visible and callable. */
        WARN,
        /** A changed or new definition is reported, hidden from lists and refused on calls until approved. */
        ENFORCE;

        static PinMode parse(Object raw, String where)
        {
            if (raw == null)
                return OFF;
            try
            {
                return valueOf(raw.toString().toUpperCase(Locale.ROOT));
            }
            catch (IllegalArgumentException x)
            {
                throw new IllegalArgumentException(where + " " + raw + " (expected: off, warn or enforce)");
            }
        }
    }

    /**
     * Which tools of a server its clients may see and call. Patterns are globs ({@code *} any run of
     * characters, {@code ?} one); a tool must match an {@code allow} pattern, when there are any,
     * and no {@code deny} pattern. With {@code scopes} (the server authenticates its callers), a
     * tool must also match a pattern of one of the scopes the caller's token holds: the policy is
     * then judged for a caller, through {@link #grantedTo}.
     *
     * @param scopes patterns by OAuth scope
     * @param granted the patterns of the scopes one caller holds; null until {@link #grantedTo}
     */
    public record ToolPolicy(List<String> allow, List<String> deny, Map<String, List<String>> scopes, List<String> granted)
    {
        public static final ToolPolicy ALL = new ToolPolicy(List.of(), List.of());

        public ToolPolicy(List<String> allow, List<String> deny)
        {
            this(allow, deny, Map.of(), null);
        }

        public ToolPolicy
        {
            allow = List.copyOf(allow);
            deny = List.copyOf(deny);
            scopes = Map.copyOf(scopes);
            granted = granted == null ? null : List.copyOf(granted);
        }

        /** The policy for a caller holding these scopes; this one when it has no rules by scope. */
        public ToolPolicy grantedTo(Collection<String> held)
        {
            if (scopes.isEmpty())
                return this;
            List<String> patterns = new ArrayList<>();
            for (String scope : held)
                patterns.addAll(scopes.getOrDefault(scope, List.of()));
            return new ToolPolicy(allow, deny, scopes, patterns);
        }

        /** Whether the tool may be listed and called; with rules by scope, only once granted to a caller. */
        public boolean allows(String tool)
        {
            boolean byScope = scopes.isEmpty() || granted != null && matches(granted, tool);
            return byScope && (allow.isEmpty() || matches(allow, tool)) && !matches(deny, tool);
        }

        /** Whether the policy hides nothing, so that answers need no reading. */
        public boolean allowsAll()
        {
            return allow.isEmpty() && deny.isEmpty() && scopes.isEmpty();
        }

        private static boolean matches(List<String> globs, String tool)
        {
            for (String glob : globs)
            {
                if (glob(glob, tool))
                    return true;
            }
            return false;
        }

        /**
         * Whether {@code text} matches {@code glob}, in at most the product of their lengths: the
         * name is the agent's to choose. Only the last star is ever given more characters: what it
         * is followed by up to the next star is matched at the earliest place it fits, and any
         * match that an earlier star could make later, this one can make too.
         */
        private static boolean glob(String glob, String text)
        {
            int g = 0;
            int t = 0;
            // The last star seen, and where in the text what follows it is being tried.
            int star = -1;
            int from = 0;
            while (t < text.length())
            {
                if (g < glob.length() && glob.charAt(g) == '*')
                {
                    star = g++;
                    from = t;
                }
                else if (g < glob.length() && (glob.charAt(g) == '?' || glob.charAt(g) == text.charAt(t)))
                {
                    g++;
                    t++;
                }
                else if (star >= 0)
                {
                    g = star + 1;
                    t = ++from;
                }
                else
                {
                    return false;
                }
            }
            while (g < glob.length() && glob.charAt(g) == '*')
                g++;
            return g == glob.length();
        }

        static ToolPolicy parse(Object raw, String where)
        {
            if (raw == null)
                return ALL;
            ConfigTable table = ConfigTable.of(raw, where, "{allow: [globs], deny: [globs], scopes: {scope: [globs]}}", Set.of("allow", "deny", "scopes"));
            Map<String, List<String>> scopes = new LinkedHashMap<>();
            Object byScope = table.raw("scopes");
            if (byScope != null)
            {
                ConfigTable rules = ConfigTable.of(byScope, table.at("scopes"), "{scope: [globs]}", null);
                for (Object scope : rules.asMap().keySet())
                    scopes.put(scope.toString(), globs(rules, scope.toString()));
            }
            return new ToolPolicy(globs(table, "allow"), globs(table, "deny"), scopes, null);
        }

        private static List<String> globs(ConfigTable table, String key)
        {
            Object raw = table.raw(key);
            if (raw == null)
                return List.of();
            if (!(raw instanceof List<?> items) || items.stream().anyMatch(item -> !(item instanceof String text) || text.isBlank()))
                throw new IllegalArgumentException(table.at(key) + ": " + raw + " (expected: a list of tool-name globs)");
            return items.stream().map(Object::toString).toList();
        }
    }

    /**
     * @param name path segment, /mcp/{name}/
     * @param url the upstream's Streamable HTTP endpoint, or its SSE endpoint
     * @param transport which protocol it speaks
     * @param tools which of its tools clients may list and call
     * @param auth how its callers authenticate; empty: its endpoints are open
     * @param quota how many calls one caller may make
     * @param credential what the gateway sends the server in place of its clients' tokens
     * @param pin whether its tool definitions are pinned
     */
    public record Server(String name, URI url, Transport transport, ToolPolicy tools, Optional<McpAuthConfig> auth, Optional<McpQuota> quota,
                         Optional<McpUpstreamCredential> credential, PinMode pin)
    {
        public Server(String name, URI url, Transport transport, ToolPolicy tools, Optional<McpAuthConfig> auth, Optional<McpQuota> quota,
                      Optional<McpUpstreamCredential> credential)
        {
            this(name, url, transport, tools, auth, quota, credential, PinMode.OFF);
        }

        public Server(String name, URI url, Transport transport)
        {
            this(name, url, transport, ToolPolicy.ALL);
        }

        public Server(String name, URI url, Transport transport, ToolPolicy tools)
        {
            this(name, url, transport, tools, Optional.empty(), Optional.empty(), Optional.empty());
        }

        public Server
        {
            tools = tools == null ? ToolPolicy.ALL : tools;
            pin = pin == null ? PinMode.OFF : pin;
            String at = ConfigKeys.MCP_SERVERS.name() + ": " + name + ": ";
            if (!tools.scopes().isEmpty() && auth.isEmpty())
                throw new IllegalArgumentException(at + "tools.scopes without auth (expected: mcp.auth or this server's auth, whose tokens carry the scopes)");
            if (credential.flatMap(McpUpstreamCredential::exchange).isPresent() && auth.isEmpty())
                throw new IllegalArgumentException(at + "credential.token-exchange without auth (expected: mcp.auth or this server's auth: the client's token is what is exchanged)");
            if (name == null || !name.matches("[a-z0-9][a-z0-9-]{0,62}"))
                throw new IllegalArgumentException(ConfigKeys.MCP_SERVERS.name() + ": name " + name + " (expected: lower-case letters, digits and '-')");
            if (url == null || url.getScheme() == null || !url.getScheme().matches("https?") || url.getHost() == null)
                throw new IllegalArgumentException(ConfigKeys.MCP_SERVERS.name() + ": " + name + ": url " + url + " (expected: an http:// or https:// URL)");
        }

        /**
         * Parses one entry of {@code mcp.servers}: {@code {name, url, transport, tools, auth, quota, credential, pin}}.
         *
         * @param globalAuth {@code mcp.auth}, or null
         * @param publicOrigin the first of {@code server.public-origins}, or null
         */
        static Server parse(Map<?, ?> raw, Map<String, ?> globalAuth, String publicOrigin)
        {
            ConfigTable entry = ConfigTable.of(raw, ConfigKeys.MCP_SERVERS.name(), "{name, url, transport, tools, auth, quota, credential, pin}",
                Set.of("name", "url", "transport", "tools", "auth", "quota", "credential", "pin"));
            Object name = entry.raw("name");
            Object url = entry.raw("url");
            Object transport = entry.raw("transport");
            Transport parsed;
            try
            {
                parsed = transport == null ? Transport.STREAMABLE : Transport.valueOf(transport.toString().toUpperCase(Locale.ROOT));
            }
            catch (IllegalArgumentException x)
            {
                throw new IllegalArgumentException(ConfigKeys.MCP_SERVERS.name() + ": " + name + ": transport " + transport + " (expected: streamable, sse or stateless)");
            }
            URI uri;
            try
            {
                uri = url == null ? null : URI.create(url.toString());
            }
            catch (IllegalArgumentException x)
            {
                throw new IllegalArgumentException(ConfigKeys.MCP_SERVERS.name() + ": " + name + ": url " + url + " (expected: an http:// or https:// URL)");
            }
            String at = ConfigKeys.MCP_SERVERS.name() + ": " + name + ": ";
            ToolPolicy tools = ToolPolicy.parse(entry.raw("tools"), at + "tools");
            String named = name == null ? null : name.toString();
            Optional<McpAuthConfig> auth = McpAuthConfig.resolve(globalAuth, entry.raw("auth"), at + "auth", named, publicOrigin);
            Optional<McpQuota> quota = McpQuota.parse(entry.raw("quota"), at + "quota");
            Optional<McpUpstreamCredential> credential = uri == null ? Optional.empty() : McpUpstreamCredential.parse(entry.raw("credential"), at + "credential", uri);
            PinMode pin = PinMode.parse(entry.raw("pin"), at + "pin");
            return new Server(named, uri, parsed, tools, auth, quota, credential, pin);
        }
    }

    public McpConfig
    {
        servers = List.copyOf(servers);
        Set<String> names = new HashSet<>();
        for (Server server : servers)
        {
            if (!names.add(server.name()))
                throw new IllegalArgumentException(ConfigKeys.MCP_SERVERS.name() + ": name " + server.name() + " appears twice (expected: unique names)");
        }
        allowedOrigins = List.copyOf(allowedOrigins);
        federations = List.copyOf(federations);
        for (McpFederation federation : federations)
        {
            federation.check(servers);
            if (!names.add(federation.name()))
                throw new IllegalArgumentException(ConfigKeys.MCP_FEDERATIONS.name() + ": name " + federation.name() + " appears twice (expected: unique names)");
        }
    }

    /** The federation of that name, or null. */
    public McpFederation federation(String name)
    {
        for (McpFederation federation : federations)
        {
            if (federation.name().equals(name))
                return federation;
        }
        return null;
    }

    /** Whether a server needs the secret source: a credential of its own, or a client secret at its authorization server. */
    public boolean needsSecrets()
    {
        for (Server server : servers)
        {
            if (server.credential().isPresent() || server.auth().flatMap(McpAuthConfig::introspection).isPresent())
                return true;
        }
        return false;
    }

    public Server server(String name)
    {
        for (Server server : servers)
        {
            if (server.name().equals(name))
                return server;
        }
        return null;
    }
}
