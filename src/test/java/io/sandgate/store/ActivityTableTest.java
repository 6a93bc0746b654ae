package io.sandgate.store;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.sandgate.ingress.lifecycle.ActivityTable;
import io.sandgate.ingress.lifecycle.ActivityTable.Flush;
import io.sandgate.ingress.lifecycle.ActivityTable.SandboxActivity;
import io.sandgate.ingress.lifecycle.ActivityTable.Summary;
import io.sandgate.ingress.lifecycle.PauseClaims;
import io.sandgate.testing.RawRedis;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.redisson.api.RedissonClient;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the idle pause and the admin view ask of the replicas' activity and of pause claims, in memory and in a real Redis alike. */
class ActivityTableTest
{
    private static final Duration LONG = Duration.ofMinutes(5);
    @AutoClose
    private static final RedissonOnRedis store = RedissonOnRedis.start();
    private static final RedissonClient redisson = store.client;
    private static int sequence;

    static Stream<ActivityTable> tables()
    {
        return Stream.of(ActivityTable.inMemory(), new RedisActivityTable(redisson, Clock.systemUTC()));
    }

    static Stream<PauseClaims> claims()
    {
        return Stream.of(PauseClaims.inMemory(Clock.systemUTC()), new RedisPauseClaims(redisson, Clock.systemUTC()));
    }

    /** A replica name no other test uses: the Redis table is shared by the whole class. */
    private static String replica()
    {
        return "replica-" + (++sequence);
    }

    private static <T> T join(java.util.concurrent.CompletableFuture<T> future) throws Exception
    {
        return future.get(5, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @MethodSource("tables")
    void aSandbox_readsAsTheLatestOfAllReplicas_withEachReplicasOwn(ActivityTable table) throws Exception
    {
        String one = replica();
        String two = replica();
        join(table.publish(new Flush(one, Map.of("s1", 1_000L, "s2", 5_000L), Set.of(), Map.of("s1", 2), Set.of(), LONG, LONG)));
        join(table.publish(new Flush(two, Map.of("s1", 3_000L), Set.of(), Map.of(), Set.of(), LONG, LONG)));

        SandboxActivity s1 = join(table.sandbox("s1"));
        assertEquals(Optional.of(Instant.ofEpochMilli(3_000)), s1.lastActivity());
        assertEquals(2, s1.webSockets());
        assertEquals(new SandboxActivity.Replica(Optional.of(Instant.ofEpochMilli(1_000)), 2), s1.replicas().get(one));
        assertEquals(new SandboxActivity.Replica(Optional.of(Instant.ofEpochMilli(3_000)), 0), s1.replicas().get(two));
        assertTrue(join(table.sandbox("nobody-published-this")).isEmpty());

        Map<String, Summary> all = join(table.all());
        assertEquals(new Summary(3_000, 2), all.get("s1"));
        assertEquals(new Summary(5_000, 0), all.get("s2"));

        // Forgotten, and the WebSockets closed: gone from the table.
        join(table.publish(new Flush(one, Map.of(), Set.of("s2"), Map.of(), Set.of("s1"), LONG, LONG)));
        assertEquals(0, join(table.sandbox("s1")).webSockets());
        assertTrue(join(table.sandbox("s2")).isEmpty());
        assertFalse(join(table.all()).containsKey("s2"));
    }

    @Test
    void inRedis_aReplicaThatStopsWriting_losesItsWebSocketsFirst_thenItsActivity() throws Exception
    {
        RedisActivityTable table = new RedisActivityTable(redisson, Clock.systemUTC());
        String dead = replica();
        join(table.publish(new Flush(dead, Map.of("s9", 7_000L), Set.of(), Map.of("s9", 1), Set.of(), Duration.ofMillis(1500), Duration.ofMillis(300))));
        assertEquals(1, join(table.sandbox("s9")).webSockets());

        await().atMost(Duration.ofSeconds(2)).until(() -> join(table.sandbox("s9")).webSockets() == 0);
        assertEquals(Optional.of(Instant.ofEpochMilli(7_000)), join(table.sandbox("s9")).lastActivity(), "the activity outlives the WebSockets");
        await().atMost(Duration.ofSeconds(4)).until(() -> join(table.sandbox("s9")).isEmpty());
        try (RawRedis raw = RawRedis.connect(store.redis.port()))
        {
            assertEquals(0L, raw.command("EXISTS", "sandgate:activity:{" + dead + "}", "sandgate:websockets:{" + dead + "}"));
        }
    }

    @ParameterizedTest
    @MethodSource("claims")
    void aSpellIsClaimedOnce_aLaterOneAgain_andAFailedPauseIsRetriedAfterTheDelay(PauseClaims claims) throws Exception
    {
        String id = "claim-" + (++sequence);
        long spell = System.currentTimeMillis() - 60_000;
        assertTrue(join(claims.claim(id, spell, LONG)));
        assertFalse(join(claims.claim(id, spell, LONG)), "the same spell, claimed twice");

        // Traffic after the claim: a new spell.
        long claimed = System.currentTimeMillis();
        await().atMost(Duration.ofSeconds(1)).until(() -> System.currentTimeMillis() > claimed);
        long later = System.currentTimeMillis();
        assertTrue(join(claims.claim(id, later, LONG)));
        assertFalse(join(claims.claim(id, later, LONG)));

        claims.retryAfter(id, Duration.ZERO);
        await().atMost(Duration.ofSeconds(2)).until(() -> join(claims.claim(id, later, LONG)));
    }
}
