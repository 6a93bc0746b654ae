package io.sandgate.store;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.core.Schedulers;
import io.sandgate.mcp.McpSession;
import io.sandgate.mcp.MemorySessionBus;
import io.sandgate.mcp.SerialDrain;
import io.sandgate.mcp.SessionBus;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.redisson.api.RedissonClient;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the MCP face asks of its session store, in memory and in a real Redis alike. */
class SessionBusTest
{
    @AutoClose
    private static final Schedulers schedulers = Schedulers.create();
    @AutoClose
    private static final RedissonOnRedis store = RedissonOnRedis.start();
    private static final RedissonClient redisson = store.client;
    private static int sequence;
    /** What a session's log keeps in bytes, in these tests: room for a few large messages. */
    private static final long LOG_BYTES = 1 << 20;

    static Stream<SessionBus> buses()
    {
        return buses(Duration.ofMinutes(1));
    }

    static Stream<SessionBus> shortLivedBuses()
    {
        return buses(Duration.ofSeconds(1));
    }

    private static Stream<SessionBus> buses(Duration ttl)
    {
        // Shard channels work on a single Redis 7 too: the cluster's way of waking, tested without a cluster.
        return Stream.of(new MemorySessionBus(ttl, 100, LOG_BYTES, LOG_BYTES * 256, schedulers),
            new RedisSessionBus(redisson, ttl, 100, LOG_BYTES, Duration.ofSeconds(1), WakeUps.BROADCAST, schedulers, new RedisWaits(64, new SimpleMeterRegistry())),
            new RedisSessionBus(redisson, ttl, 100, LOG_BYTES, Duration.ofSeconds(1), WakeUps.SHARDED, schedulers, new RedisWaits(64, new SimpleMeterRegistry())));
    }

    private static McpSession session(String owner)
    {
        return McpSession.create(String.format("%032x", ++sequence), "tools", owner);
    }

    /** A new session, stored. */
    private static McpSession created(SessionBus bus, String owner)
    {
        McpSession session = session(owner);
        bus.create(session);
        return session;
    }

    /** Records what a subscription delivers. */
    private static final class Recorder implements SessionBus.Listener
    {
        final List<SerialDrain.Event> events = new CopyOnWriteArrayList<>();

        @Override
        public void onEvent(String eventId, String message)
        {
            onEvent(eventId, message, null);
        }

        @Override
        public void onEvent(String eventId, String message, String traceparent)
        {
            events.add(new SerialDrain.Event(eventId, message, traceparent));
        }

        List<String> messages()
        {
            return events.stream().map(SerialDrain.Event::message).toList();
        }

        @Override
        public void onEnd()
        {
        }
    }

    @ParameterizedTest
    @MethodSource("buses")
    void create_countsLiveSessionsPerClient(SessionBus bus)
    {
        try (bus)
        {
            String client = "10.0.0." + ++sequence;
            McpSession first = session("credential:a");
            assertTrue(bus.create(first, client, 2));
            assertTrue(bus.create(session("credential:b"), client, 2), "counted by client, whatever the credential");
            McpSession third = session("credential:c");
            assertFalse(bus.create(third, client, 2), "a third session for the same client");
            assertTrue(bus.find(third.id()).isEmpty(), "a refused session is not stored");
            assertTrue(bus.create(session("credential:c"), "10.1.0." + sequence, 2), "other clients are counted apart");

            bus.delete(first.id());
            assertTrue(bus.create(third, client, 2), "an ended session frees its place");
        }
    }

    /** A client resuming with an upstream's event id (a bare number, an SDK's uuid_n) must not be taken for one of the bus's. */
    @ParameterizedTest
    @MethodSource("buses")
    void ownEventIds_areToldFromAnUpstreams(SessionBus bus)
    {
        try (bus)
        {
            McpSession session = session("address:2");
            bus.create(session);
            String own = bus.append(session.id(), "k", "m");
            assertTrue(bus.isEventId(own), own);
            for (String upstreams : List.of("1", "42", "3f2a-uuid_7", "_GET_stream_12"))
                assertFalse(bus.isEventId(upstreams), upstreams);
        }
    }

