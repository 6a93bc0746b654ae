package io.sandgate.config;

import java.net.URI;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The MCP face.
 *
 * @param servers upstream MCP servers, each reachable at /mcp/{name}/...
 * @param keepalive SSE comment interval on client streams
 * @param sessionTtl a session unused this long expires on every replica
 * @param replayBuffer events kept per session for Last-Event-ID resume
 * @param maxBodySize largest JSON-RPC body accepted, bytes
 * @param maxSessionsPerClient open sessions one client address may hold on one replica
 * @param allowedOrigins browser origins allowed besides the gateway's own; "*" for any
 */
public record McpConfig(List<Server> servers, Duration keepalive, Duration sessionTtl, int replayBuffer, int maxBodySize,
                        int maxSessionsPerClient, List<String> allowedOrigins)
{
    /** How Sandgate talks to an upstream MCP server. */
    public enum Transport
    {
        /** Streamable HTTP (2025-03-26 and later): POST/GET/DELETE on one URL. */
        STREAMABLE,
        /** HTTP+SSE (2024-11-05): a GET event stream and a message URL it announces. */
        SSE
    }

    /**
     * @param name path segment, /mcp/{name}/
     * @param url the upstream's Streamable HTTP endpoint, or its SSE endpoint
     * @param transport which of the two it speaks
     */
    public record Server(String name, URI url, Transport transport)
    {
        public Server
        {
            if (name == null || !name.matches("[a-z0-9][a-z0-9-]{0,62}"))
                throw new IllegalArgumentException(ConfigKeys.MCP_SERVERS.name() + ": name " + name + " (expected: lower-case letters, digits and '-')");
            if (url == null || url.getScheme() == null || !url.getScheme().matches("https?") || url.getHost() == null)
                throw new IllegalArgumentException(ConfigKeys.MCP_SERVERS.name() + ": " + name + ": url " + url + " (expected: an http:// or https:// URL)");
        }

        /** Parses one entry of {@code mcp.servers}: {@code {name, url, transport}}. */
        static Server parse(Map<?, ?> raw)
        {
            ConfigTable entry = ConfigTable.of(raw, ConfigKeys.MCP_SERVERS.name(), "{name, url, transport}", Set.of("name", "url", "transport"));
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
                throw new IllegalArgumentException(ConfigKeys.MCP_SERVERS.name() + ": " + name + ": transport " + transport + " (expected: streamable or sse)");
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
            return new Server(name == null ? null : name.toString(), uri, parsed);
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
        StoreConfig.positive(ConfigKeys.MCP_KEEPALIVE, keepalive);
        StoreConfig.positive(ConfigKeys.MCP_SESSION_TTL, sessionTtl);
        allowedOrigins = List.copyOf(allowedOrigins);
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
