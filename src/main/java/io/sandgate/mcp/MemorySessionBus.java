package io.sandgate.mcp;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.sandgate.core.Schedulers;


/** Sessions and their event logs in this process: one replica serves every transport fully. */
public final class MemorySessionBus implements SessionBus
{
    private static final int BATCH = 256;
    /**
     * Event ids are {@code sg-<n>}, not bare numbers: a client's {@code Last-Event-ID} may be an
     * upstream's (one that numbers its events), which must go back to the upstream, and the two
     * must not be taken for each other.
     */
    private static final String ID_PREFIX = "sg-";

    private final Duration ttl;
    private final int capacity;
    /** Characters of messages a log keeps at most, besides its newest message. */
    private final long capacityChars;
    /** Characters of messages the logs of one client's sessions keep together, besides each one's newest. */
    private final long clientCapacityChars;
    /** Characters held in the logs of each client's sessions; a client holding none has no entry. */
    private final Map<String, Long> clientChars = new ConcurrentHashMap<>();
    private final Map<String, Log> sessions = new ConcurrentHashMap<>();
    /** Deliveries write to client streams, which may block. */
    private final Executor delivery;
    private final ScheduledFuture<?> sweeper;

    /**
     * @param capacity events a session's log keeps
     * @param capacityBytes bytes of messages a session's log keeps (counted as characters: JSON is
     *        mostly ASCII), besides its newest message
     * @param clientCapacityBytes bytes of messages the logs of one client's sessions keep together,
     *        besides each one's newest: in the heap, one client's many sessions must not take it all
     */
    public MemorySessionBus(Duration ttl, int capacity, long capacityBytes, long clientCapacityBytes, Schedulers schedulers)
    {
        this.ttl = ttl;
        this.capacity = capacity;
        this.capacityChars = capacityBytes;
        this.clientCapacityChars = clientCapacityBytes;
        this.delivery = schedulers.workers();
        this.sweeper = schedulers.timer().scheduleWithFixedDelay(this::expire, 1, 1, TimeUnit.SECONDS);
    }

    /** One session: its record, its bounded log and its subscribers. */
    private final class Log
    {
        volatile McpSession session;
        /** Whom the session counts for, when it was created under a limit. */
        final String client;
        volatile long expiresAt;
        final ArrayDeque<SerialDrain.Event> events = new ArrayDeque<>();
        /** Characters of the messages in {@link #events}. */
        long chars;
        /** Whether the session is gone and its characters no longer count for its client. */
        boolean released;
        final Set<SerialDrain> subscribers = ConcurrentHashMap.newKeySet();
        long sequence;

        Log(McpSession session, String client)
        {
            this.session = session;
            this.client = client;
            touch();
        }

        void touch()
        {
            expiresAt = System.nanoTime() + ttl.toNanos();
        }

        /** Appends and hands the event to the subscribers, under the lock so that they see the log's order. */
        synchronized String append(String message, String traceparent)
        {
            String previous = lastId();
            SerialDrain.Event event = new SerialDrain.Event(ID_PREFIX + ++sequence, message, traceparent);
            events.addLast(event);
            long before = chars;
            chars += message.length();
            while (events.size() > 1 && (events.size() > capacity || chars > capacityChars))
                chars -= events.removeFirst().message().length();
            if (client != null && !released)
            {
                // Past the client's share, the log being written to gives up its oldest first: the
                // client's other logs are left as they are, and the client's own history goes.
                long held = charge(client, chars - before);
                while (events.size() > 1 && held > clientCapacityChars)
                {
                    long freed = events.removeFirst().message().length();
                    chars -= freed;
                    held = charge(client, -freed);
                }
            }
            subscribers.forEach(subscriber -> subscriber.push(previous, event));
            return event.id();
        }

        /** Gives the log's characters back to its client's count, once it is gone; an append racing with that counts no more. */
        synchronized void release()
        {
            if (client != null && !released)
                charge(client, -chars);
            released = true;
        }

        synchronized String lastId()
        {
            return sequence == 0 ? null : ID_PREFIX + sequence;
        }

