package io.sandgate.bench;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;

/** The gateway the MCP benchmarks measure: Streamable HTTP servers (one, or the members of a federation), no access log, a short stop. */
final class McpBenchGateway
{
    private McpBenchGateway()
    {
    }

    /**
     * Starts a replica relaying {@code /mcp/{serverName}/...} to {@code url}.
     *
     * @param redis the shared store, or null for the memory store
     */
    static RunningGateway start(String serverName, String url, RedisServerProcess redis) throws Exception
    {
        return start(serverName, url, redis, GatewayConfig.defaults());
    }

    /** As {@link #start(String, String, RedisServerProcess)}, with {@code more} set over it ({@code mcp.auth}, say). */
    static RunningGateway start(String serverName, String url, RedisServerProcess redis, Consumer<GatewayConfig> more) throws Exception
    {
        return start(Map.of(serverName, url), redis, more);
    }

    /**
     * As {@link #start(String, String, RedisServerProcess, Consumer)}, relaying {@code /mcp/{name}/...}
     * to each of {@code servers} (name to URL, in the iteration order of the map).
     */
    static RunningGateway start(Map<String, String> servers, RedisServerProcess redis, Consumer<GatewayConfig> more) throws Exception
    {
        List<Map<String, String>> entries = servers.entrySet().stream()
            .map(server -> Map.of("name", server.getKey(), "url", server.getValue(), "transport", "streamable"))
            .toList();
        return RunningGateway.start(config ->
        {
            config.set("log.access", "false");
            config.set("mcp.servers", entries);
            if (redis != null)
                config.redisStore(redis);
            more.accept(config);
        });
    }
}
