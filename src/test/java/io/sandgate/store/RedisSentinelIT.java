package io.sandgate.store;

import io.sandgate.testing.RedisSentinels;
import org.junit.jupiter.api.BeforeAll;

/** The stores behind Redis Sentinel (a master, a replica, three sentinels), the master killed at the end. */
class RedisSentinelIT extends ReplicatedRedisContract
{
    @BeforeAll
    static void start() throws Exception
    {
        startReplicas(RedisSentinels.start());
    }

    @Override
    String topology()
    {
        return "sentinel";
    }
}
