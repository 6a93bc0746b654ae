package io.sandgate.store;

import java.time.Duration;
import java.util.Optional;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RouteStore;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The re-read of cached routes, against a real {@code redis-server}: a write to any field of the
 * hash re-reads every cached id, and so does each revalidation. Routes that did not change keep their
 * cached instance, so a re-read leaves nothing new in the cache for the collector to copy or promote.
 */
class RedisRouteRefreshIT
{
    private static final String KEY = "vnc_sandboxes";

    private RedisServerProcess redis;
    private RawRedis raw;
    private Schedulers schedulers;
    private Store store;

    @BeforeEach
    void start() throws Exception
    {
        redis = RedisServerProcess.start();
        raw = RawRedis.connect(redis.port());
        schedulers = Schedulers.create();
        GatewayConfig config = new GatewayConfig().set("store.type", "redis").set("store.redis.address", redis.address());
        store = Store.create(config.build(), new SimpleMeterRegistry(), schedulers);
        await().atMost(Duration.ofSeconds(10)).until(() -> store.health().detail().contains("keyspace notifications"));
    }

    @AfterEach
    void stop() throws Exception
    {
        Fixtures.closeInOrder(store, schedulers, raw, redis);
    }

    @Test
    void aWriteToAnotherField_rereadsCachedRoutes_butKeepsTheUnchangedOnes()
    {
        raw.hset(KEY, "kept", "127.0.0.1:7001");
        raw.hset(KEY, "moved", "127.0.0.1:7002");
        RouteStore routes = store.routes();
        Route kept = routes.find("kept").orElseThrow();
        routes.find("moved").orElseThrow();
        long hmgets = raw.calls("hmget");

        raw.hset(KEY, "moved", "127.0.0.1:7003");

        await().atMost(Duration.ofSeconds(5)).until(() -> routes.cached("moved").orElseThrow().equals(Route.parse("127.0.0.1:7003")));
        // The change reached the cache through a re-read of every cached id, this one included.
        assertTrue(raw.calls("hmget") > hmgets, "the write was followed by a re-read");
        assertSame(kept, routes.cached("kept").orElseThrow(), "an unchanged route keeps its cached instance");
    }

    /** The shortcut must not hide a change that keeps the target: a revocation stamp, or a new pod's generation. */
    @Test
    void aRouteWhoseTargetStaysButStampOrGenerationChanges_isReplaced()
    {
        raw.hset(KEY, "stamped", "{\"target\":\"127.0.0.1:7001\",\"generation\":\"pod-a\"}");
        RouteStore routes = store.routes();
        Route before = routes.find("stamped").orElseThrow();

        raw.hset(KEY, "stamped", "{\"target\":\"127.0.0.1:7001\",\"generation\":\"pod-a\",\"revokedBefore\":\"2026-01-01T00:00:00Z\"}");
        await().atMost(Duration.ofSeconds(5)).until(() -> routes.cached("stamped").orElseThrow().revokedBefore().isPresent());

        raw.hset(KEY, "stamped", "{\"target\":\"127.0.0.1:7001\",\"generation\":\"pod-b\",\"revokedBefore\":\"2026-01-01T00:00:00Z\"}");
        await().atMost(Duration.ofSeconds(5)).until(() -> routes.cached("stamped").orElseThrow().generation().equals(Optional.of("pod-b")));
        assertEquals(before.authority(), routes.cached("stamped").orElseThrow().authority());
    }
}
