package io.sandgate.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RouteStore;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisRelay;
import io.sandgate.testing.RedisServerProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ids the route hash has no route for, against a real {@code redis-server}: repeated lookups of them
 * cost Redis one HGET per id rather than one per lookup, yet a route written for such an id, by any
 * client, is seen as fast as any other change, including a write that lands while the lookup's HGET
 * is in flight and one made while the store could not hear of it.
 *
 * <p>The store reaches Redis through a {@link RedisRelay}, so that a test can hold replies back or
 * cut the store off; the test's own client ({@link RawRedis}, not Redisson) talks to Redis directly.</p>
 */
class RedisRouteStoreNegativeCacheIT
{
    private static final String KEY = "vnc_sandboxes";
    private static final Duration WITHIN_A_SECOND = Duration.ofSeconds(1);
    /** Long enough that only a change, never the TTL, can end an entry while a test runs. */
    private static final String FOR_AN_HOUR = "1h";

    private RedisServerProcess redis;
    private RedisRelay relay;
    private RawRedis raw;
    private Schedulers schedulers;
    private final List<Store> stores = new ArrayList<>();
    private int probes;

    @BeforeEach
    void startRedis() throws Exception
    {
        redis = RedisServerProcess.start();
        relay = RedisRelay.start(redis.port());
        raw = RawRedis.connect(redis.port());
        schedulers = Schedulers.create();
    }

    @AfterEach
    void stop() throws Exception
    {
        stores.forEach(Store::close);
        Fixtures.closeInOrder(schedulers, raw, relay, redis);
    }

    /** A replica's store with this negative cache TTL, once it hears changes through keyspace notifications. */
    private Store replica(String negativeCacheTtl, MeterRegistry registry)
    {
        return replica(negativeCacheTtl, registry, "3s");
    }

    private Store replica(String negativeCacheTtl, MeterRegistry registry, String timeout)
    {
        GatewayConfig config = new GatewayConfig().set("store.type", "redis").set("store.redis.address", relay.address())
            .set("store.redis.timeout", timeout).set("store.redis.negative-cache-ttl", negativeCacheTtl);
        Store store = Store.create(config.build(), registry, schedulers);
        stores.add(store);
        await().atMost(Duration.ofSeconds(10)).until(() -> store.health().detail().contains("keyspace notifications"));
        if (!negativeCacheTtl.equals("0s"))
        {
            // The tick that confirmed the notifications forgets absences once more as it ends; a test
            // counting HGETs starts after that, when an absence found is one a second lookup believes.
            await().atMost(Duration.ofSeconds(10)).until(() ->
            {
                String probe = "probe-" + probes++;
                long before = raw.calls("hget");
                store.routes().find(probe);
                store.routes().find(probe);
                return raw.calls("hget") - before == 1;
            });
        }
        return store;
    }

    private RouteStore routes(String negativeCacheTtl, MeterRegistry registry)
    {
        return replica(negativeCacheTtl, registry).routes();
    }

    private static double cacheResults(MeterRegistry registry, String result)
    {
        return registry.get("sandgate.route.cache").tag("result", result).counter().count();
    }

    private static Route target(int port)
    {
        return Route.parse("127.0.0.1:" + port);
    }

    @Test
    void madeUpIds_costRedisOneHgetEach_notOnePerLookup()
    {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        // The default TTL of 2 s would do as well, but a slow machine must not let it run out mid-test.
        RouteStore routes = routes("1m", registry);
        long before = raw.calls("hget");
        double absentBefore = cacheResults(registry, "absent");
        double missesBefore = cacheResults(registry, "miss");

        // A browser hammering one id that has no route, then a client cycling through 200 made-up ones,
        // on both the blocking and the non-blocking path.
        for (int i = 0; i < 1000; i++)
            assertEquals(Optional.empty(), i % 2 == 0 ? routes.find("900000") : routes.findAsync("900000").join());
        for (int round = 0; round < 5; round++)
        {
            for (int id = 0; id < 200; id++)
                assertEquals(Optional.empty(), round % 2 == 0 ? routes.find("9" + id) : routes.findAsync("9" + id).join());
        }

        long hgets = raw.calls("hget") - before;
        assertEquals(201, hgets, "HGETs for 2000 lookups of 201 ids without a route");
        assertEquals(2000 - 201, cacheResults(registry, "absent") - absentBefore, "lookups answered as known absent");
        assertEquals(201, cacheResults(registry, "miss") - missesBefore, "lookups that asked Redis");
    }

    @Test
    void plainHset_ofAnIdJustFoundAbsent_isSeenWithinASecond()
    {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RouteStore routes = routes(FOR_AN_HOUR, registry);
        double absentBefore = cacheResults(registry, "absent");
        assertEquals(Optional.empty(), routes.find("8001"));
        assertEquals(Optional.empty(), routes.find("8001"));
        assertEquals(1, cacheResults(registry, "absent") - absentBefore, "the second lookup was answered as known absent");

        raw.hset(KEY, "8001", "127.0.0.1:6080");

        await().atMost(WITHIN_A_SECOND).pollInterval(Duration.ofMillis(10)).until(() -> routes.find("8001").isPresent());
        assertEquals(Optional.of(target(6080)), routes.find("8001"));
    }

