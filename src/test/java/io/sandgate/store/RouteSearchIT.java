package io.sandgate.store;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.IntStream;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RoutePage;
import io.sandgate.ingress.RouteStore;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A route among 100 000, found by id prefix a page at a time, in the memory store and in a real
 * Redis (where the hash is walked with HSCAN MATCH, never read whole): every matching route once,
 * no page above its limit, and a cursor of another search refused.
 */
class RouteSearchIT
{
    private static final int ROUTES = 100_000;
    private static final String KEY = "vnc_sandboxes";
    private static RedisServerProcess redis;
    private static Schedulers schedulers;
    private static Store memory;
    private static Store shared;

    @BeforeAll
    static void fill() throws Exception
    {
        schedulers = Schedulers.create();
        memory = Store.create(new GatewayConfig().build(), new SimpleMeterRegistry(), schedulers);
        IntStream.range(0, ROUTES).forEach(i -> memory.routes().put(Integer.toString(i), target(i)));
        redis = RedisServerProcess.start();
        try (RawRedis raw = RawRedis.connect(redis.port()))
        {
            // A thousand fields per HSET, as a loader would write them; not through the store.
            for (int from = 0; from < ROUTES; from += 1000)
            {
                List<String> command = new ArrayList<>(List.of("HSET", KEY));
                for (int i = from; i < from + 1000; i++)
                {
                    command.add(Integer.toString(i));
                    command.add(target(i).authority());
                }
                raw.command(command.toArray(String[]::new));
            }
            assertEquals((long)ROUTES, raw.command("HLEN", KEY));
        }
        shared = Store.create(new GatewayConfig().redisStore(redis).build(), new SimpleMeterRegistry(), schedulers);
    }

    @AfterAll
    static void stop() throws Exception
    {
        Fixtures.closeInOrder(shared, memory, redis, schedulers);
    }

    private static Route target(int i)
    {
        return Route.parse("10." + (i / 65536) + "." + (i / 256 % 256) + "." + (i % 256) + ":6080");
    }

    private static RouteStore store(String type)
    {
        return type.equals("memory") ? memory.routes() : shared.routes();
    }

    /** Every page of a search, each checked against the limit; the routes found, by id, with no id twice. */
    private static Map<String, Route> all(RouteStore store, String prefix, int limit)
    {
        Map<String, Route> found = new java.util.TreeMap<>();
        String cursor = null;
        int pages = 0;
        do
        {
            RoutePage page = store.search(prefix, cursor, limit);
            assertTrue(page.routes().size() <= limit, "page of " + page.routes().size());
            for (Map.Entry<String, Route> route : page.routes().entrySet())
                assertTrue(found.put(route.getKey(), route.getValue()) == null, "twice: " + route.getKey());
            cursor = page.next().orElse(null);
            assertTrue(++pages < ROUTES, "the search never ends");
        }
        while (cursor != null);
        return found;
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void aPrefix_findsEveryMatchingRoute_overPagesOfAtMostTheLimit(String type)
    {
        Map<String, Route> found = all(store(type), "4242", 4);
        Set<String> expected = new TreeSet<>(List.of("4242", "42420", "42421", "42422", "42423", "42424", "42425", "42426", "42427", "42428", "42429"));
        assertEquals(expected, found.keySet());
        assertEquals(target(42427), found.get("42427"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void oneSandbox_isFoundOnTheFirstPage(String type)
    {
        RoutePage page = store(type).search("99999", null, 50);
        assertEquals(Map.of("99999", target(99999)), page.routes());
        assertTrue(page.next().isEmpty(), page.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void anEmptyPrefix_walksTheWholeTable(String type)
    {
        Map<String, Route> found = all(store(type), "", 1000);
        assertEquals(ROUTES, found.size());
        assertEquals(IntStream.range(0, ROUTES).mapToObj(Integer::toString).collect(java.util.stream.Collectors.toCollection(HashSet::new)), found.keySet());
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void aPrefixNothingHas_findsNothing(String type)
    {
        assertEquals(Map.of(), all(store(type), "100000", 10));
    }

    @Test
    void redis_isWalkedWithHscan_neverReadWhole() throws Exception
    {
        try (RawRedis raw = RawRedis.connect(redis.port()))
        {
            raw.command("CONFIG", "RESETSTAT");
            all(shared.routes(), "123", 5);
            String stats = (String)raw.command("INFO", "commandstats");
            assertTrue(stats.contains("cmdstat_hscan:"), stats);
            assertFalse(stats.contains("cmdstat_hgetall:") || stats.contains("cmdstat_hvals:") || stats.contains("cmdstat_hkeys:"), stats);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void aCursorOfAnotherSearch_isRefused(String type)
    {
        assertThrows(IllegalArgumentException.class, () -> store(type).search("42", "x:y", 10));
    }
}
