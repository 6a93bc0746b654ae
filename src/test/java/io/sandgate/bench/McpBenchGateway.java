package io.sandgate.bench;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;

/** The gateway the MCP benchmarks measure: one Streamable HTTP server, no access log, a short stop. */
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
        return RunningGateway.start(config ->
        {
            config.set("log.access", "false");
            config.set("mcp.servers", List.of(Map.of("name", serverName, "url", url, "transport", "streamable")));
            if (redis != null)
                config.redisStore(redis);
            more.accept(config);
        });
    }
}
