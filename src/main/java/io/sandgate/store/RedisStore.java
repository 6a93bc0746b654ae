package io.sandgate.store;

import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.SandgateConfig;
import io.sandgate.config.StoreConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.Routes;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;
import org.redisson.config.SubscriptionMode;
import org.redisson.connection.ConnectionListener;
import org.slf4j.LoggerFactory;

/**
 * Builds the {@link Store} whose state is in Redis through Redisson; every replica pointed at the
 * same Redis agrees.
 */
final class RedisStore
{
    private static final int CLUSTER_SCAN_MILLIS = 1000;

    private RedisStore()
    {
    }

    static Store connect(SandgateConfig config, MeterRegistry registry, Schedulers schedulers, Clock clock)
    {
        StoreConfig.Redis redis = config.store().redis();
        // The route cache's Redis calls, in order, on a thread of their own.
        ScheduledExecutorService scheduler = schedulers.lane("store");
        // The route store learns of disconnects through this listener; it is set before the client
        // exists, so it forwards to a holder filled in just below.
        RedisRouteStore[] holder = new RedisRouteStore[1];
        Config redissonConfig = redissonConfig(redis, new ConnectionListener()
        {
            @Override
            public void onConnect(InetSocketAddress address)
            {
            }

            @Override
            public void onDisconnect(InetSocketAddress address)
            {
                RedisRouteStore routes = holder[0];
                if (routes != null)
                    routes.onDisconnect();
            }
        });
        RedissonClient redisson = Redisson.create(redissonConfig);
        // Half the request threads may wait for Redis at once; the rest stay for what needs no Redis.
        RedisWaits waits = new RedisWaits(Math.max(1, config.server().maxThreads() / 2), registry);
        RedisRouteStore routes = new RedisRouteStore(redisson, config.ingress().routesKey(), redis, config.ingress().routeCacheSize(), registry, scheduler,
            clock, waits);
        holder[0] = routes;
        routes.start();
        Routes.parseStatic(config.ingress().staticRoutes()).forEach((id, route) ->
        {
            try
            {
                routes.put(id, route);
            }
            catch (RuntimeException x)
            {
                LoggerFactory.getLogger(RedisStore.class).warn("Could not write static route {} to Redis: {}", id, x.getClass().getSimpleName());
            }
        });
        // Plain pub/sub in a cluster too, though each wake-up then reaches every node: Redisson 4.7.0
        // subscribes a shard channel again with no codec when its slot moves, and the session goes deaf
        // (PublishSubscribeService.reattachPubSub(int); ClusterReshardIT).
        RedisSessionBus sessions = new RedisSessionBus(redisson, config.mcp().sessionTtl(), config.mcp().replayBuffer(), config.mcp().replayBufferBytes(), redis.sessionPollInterval(),
            WakeUps.BROADCAST, schedulers, waits);
        return new Store(routes, new RedisRedemptions(redisson, waits), new RedisWakeClaims(redisson),
            new Store.Lifecycle(new RedisActivityTable(redisson, clock), new RedisPauseClaims(redisson, clock)), new RedisStickySessions(redisson, waits), sessions,
            new RedisCallQuotas(redisson), new RedisToolPinStore(redisson), new Store.Agents(new RedisAgentPolicyStore(redisson), new RedisAgentBudgets(redisson)), name -> new RedisLeadership(redisson, name, schedulers), routes::health, () ->
            {
                scheduler.shutdownNow();
                sessions.close();
                redisson.shutdown(0, 2, TimeUnit.SECONDS);
            }).sharingInspectionCa(new RedisInspectionCa(redisson));
    }

    private static Config redissonConfig(StoreConfig.Redis redis, ConnectionListener listener)
    {
        Config config = new Config();
        // Lazy: the gateway starts and serves what it can while Redis is still down.
        config.setLazyInitialization(true);
        config.setConnectionListener(listener);
        // A dead leader's lock must pass to another replica within seconds, not Redisson's default 30 s.
        config.setLockWatchdogTimeout(10_000);
        int timeout = (int)redis.timeout().toMillis();
        redis.username().ifPresent(config::setUsername);
        redis.password().ifPresent(secret -> config.setPassword(secret.reveal()));
        // Reads go to masters, not to Redisson's default of replicas: a route re-read on a keyspace
        // notification, a session checked right after it was created, a stream read on its wake-up,
        // must see the write that caused them, and a replica may not have it yet.
        if (!redis.clusterNodes().isEmpty())
        {
            config.useClusterServers()
                .addNodeAddress(redis.clusterNodes().stream().map(RedisStore::uri).toArray(String[]::new))
                .setReadMode(ReadMode.MASTER).setSubscriptionMode(SubscriptionMode.MASTER)
                // A promoted replica is learnt within a second rather than Redisson's default 5 s;
                // until then the failed-over slots answer nothing.
                .setScanInterval(CLUSTER_SCAN_MILLIS)
                .setTimeout(timeout).setConnectTimeout(timeout).setRetryAttempts(1);
        }
        else if (!redis.sentinelNodes().isEmpty())
        {
            config.useSentinelServers()
                .addSentinelAddress(redis.sentinelNodes().stream().map(RedisStore::uri).toArray(String[]::new))
                .setMasterName(redis.sentinelMaster().orElseThrow()).setDatabase(redis.database())
                .setReadMode(ReadMode.MASTER).setSubscriptionMode(SubscriptionMode.MASTER)
                .setTimeout(timeout).setConnectTimeout(timeout).setRetryAttempts(1);
        }
        else
        {
            config.useSingleServer()
                .setAddress(redis.address()).setDatabase(redis.database())
                .setTimeout(timeout).setConnectTimeout(timeout).setRetryAttempts(1);
        }
        return config;
    }

    private static String uri(String node)
    {
        return node.contains("://") ? node : "redis://" + node;
    }
}
