package io.sandgate.mcp;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.sandgate.testing.Balancer;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;

/**
 * Two gateway replicas sharing a real redis-server in front of the SDK-built upstream (servers
 * {@code stream}: Streamable HTTP, {@code legacy}: HTTP+SSE), and two balancers: one sends streams
 * (GET) to A and POSTs to B, the other sends streams to A and alternates POSTs.
 */
final class McpTwoReplicas implements AutoCloseable
{
    final RedisServerProcess redis;
    final McpUpstream upstream;
    final RunningGateway replicaA;
    final RunningGateway replicaB;
    final Balancer streamOnAPostsOnB;
    final Balancer alternating;

    private McpTwoReplicas() throws Exception
    {
        redis = RedisServerProcess.start();
        upstream = McpUpstream.start();
        replicaA = RunningGateway.start(this::configure);
        replicaB = RunningGateway.start(this::configure);
        streamOnAPostsOnB = Balancer.start(request -> "GET".equals(request.getMethod()) ? replicaA.uri() : replicaB.uri());
        AtomicInteger next = new AtomicInteger();
        alternating = Balancer.start(request -> "GET".equals(request.getMethod()) ? replicaA.uri()
            : next.getAndIncrement() % 2 == 0 ? replicaB.uri() : replicaA.uri());
    }

    static McpTwoReplicas start() throws Exception
    {
        return new McpTwoReplicas();
    }

    private void configure(GatewayConfig config)
    {
        config.redisStore(redis);
        config.set("store.redis.poll-interval", "200ms");
        config.set("mcp.servers", List.of(
            Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable"),
            Map.of("name", "legacy", "url", upstream.sseUrl(), "transport", "sse")));
    }

    @Override
    public void close() throws Exception
    {
        for (AutoCloseable c : new AutoCloseable[]{streamOnAPostsOnB, alternating, replicaA, replicaB, upstream, redis})
        {
            if (c != null)
                c.close();
        }
    }
}