        synchronized List<SerialDrain.Event> after(String afterId)
        {
            long after = afterId == null ? 0 : parse(afterId);
            List<SerialDrain.Event> result = new ArrayList<>();
            for (SerialDrain.Event event : events)
            {
                if (parse(event.id()) > after)
                {
                    result.add(event);
                    if (result.size() >= BATCH)
                        break;
                }
            }
            return result;
        }
    }

    /** Adds to the characters the client's logs hold, and returns their sum. */
    private long charge(String client, long delta)
    {
        Long held = clientChars.compute(client, (key, value) ->
        {
            long sum = (value == null ? 0 : value) + delta;
            return sum <= 0 ? null : sum;
        });
        return held == null ? 0 : held;
    }

    /** The characters the logs of a client's sessions hold. */
    long clientChars(String client)
    {
        return clientChars.getOrDefault(client, 0L);
    }

    /** The sequence number of an id of this bus; 0, the start, for any other. */
    private static long parse(String id)
    {
        if (!id.startsWith(ID_PREFIX))
            return 0;
        try
        {
            return Long.parseLong(id.substring(ID_PREFIX.length()));
        }
        catch (NumberFormatException x)
        {
            return 0;
        }
    }

    @Override
    public void create(McpSession session)
    {
        sessions.put(session.id(), new Log(session, null));
    }

    @Override
    public synchronized boolean create(McpSession session, String client, int limit)
    {
        long held = sessions.values().stream().filter(log -> client.equals(log.client)).limit(limit).count();
        if (held >= limit)
            return false;
        sessions.put(session.id(), new Log(session, client));
        return true;
    }

    @Override
    public boolean isEventId(String id)
    {
        return id.matches(ID_PREFIX + "\\d{1,18}");
    }

    @Override
    public String lastEventId(String sessionId)
    {
        Log log = sessions.get(sessionId);
        return log == null ? null : log.lastId();
    }

    @Override
    public List<McpSession> list(int limit)
    {
        List<McpSession> result = new ArrayList<>();
        for (Log log : sessions.values())
        {
            if (result.size() >= limit)
                break;
            result.add(log.session);
        }
        return result;
    }

    @Override
    public Optional<McpSession> find(String id)
    {
        Log log = sessions.get(id);
        return log == null ? Optional.empty() : Optional.of(log.session);
    }

    @Override
    public void update(McpSession session)
    {
        Log log = sessions.get(session.id());
        if (log != null)
        {
            log.session = session;
            log.touch();
        }
    }

    @Override
    public void touch(String id)
    {
        Log log = sessions.get(id);
        if (log != null)
            log.touch();
    }

    @Override
    public void delete(String id)
    {
        Log log = sessions.remove(id);
        if (log != null)
        {
            log.release();
            log.subscribers.forEach(SerialDrain::ended);
        }
    }

    @Override
    public String append(String sessionId, String key, String message, String traceparent)
    {
        Log log = sessions.get(sessionId);
        if (log == null)
            throw new IllegalStateException("no session " + sessionId);
        return log.append(message, traceparent);
    }

    @Override
    public Subscription subscribe(String sessionId, String afterEventId, Listener listener)
    {
        Log log = sessions.get(sessionId);
        SerialDrain subscription = new SerialDrain(delivery, afterEventId, listener)
        {
            @Override
            protected List<Event> readAfter(String afterId)
            {
                return log == null ? List.of() : log.after(afterId);
            }

            @Override
            protected boolean sessionExists()
            {
                return log != null && sessions.get(sessionId) == log;
            }

            @Override
            protected void release()
            {
                if (log != null)
                    log.subscribers.remove(this);
            }
        };
        if (log != null)
            log.subscribers.add(subscription);
        subscription.wake();
        return subscription;
    }

    private void expire()
    {
        long now = System.nanoTime();
        sessions.forEach((id, log) ->
        {
            if (now - log.expiresAt > 0)
                delete(id);
        });
    }

    @Override
    public void close()
    {
        sweeper.cancel(false);
    }
}