    @Test
    void routeWrittenThroughAnotherReplica_ofAnIdFoundAbsentHere_isSeenWithinASecond()
    {
        RouteStore here = routes(FOR_AN_HOUR, new SimpleMeterRegistry());
        RouteStore there = routes(FOR_AN_HOUR, new SimpleMeterRegistry());
        assertEquals(Optional.empty(), here.find("8002"));
        assertEquals(Optional.empty(), there.find("8002"));

        // As the admin API or the pod watcher of the other replica writes it.
        there.put("8002", target(6081));

        assertEquals(Optional.of(target(6081)), there.find("8002"), "the writer sees its own write at once");
        await().atMost(WITHIN_A_SECOND).pollInterval(Duration.ofMillis(10)).until(() -> here.find("8002").isPresent());
    }

    @Test
    void writeLandingWhileTheMissIsInFlight_isNotHiddenAsAbsent() throws Exception
    {
        // Held replies may include the store's own health ping, which holds up the re-read behind it
        // until the ping times out: the lookup in flight must outlast that.
        RouteStore routes = replica(FOR_AN_HOUR, new SimpleMeterRegistry(), "10s").routes();
        // A cached route, so that the change notification shows as the HMGET that re-reads it.
        raw.hset(KEY, "8100", "127.0.0.1:6080");
        assertTrue(routes.find("8100").isPresent());
        long hgets = raw.calls("hget");
        long hmgets = raw.calls("hmget");

        relay.holdReplies();
        CompletableFuture<Optional<Route>> inFlight = routes.findAsync("8101");
        // Redis has answered "no route", but the store has not heard the answer yet...
        await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(5)).until(() -> raw.calls("hget") == hgets + 1);
        raw.hset(KEY, "8101", "127.0.0.1:6081");
        // ...when the route is written, and the store hears of the change first.
        await().atMost(Duration.ofSeconds(8)).pollInterval(Duration.ofMillis(5)).until(() -> raw.calls("hmget") > hmgets);
        relay.releaseReplies();

        assertEquals(Optional.empty(), inFlight.get(), "the lookup answers what Redis held when it asked");
        assertEquals(Optional.of(target(6081)), routes.find("8101"), "the next lookup must not take that answer for the truth");
    }

    @Test
    void concurrentMisses_ofOneId_shareOneHget() throws Exception
    {
        // Written before the store starts, so that no change heard mid-burst makes a lookup read anew.
        raw.hset(KEY, "8201", "127.0.0.1:6081");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RouteStore routes = replica(FOR_AN_HOUR, registry, "10s").routes();
        long before = raw.calls("hget");
        double absentBefore = cacheResults(registry, "absent");

        relay.holdReplies();
        List<CompletableFuture<Optional<Route>>> absentLookups = new ArrayList<>();
        List<CompletableFuture<Optional<Route>>> presentLookups = new ArrayList<>();
        for (int i = 0; i < 50; i++)
        {
            absentLookups.add(routes.findAsync("8200"));
            presentLookups.add(routes.findAsync("8201"));
        }
        // One of each reached Redis; the rest, if sent, would be on their way too.
        await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(5)).until(() -> raw.calls("hget") >= before + 2);
        relay.releaseReplies();

        for (CompletableFuture<Optional<Route>> lookup : absentLookups)
            assertEquals(Optional.empty(), lookup.get());
        for (CompletableFuture<Optional<Route>> lookup : presentLookups)
            assertEquals(Optional.of(target(6081)), lookup.get());
        // Every lookup has its answer, so every HGET sent has been served.
        assertEquals(2, raw.calls("hget") - before, "HGETs for 100 concurrent lookups of two ids");
        assertEquals(0, cacheResults(registry, "absent") - absentBefore, "the id was not known absent until its one read answered");
    }

    @Test
    void afterThePubSubConnectionIsLost_anIdFoundAbsent_andWrittenMeanwhile_isFound()
    {
        RouteStore routes = routes(FOR_AN_HOUR, new SimpleMeterRegistry());
        assertEquals(Optional.empty(), routes.find("8300"));
        assertEquals(Optional.empty(), routes.find("8300"));

        relay.cutOff();
        // Redis publishes the event, but no one hears it.
        raw.hset(KEY, "8300", "127.0.0.1:6080");
        relay.restore();

        await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> routes.find("8300").isPresent());
    }

    @Test
    void afterRedisRestarts_anIdFoundAbsent_andWrittenMeanwhile_isFound() throws Exception
    {
        RouteStore routes = routes(FOR_AN_HOUR, new SimpleMeterRegistry());
        assertEquals(Optional.empty(), routes.find("8400"));
        assertEquals(Optional.empty(), routes.find("8400"));

        // Written into the new server before the store reaches it, and before the store turns the
        // events on there again: no event is ever sent for it.
        relay.cutOff();
        raw.close();
        redis.restart();
        raw = RawRedis.connect(redis.port());
        raw.hset(KEY, "8400", "127.0.0.1:6080");
        relay.restore();

        await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> routes.find("8400").isPresent());
    }

    @Test
    void zeroTtl_asksRedisOnEveryLookup()
    {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RouteStore routes = routes("0s", registry);
        long before = raw.calls("hget");

        for (int i = 0; i < 100; i++)
            assertEquals(Optional.empty(), routes.find("8500"));

        assertEquals(100, raw.calls("hget") - before);
        assertEquals(0, cacheResults(registry, "absent"));
    }
}
