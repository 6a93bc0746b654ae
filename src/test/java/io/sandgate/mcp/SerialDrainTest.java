package io.sandgate.mcp;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A listener that takes no more for now (a client not reading) stops the drain: nothing more is
 * delivered, the log is not read for it, and once it is ready again it gets the rest in order,
 * each event once.
 */
class SerialDrainTest
{
    private final List<SerialDrain.Event> log = new ArrayList<>();
    private final AtomicInteger reads = new AtomicInteger();
    private final List<String> delivered = new ArrayList<>();
    private int room;
    private Runnable whenReady;

    private final SessionBus.Listener listener = new SessionBus.Listener()
    {
        @Override
        public void onEvent(String eventId, String message)
        {
            delivered.add(eventId);
            room--;
        }

        @Override
        public void onEnd()
        {
        }

        @Override
        public boolean ready(Runnable whenReady)
        {
            if (room > 0)
                return true;
            SerialDrainTest.this.whenReady = whenReady;
            return false;
        }
    };

    /** On the calling thread, the log in {@link #log}. */
    private final SerialDrain drain = new SerialDrain(Runnable::run, null, listener)
    {
        @Override
        protected List<Event> readAfter(String afterId)
        {
            reads.incrementAndGet();
            int from = afterId == null ? 0 : Integer.parseInt(afterId);
            return List.copyOf(log.subList(Math.min(from, log.size()), Math.min(from + 4, log.size())));
        }

        @Override
        protected boolean sessionExists()
        {
            return true;
        }

        @Override
        protected void release()
        {
        }
    };

    private void append(int count)
    {
        for (int i = 0; i < count; i++)
        {
            String id = Integer.toString(log.size() + 1);
            log.add(new SerialDrain.Event(id, "m" + id));
        }
    }

    @Test
    void aListenerWithNoRoom_stopsDelivery_withoutReadingTheLog_andGetsTheRestInOrderWhenReady()
    {
        append(10);
        room = 3;

        drain.wake();

        assertEquals(List.of("1", "2", "3"), delivered);
        int readsWhileFull = reads.get();
        append(1);
        drain.push("10", new SerialDrain.Event("11", "m11"));
        for (int i = 0; i < 5; i++)
            drain.wake();
        assertEquals(List.of("1", "2", "3"), delivered);
        assertEquals(readsWhileFull, reads.get(), "the log read for a listener with no room");

        room = 100;
        assertNotNull(whenReady);
        whenReady.run();

        assertEquals(List.of("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"), delivered);
    }

    @Test
    void aPushThatFollowsOn_waitsForRoom_andIsDeliveredOnce()
    {
        append(2);
        room = 2;
        drain.wake();
        append(1);

        drain.push("2", new SerialDrain.Event("3", "m3"));
        assertEquals(List.of("1", "2"), delivered);
        room = 5;
        whenReady.run();

        assertEquals(List.of("1", "2", "3"), delivered);
    }

    @Test
    void pushesWaitingForRoom_keepAMebicharacterAtMost_theRestIsReadFromTheLog()
    {
        append(1);
        room = 1;
        drain.wake();
        String large = "x".repeat(600_000);
        for (int i = 2; i <= 4; i++)
        {
            String id = Integer.toString(i);
            log.add(new SerialDrain.Event(id, large));
            drain.push(Integer.toString(i - 1), new SerialDrain.Event(id, large));
        }
        int readsBefore = reads.get();

        room = 10;
        whenReady.run();

        assertEquals(List.of("1", "2", "3", "4"), delivered);
        assertTrue(reads.get() > readsBefore, "the pushes past the bound were read from the log");
    }
}
