package io.sandgate.store;

import io.sandgate.testing.RedisCluster;
import org.junit.jupiter.api.BeforeAll;

/** The stores on a Redis Cluster of three masters and three replicas, a master killed at the end. */
class RedisClusterIT extends ReplicatedRedisContract
{
    @BeforeAll
    static void start() throws Exception
    {
        startReplicas(RedisCluster.start());
    }

    @Override
    String topology()
    {
        return "cluster";
    }
}
