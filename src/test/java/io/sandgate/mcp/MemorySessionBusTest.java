package io.sandgate.mcp;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.sandgate.core.Schedulers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The memory store keeps sessions' logs in the gateway's heap: one client holding many sessions,
 * each filled to its own bound, could take the heap (256 sessions of 16 MiB by default) and every
 * face with it. A client's logs share a bound of their own.
 */
class MemorySessionBusTest
{
    private static final long SESSION_BYTES = 1 << 20;
    private static final long CLIENT_BYTES = 2 << 20;
    private static final String MESSAGE = "x".repeat(100_000);

    private static int sequence;

    private final Schedulers schedulers = Schedulers.create();

    @AfterEach
    void close()
    {
        schedulers.close();
    }

    @Test
    void oneClientsSessions_keepTheirShareTogether_andAnotherClientKeepsWhatItsOwnLogHolds()
    {
        try (MemorySessionBus bus = new MemorySessionBus(Duration.ofMinutes(1), 1000, SESSION_BYTES, CLIENT_BYTES, schedulers))
        {
            List<McpSession> hoarder = sessions(bus, "192.0.2.1", 8);
            List<McpSession> other = sessions(bus, "192.0.2.2", 1);
            for (int i = 0; i < 20; i++)
            {
                for (McpSession session : hoarder)
                    bus.append(session.id(), session.id() + i, MESSAGE + i, null);
                bus.append(other.get(0).id(), "o" + i, MESSAGE + i, null);
            }

            // Each session's own bound alone would have let this client keep 8 MB.
            long held = 0;
            for (McpSession session : hoarder)
            {
                List<String> kept = replay(bus, session);
                assertEquals(MESSAGE + 19, kept.get(kept.size() - 1), "each log keeps its newest");
                held += kept.stream().mapToLong(String::length).sum();
            }
            assertTrue(held <= CLIENT_BYTES && held > CLIENT_BYTES - 2 * MESSAGE.length(), "the client's logs hold " + held);
            assertEquals(held, bus.clientChars("192.0.2.1"), "counted as held");
            assertEquals(10, replay(bus, other.get(0)).size(), "the other client's log keeps what fits its own bound");

            hoarder.forEach(session -> bus.delete(session.id()));
            assertEquals(0, bus.clientChars("192.0.2.1"), "a session's log counts no more once it is gone");
        }
    }

    private static List<McpSession> sessions(MemorySessionBus bus, String client, int count)
    {
        List<McpSession> sessions = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            McpSession session = McpSession.create(String.format("%032x", ++sequence), "tools", "owner");
            assertTrue(bus.create(session, client, 256));
            sessions.add(session);
        }
        return sessions;
    }

    /** The messages a client resuming from the start gets. */
    private static List<String> replay(MemorySessionBus bus, McpSession session)
    {
        List<String> messages = new CopyOnWriteArrayList<>();
        String last = bus.lastEventId(session.id());
        List<String> ids = new CopyOnWriteArrayList<>();
        try (SessionBus.Subscription ignored = bus.subscribe(session.id(), null, new SessionBus.Listener()
        {
            @Override
            public void onEvent(String eventId, String message)
            {
                ids.add(eventId);
                messages.add(message);
            }

            @Override
            public void onEnd()
            {
            }
        }))
        {
            await().until(() -> ids.contains(last));
        }
        return messages;
    }
}
