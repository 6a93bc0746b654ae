package io.sandgate.config;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import io.sandgate.core.Secret;

/**
 * Where shared state lives.
 *
 * @param type memory (one replica) or redis (every replica sees the same state)
 * @param redis how to reach Redis; used only when type is redis
 */
public record StoreConfig(Type type, Redis redis)
{
    public enum Type
    {
        MEMORY, REDIS
    }

    public StoreConfig
    {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(redis, "redis");
    }

    /**
     * @param address single server URI
     * @param clusterNodes cluster seed nodes; when non-empty, cluster mode
     * @param sentinelNodes sentinel nodes; when non-empty, sentinel mode
     * @param sentinelMaster master name for sentinel mode
     * @param username ACL user
     * @param password password, never printed
     * @param database database number (not in cluster mode)
     * @param timeout command timeout
     * @param revalidateInterval full re-read of cached routes, even with notifications
     * @param pollInterval re-read interval of the route table when keyspace notifications are unavailable
     * @param sessionPollInterval how often each MCP session held checks its log for a message whose
     *        wake-up was lost; only a net, since every pub/sub (re)subscription checks at once
     * @param negativeCacheTtl how long an id Redis has no route for is remembered as such; zero: not at all
     */
    public record Redis(String address, List<String> clusterNodes, List<String> sentinelNodes,
                        Optional<String> sentinelMaster, Optional<String> username, Optional<Secret> password,
                        int database, Duration timeout, Duration revalidateInterval, Duration pollInterval,
                        Duration sessionPollInterval, Duration negativeCacheTtl)
    {
        /**
         * The sessions' safety poll unless {@code store.redis.poll-interval} is set. Slow: a wake-up
         * lost with the pub/sub connection is recovered when it resubscribes, so the poll is left with
         * the rare loss nothing else notices, and it costs Redis a command per session each time.
         */
        public static final Duration DEFAULT_SESSION_POLL_INTERVAL = Duration.ofSeconds(30);

        public Redis
        {
            if (!address.startsWith("redis://") && !address.startsWith("rediss://"))
                throw new IllegalArgumentException(ConfigKeys.REDIS_ADDRESS.name() + ": " + address.replaceFirst("//[^@/]*@", "//****@") + " (expected: redis://host:port or rediss://host:port)");
            clusterNodes = List.copyOf(clusterNodes);
            sentinelNodes = List.copyOf(sentinelNodes);
            if (!sentinelNodes.isEmpty() && sentinelMaster.isEmpty())
                throw new IllegalArgumentException(ConfigKeys.REDIS_SENTINEL_MASTER.name() + ": missing (expected: the master name, since store.redis.sentinel-nodes is set)");
            if (!clusterNodes.isEmpty() && !sentinelNodes.isEmpty())
                throw new IllegalArgumentException(ConfigKeys.REDIS_CLUSTER_NODES.name() + ": set together with store.redis.sentinel-nodes (expected: one of them)");
            Objects.requireNonNull(sessionPollInterval, "sessionPollInterval");
        }

        /** Without the address's user-info, which may hold a password. */
        @Override
        public String toString()
        {
            return "Redis[address=" + address.replaceFirst("//[^@/]*@", "//****@") + ", clusterNodes=" + clusterNodes
                + ", sentinelNodes=" + sentinelNodes + ", sentinelMaster=" + sentinelMaster + ", username=" + username
                + ", password=" + password + ", database=" + database + ", timeout=" + timeout + "]";
        }
    }

    static void positive(ConfigKey<Duration> key, Duration value)
    {
        positive(key.name(), value);
    }

    static void positive(String name, Duration value)
    {
        Objects.requireNonNull(value, name);
        if (value.isZero() || value.isNegative())
            throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
    }
}
