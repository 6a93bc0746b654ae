package io.sandgate.mcp;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.sandgate.testing.Balancer;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two gateway replicas sharing a real redis-server in front of the SDK-built upstream (servers
 * {@code stream}: Streamable HTTP, {@code legacy}: HTTP+SSE), and two balancers: one sends streams
 * (GET) to A and POSTs to B, the other sends streams to A and alternates POSTs. Started once for
 * the test class that extends this one.
 */
abstract class McpTwoReplicas
{
    static RedisServerProcess redis;
    static McpUpstream upstream;
    static RunningGateway replicaA;
    static RunningGateway replicaB;
    static Balancer streamOnAPostsOnB;
    static Balancer alternating;

    @RegisterExtension
    static final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .redisStore(redis)
        .set("store.redis.poll-interval", "200ms")
        .set("mcp.servers", List.of(
            Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable"),
            Map.of("name", "legacy", "url", upstream.sseUrl(), "transport", "sse"))));

    @BeforeAll
    static void startReplicas() throws Exception
    {
        redis = RedisServerProcess.start();
        upstream = McpUpstream.start();
        replicaA = gateways.startAnother();
        replicaB = gateways.startAnother();
        streamOnAPostsOnB = Balancer.start(request -> "GET".equals(request.getMethod()) ? replicaA.uri() : replicaB.uri());
        AtomicInteger next = new AtomicInteger();
        alternating = Balancer.start(request -> "GET".equals(request.getMethod()) ? replicaA.uri()
            : next.getAndIncrement() % 2 == 0 ? replicaB.uri() : replicaA.uri());
    }

    @AfterAll
    static void stopReplicas() throws Exception
    {
        // The replicas before what they use; the extension would stop them only after this.
        Fixtures.closeInOrder(streamOnAPostsOnB, alternating, replicaA, replicaB, upstream, redis);
    }

    @BeforeEach
    void clearRouted()
    {
        streamOnAPostsOnB.routed.clear();
        alternating.routed.clear();
    }
}