    /**
     * A client's Last-Event-ID may have a stream id's shape with numbers past a long's range: taken
     * for one of the bus's, it failed every read of its subscription, and the safety poll, which
     * looks at every subscription in one batch, for all of them. It is as foreign as any id the bus
     * did not give, and a subscription after it replays what is retained, as after none.
     */
    @ParameterizedTest
    @MethodSource("buses")
    void lastEventIdPastALongsRange_isForeign_andReplaysAsNoneDoes(SessionBus bus)
    {
        try (bus)
        {
            for (String overflowing : List.of("9999999999999999999-0", "9223372036854775808-0", "0-9999999999999999999", "0-9223372036854775807"))
                assertFalse(bus.isEventId(overflowing), overflowing);
            McpSession session = created(bus, "address:8");
            bus.append(session.id(), "k1", "first");
            bus.append(session.id(), "k2", "second");
            Recorder seen = new Recorder();
            try (SessionBus.Subscription ignored = bus.subscribe(session.id(), "9999999999999999999-0", seen))
            {
                await().until(() -> seen.events.size() >= 2);
            }
            assertEquals(List.of("first", "second"), seen.messages());
        }
    }

    @ParameterizedTest
    @MethodSource("buses")
    void ownerAndClient_roundTrip(SessionBus bus)
    {
        try (bus)
        {
            McpSession session = session("credential:ab12").withProtocolVersion("2025-11-25").withClient("{\"capabilities\":{}}");
            bus.create(session);
            assertEquals(Optional.of(session), bus.find(session.id()));
        }
    }

    @ParameterizedTest
    @MethodSource("buses")
    void subscribingAfterTheLastEvent_deliversOnlyNewOnes(SessionBus bus) throws Exception
    {
        try (bus)
        {
            McpSession session = created(bus, "address:1");
            assertNull(bus.lastEventId(session.id()), "no events yet");
            bus.append(session.id(), "k1", "old-1");
            String newest = bus.append(session.id(), "k2", "old-2");
            assertEquals(newest, bus.lastEventId(session.id()));

            Recorder seen = new Recorder();
            try (SessionBus.Subscription ignored = bus.subscribe(session.id(), bus.lastEventId(session.id()), seen))
            {
                bus.append(session.id(), "k3", "new");
                await().until(() -> !seen.events.isEmpty());
                assertEquals(List.of("new"), seen.messages());
            }
        }
    }

    /** Appends race each other; the subscriber sees each once, in the log's order, as a later replay does. */
    @ParameterizedTest
    @MethodSource("buses")
    void concurrentAppends_reachTheSubscriberOnceInLogOrder(SessionBus bus) throws Exception
    {
        try (bus)
        {
            McpSession session = created(bus, "address:3");
            bus.append(session.id(), "k0", "before");
            Recorder live = new Recorder();
            int threads = 4;
            int each = 20;
            try (SessionBus.Subscription ignored = bus.subscribe(session.id(), null, live))
            {
                ExecutorService appenders = Executors.newFixedThreadPool(threads);
                for (int t = 0; t < threads; t++)
                {
                    int thread = t;
                    appenders.execute(() ->
                    {
                        for (int i = 0; i < each; i++)
                            bus.append(session.id(), thread + "-" + i, "m" + thread + "-" + i);
                    });
                }
                appenders.shutdown();
                assertTrue(appenders.awaitTermination(30, TimeUnit.SECONDS));
                await().until(() -> live.events.size() >= 1 + threads * each);
            }
            Recorder replay = new Recorder();
            try (SessionBus.Subscription ignored = bus.subscribe(session.id(), null, replay))
            {
                await().until(() -> replay.events.size() >= 1 + threads * each);
            }
            assertEquals(replay.events, live.events);
            assertEquals(1 + threads * each, live.messages().stream().distinct().count(), "each message once");
        }
    }

    /** A message too large to travel with its wake-up is read from the log, in its place. */
    @ParameterizedTest
    @MethodSource("buses")
    void largeMessage_isDeliveredInOrder(SessionBus bus)
    {
        try (bus)
        {
            McpSession session = created(bus, "address:4");
            Recorder live = new Recorder();
            String large = "x".repeat(200_000);
            try (SessionBus.Subscription ignored = bus.subscribe(session.id(), null, live))
            {
                bus.append(session.id(), "k1", "small");
                bus.append(session.id(), "k2", large);
                bus.append(session.id(), "k3", "after");
                await().until(() -> live.events.size() >= 3);
            }
            assertEquals(List.of("small", large, "after"), live.messages());
        }
    }

