package io.sandgate.testing;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two gateway replicas sharing one real {@code redis-server}, and two sandboxes {@code a} and
 * {@code b}, fresh for each test. A test may kill and restart {@link #redis} and reconnect
 * {@link #raw}; whatever the fields hold at the end is closed.
 */
public abstract class RedisReplicas
{
    protected RedisServerProcess redis;
    /** A client of its own (not Redisson), as any other writer of the shared state would be. */
    protected RawRedis raw;
    protected SandboxBackend a;
    protected SandboxBackend b;
    protected RunningGateway replica1;
    protected RunningGateway replica2;

    @RegisterExtension
    protected final GatewayExtension gateways = GatewayExtension.manual(config -> configure(config.redisStore(redis).set("store.redis.timeout", "500ms")));

    /** What the replicas need besides the shared Redis. */
    protected abstract void configure(GatewayConfig config);

    /** State the replicas should find when they start (routes); nothing by default. */
    protected void beforeReplicas() throws Exception
    {
    }

    @BeforeEach
    final void startReplicas() throws Exception
    {
        redis = RedisServerProcess.start();
        raw = RawRedis.connect(redis.port());
        a = SandboxBackend.start("a");
        b = SandboxBackend.start("b");
        beforeReplicas();
        replica1 = gateways.startAnother();
        replica2 = gateways.startAnother();
    }

    @AfterEach
    final void stopFixtures() throws Exception
    {
        Fixtures.closeInOrder(a, b, raw, redis);
    }
}
