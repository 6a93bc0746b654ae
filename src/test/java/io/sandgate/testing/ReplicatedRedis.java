package io.sandgate.testing;

import java.time.Duration;
import java.util.Map;

/**
 * A Redis of several real processes that outlives its master: a {@link RedisCluster} or
 * {@link RedisSentinels}. Tests point gateways at it, write to it as any other client would, and
 * kill the master that holds a key to watch a replica take over.
 */
public interface ReplicatedRedis extends AutoCloseable
{
    /** The {@code store.redis.*} settings of a gateway using it, as a YAML file would give them. */
    Map<String, Object> storeSettings();

    /**
     * Runs {@code redis-cli} with these arguments against the master of the moment (following
     * redirections in a cluster) and returns what it printed: a write by a client that is not
     * Redisson, as an operator or a pod watcher would make it.
     */
    String cli(String... args);

    /** The port of the master that holds {@code key} now. */
    int masterOf(String key);

    /** SIGKILL to the master holding {@code key}, as a crash; returns its port. */
    int killMasterOf(String key);

    /**
     * Returns once a replica has been promoted in place of the killed master and serves {@code key};
     * the new master's port.
     */
    int awaitPromotion(String key, Duration atMost);

    /** The tails of the servers' logs, for failure messages. */
    String diagnostics();

    @Override
    void close();
}