    /**
     * The attack: a client whose calls have large answers (an echo of its own arguments), and which
     * reads none of them, filled Redis with its session's log up to its count of events, 4 MiB each.
     * The log keeps its bytes too: the oldest go, and the newest stays whatever its size.
     */
    @ParameterizedTest
    @MethodSource("buses")
    void aSessionsLog_keepsItsBytes_droppingTheOldest_keepingTheNewest(SessionBus bus)
    {
        try (bus)
        {
            McpSession session = created(bus, "address:5");
            int size = 300_000;
            for (int i = 0; i < 5; i++)
                bus.append(session.id(), "k" + i, Integer.toString(i).repeat(size));

            Recorder replay = new Recorder();
            try (SessionBus.Subscription ignored = bus.subscribe(session.id(), null, replay))
            {
                await().until(() -> replay.events.size() >= 3);
            }
            assertEquals(List.of("2", "3", "4"), replay.messages().stream().map(m -> m.substring(0, 1)).toList(),
                "what fits in " + LOG_BYTES + " bytes, newest last");

            String huge = "h".repeat((int)LOG_BYTES * 2);
            bus.append(session.id(), "k-huge", huge);
            Recorder alone = new Recorder();
            try (SessionBus.Subscription ignored = bus.subscribe(session.id(), null, alone))
            {
                await().until(() -> alone.events.size() >= 1);
            }
            assertEquals(List.of(huge), alone.messages(), "the newest stays, alone");
            bus.append(session.id(), "k-small", "small");
            Recorder after = new Recorder();
            try (SessionBus.Subscription ignored = bus.subscribe(session.id(), null, after))
            {
                await().until(() -> after.events.size() >= 1);
            }
            assertEquals(List.of("small"), after.messages(), "and goes when the next one comes");
        }
    }

    /**
     * The trace context of the request a message answers travels with it, whether the subscriber
     * gets it with the wake-up, reads it from the log (a large message, a replay) or it has none.
     */
    @ParameterizedTest
    @MethodSource("buses")
    void traceparent_travelsWithItsMessage_liveAndOnReplay(SessionBus bus)
    {
        String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        String large = "y".repeat(200_000);
        try (bus)
        {
            McpSession session = created(bus, "address:7");
            Recorder live = new Recorder();
            try (SessionBus.Subscription ignored = bus.subscribe(session.id(), null, live))
            {
                bus.append(session.id(), "k1", "traced", traceparent);
                bus.append(session.id(), "k2", "untraced");
                bus.append(session.id(), "k3", large, traceparent);
                await().until(() -> live.events.size() >= 3);
            }
            Recorder replay = new Recorder();
            try (SessionBus.Subscription ignored = bus.subscribe(session.id(), null, replay))
            {
                await().until(() -> replay.events.size() >= 3);
            }
            for (Recorder seen : List.of(live, replay))
            {
                assertEquals(List.of("traced", "untraced", large), seen.messages());
                assertEquals(traceparent, seen.events.get(0).traceparent());
                assertNull(seen.events.get(1).traceparent());
                assertEquals(traceparent, seen.events.get(2).traceparent());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("buses")
    void appendToAnEndedSession_isRefused(SessionBus bus)
    {
        try (bus)
        {
            McpSession session = created(bus, "address:5");
            bus.delete(session.id());
            assertThrows(IllegalStateException.class, () -> bus.append(session.id(), "k", "m"));
        }
    }

    /** A session renewed past its TTL still counts against its client's limit: the client's count is renewed with it. */
    @ParameterizedTest
    @MethodSource("shortLivedBuses")
    void touchedSession_stillCountsForItsClient_pastTheTtl(SessionBus bus)
    {
        try (bus)
        {
            String client = "10.2.0." + ++sequence;
            McpSession kept = session("credential:a");
            assertTrue(bus.create(kept, client, 1));
            await().during(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(5)).until(() ->
            {
                bus.touch(kept.id());
                return bus.find(kept.id()).isPresent();
            });

            assertFalse(bus.create(session("credential:b"), client, 1), "the client's live session no longer counted");
            bus.delete(kept.id());
            assertTrue(bus.create(session("credential:b"), client, 1));
        }
    }

    /** Renewals need not be waited for, but they must land: a session in use outlives its TTL, an idle one does not. */
    @ParameterizedTest
    @MethodSource("shortLivedBuses")
    void touchedSession_outlivesItsTtl_untilLeftIdle(SessionBus bus)
    {
        try (bus)
        {
            McpSession session = created(bus, "address:6");
            bus.append(session.id(), "k", "m");
            await().during(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(5)).until(() ->
            {
                bus.touch(session.id());
                return bus.find(session.id()).isPresent() && bus.lastEventId(session.id()) != null;
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> bus.find(session.id()).isEmpty());
        }
    }
}
