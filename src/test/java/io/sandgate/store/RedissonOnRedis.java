package io.sandgate.store;

import io.sandgate.testing.RedisServerProcess;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** A real redis-server and a Redisson client on it, for a test class's store parts; closed together. */
final class RedissonOnRedis implements AutoCloseable
{
    final RedisServerProcess redis = RedisServerProcess.start();
    final RedissonClient client;

    private RedissonOnRedis()
    {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.address());
        client = Redisson.create(config);
    }

    static RedissonOnRedis start()
    {
        return new RedissonOnRedis();
    }

    @Override
    public void close()
    {
        client.shutdown();
        redis.close();
    }
}
