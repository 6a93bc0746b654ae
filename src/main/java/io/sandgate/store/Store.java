package io.sandgate.store;

import io.sandgate.core.Schedulers;
import io.sandgate.core.StoreHealth;
import io.sandgate.core.Leadership;
import io.sandgate.ingress.Redemptions;
import io.sandgate.ingress.RouteStore;
import io.sandgate.mcp.MemorySessionBus;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.SandgateConfig;

/**
 * Shared state of all replicas: in memory for one replica, in Redis for many. The only place that
 * decides which; nothing outside this package knows Redisson.
 */
public interface Store extends AutoCloseable
{
    RouteStore routes();

    /** Grants already redeemed, so that each opens a session once across the replicas. */
    Redemptions redemptions();

    /** Leader election among the replicas sharing this store. */
    Leadership leadership(String name);

    /** Egress sticky-session pins. */
    io.sandgate.egress.StickySessions sticky();

    /** MCP sessions and their event logs. */
    io.sandgate.mcp.SessionBus sessions();

    /** Asks the backing store whether it answers; cheap enough for a readiness probe. */
    StoreHealth health();

    @Override
    void close();

    static Store create(SandgateConfig config, MeterRegistry registry, Schedulers schedulers)
    {
        return switch (config.store().type())
        {
            case MEMORY -> new MemoryStore(config.ingress().staticRoutes(),
                new MemorySessionBus(config.mcp().sessionTtl(), config.mcp().replayBuffer(), schedulers));
            case REDIS -> RedisStore.connect(config, registry, schedulers);
        };
    }
}
