package io.sandgate.mcp;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.core.Schedulers;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.tracing.Tracing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Upstream messages wait out an unreachable store on the timer: the thread that relays one goes
 * back to its work at once, and the message is stored, once, when the store is back.
 */
class SessionRelayTest
{
    private final Schedulers schedulers = Schedulers.create();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FlakyStore store = new FlakyStore(new MemorySessionBus(Duration.ofMinutes(1), 100, 1 << 20, 1 << 22, schedulers));
    private final SessionRelay relay = new SessionRelay(store, schedulers, Tracing.OFF, registry, null);

    @AfterEach
    void close()
    {
        store.close();
        schedulers.close();
    }

    @Test
    void relay_whileTheStoreIsUnreachable_returnsAtOnce_andStoresOnceItIsBack() throws Exception
    {
        McpSession session = session();
        store.down = true;
        CompletableFuture<Void> stored = relay.relay(session.id(), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
        assertFalse(stored.isDone(), "the relaying thread does not wait for the store");
        await().atMost(Duration.ofSeconds(5)).until(() -> store.refused.get() >= 3);
        assertFalse(stored.isDone());

        store.down = false;
        await().atMost(Duration.ofSeconds(5)).until(stored::isDone);
        assertEquals(List.of("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"), log(session, 1));
        assertEquals(1, registry.counter("sandgate.mcp.messages.relayed").count());
        assertEquals(0, registry.counter("sandgate.mcp.messages.lost").count());
        assertEquals(1, store.keys.stream().distinct().count(), "every attempt offers the message under one key");
    }

    @Test
    void relay_toASessionThatEnded_isDone_andNothingIsLost()
    {
        McpSession session = session();
        store.delete(session.id());
        assertTrue(relay.relay(session.id(), "{}").isDone());
        assertEquals(0, registry.counter("sandgate.mcp.messages.lost").count());
    }

    @Test
    void pump_ofMessagesWhileTheStoreBlinks_keepsTheirOrder()
    {
        McpSession session = session();
        store.down = true;
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int i = 0; i < 5; i++)
        {
            String message = "{\"id\":" + i + "}";
            chain = chain.thenCompose(ignored -> relay.relay(session.id(), message));
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> store.refused.get() >= 2);
        store.down = false;
        CompletableFuture<Void> all = chain;
        await().atMost(Duration.ofSeconds(5)).until(all::isDone);
        assertEquals(List.of("{\"id\":0}", "{\"id\":1}", "{\"id\":2}", "{\"id\":3}", "{\"id\":4}"), log(session, 5));
    }

    private McpSession session()
    {
        McpSession session = McpSession.create(McpSession.newId(), "tools", "address:192.0.2.7");
        store.create(session);
        return session;
    }

    /** The session's log, once it holds {@code count} messages. */
    private List<String> log(McpSession session, int count)
    {
        List<String> messages = new CopyOnWriteArrayList<>();
        try (SessionBus.Subscription ignored = store.subscribe(session.id(), null, new SessionBus.Listener()
        {
            @Override
            public void onEvent(String eventId, String message)
            {
                messages.add(message);
            }

            @Override
            public void onEnd()
            {
            }
        }))
        {
            await().atMost(Duration.ofSeconds(5)).until(() -> messages.size() >= count);
            return List.copyOf(messages);
        }
    }

    /** The memory store, whose appends fail as a shared store's do while it is unreachable. */
    private static final class FlakyStore implements SessionBus
    {
        private final SessionBus store;
        private final AtomicInteger refused = new AtomicInteger();
        private final List<String> keys = new CopyOnWriteArrayList<>();
        volatile boolean down;

        FlakyStore(SessionBus store)
        {
            this.store = store;
        }

        @Override
        public String append(String sessionId, String key, String message, String traceparent)
        {
            keys.add(key);
            if (down)
            {
                refused.incrementAndGet();
                throw new StoreUnavailableException("store unreachable", null);
            }
            return store.append(sessionId, key, message, traceparent);
        }

        @Override
        public void create(McpSession session)
        {
            store.create(session);
        }

        @Override
        public boolean create(McpSession session, String client, int limit)
        {
            return store.create(session, client, limit);
        }

        @Override
        public String lastEventId(String sessionId)
        {
            return store.lastEventId(sessionId);
        }

        @Override
        public boolean isEventId(String id)
        {
            return store.isEventId(id);
        }

        @Override
        public Optional<McpSession> find(String id)
        {
            return store.find(id);
        }

        @Override
        public List<McpSession> list(int limit)
        {
            return store.list(limit);
        }

        @Override
        public void update(McpSession session)
        {
            store.update(session);
        }

        @Override
        public void touch(String id)
        {
            store.touch(id);
        }

        @Override
        public void delete(String id)
        {
            store.delete(id);
        }

        @Override
        public Subscription subscribe(String sessionId, String afterEventId, Listener listener)
        {
            return store.subscribe(sessionId, afterEventId, listener);
        }

        @Override
        public void close()
        {
            store.close();
        }
    }
}
