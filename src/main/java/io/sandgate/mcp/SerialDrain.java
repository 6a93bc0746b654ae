package io.sandgate.mcp;

import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The delivery side of a {@link SessionBus} subscription, shared by both stores: any number of
 * wake-ups (a notification, a poll) lead to one drain at a time that reads the events after the
 * last one delivered and hands them over in order. Tracking the last delivered id is what makes
 * delivery exactly-once whatever the number of wake-ups.
 *
 * <p>A store that knows the event it just appended hands it over with {@link #push}, together with
 * the id of the event before it: when that is the last one delivered, the event is the next one and
 * is delivered without reading the log (for Redis, two round trips fewer per message). Anything
 * else (a push lost or out of order, a replay, a poll) falls back to reading the log, which stays
 * the only authority on what comes next.</p>
 *
 * <p>A listener that takes no more for now ({@link SessionBus.Listener#ready}, a client not
 * reading) stops the drain, which holds no thread meanwhile; it is woken when the listener is ready
 * again and reads on from the last delivered.</p>
 */
public abstract class SerialDrain implements SessionBus.Subscription
{
    private static final Logger LOG = LoggerFactory.getLogger(SerialDrain.class);
    /**
     * Pushed events waiting for a slow client, at most, and their characters: beyond, they are
     * dropped and the drain reads the log instead, which is bounded by the replay buffer. A client
     * that stops reading a chatty session would otherwise keep a copy of its log in the heap.
     */
    private static final int MAX_PUSHED = 256;
    private static final long MAX_PUSHED_CHARS = 1 << 20;

    /**
     * One retained event.
     *
     * @param traceparent the trace context it was appended under, or null
     */
    public record Event(String id, String message, String traceparent)
    {
        /** An event appended outside any trace. */
        public Event(String id, String message)
        {
            this(id, message, null);
        }
    }

    /** An event handed over as it was appended; {@code previousId} is null for a log's first. */
    private record Pushed(String previousId, Event event)
    {
    }

    private final Executor executor;
    private final SessionBus.Listener listener;
    private final AtomicInteger wakeups = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Queue<Pushed> pushed = new ConcurrentLinkedQueue<>();
    private final AtomicInteger pushedCount = new AtomicInteger();
    private final AtomicLong pushedChars = new AtomicLong();
    /** Whether the next drain must read the log: set by every wake-up that brings no event. */
    private final AtomicBoolean readNeeded = new AtomicBoolean();
    private volatile String lastDelivered;

    protected SerialDrain(Executor executor, String afterEventId, SessionBus.Listener listener)
    {
        this.executor = executor;
        this.lastDelivered = afterEventId;
        this.listener = listener;
    }

    /** Events strictly after {@code afterId} (all retained when null), oldest first, at most a batch. */
    protected abstract List<Event> readAfter(String afterId);

    /** Whether the session still exists. */
    protected abstract boolean sessionExists();

    /** Releases what the subscription holds (listeners, registrations). */
    protected abstract void release();

    /**
     * The id of the last event delivered, or of the one the subscription started after; null when
     * neither. A store that checks for news compares it with its log's newest.
     */
    protected final String lastDelivered()
    {
        return lastDelivered;
    }

    /** Something may have been appended: the drain reads the log. */
    public void wake()
    {
        readNeeded.set(true);
        schedule();
    }

    /**
     * An event was appended: delivered as it is when it follows the last one delivered, else the
     * drain reads the log.
     *
     * @param previousId the id of the event before it in the log, null when it is the first
     */
    public void push(String previousId, Event event)
    {
        int chars = event.message().length();
        if (pushedCount.incrementAndGet() > MAX_PUSHED | pushedChars.addAndGet(chars) > MAX_PUSHED_CHARS)
        {
            pushedCount.decrementAndGet();
            pushedChars.addAndGet(-chars);
            wake();
            return;
        }
        pushed.add(new Pushed(previousId, event));
        schedule();
    }

    private void schedule()
    {
        if (closed.get())
            return;
        if (wakeups.getAndIncrement() == 0)
            executor.execute(this::drain);
    }

    private void drain()
    {
        do
        {
            try
            {
                deliverPushed();
                if (readNeeded.getAndSet(false))
                    deliverRead();
            }
            catch (RuntimeException x)
            {
                // The store is unreachable or the listener's client went away: the next wake-up
                // (a poll at the latest) reads again from the last delivered id.
                readNeeded.set(true);
                LOG.debug("MCP subscription drain failed", x);
            }
        }
        while (wakeups.decrementAndGet() > 0 && !closed.get());
    }

    /**
     * Delivers the pushed events that follow on from the last delivered; any other means reading the
     * log. Stops, leaving the rest pushed, while the listener takes no more.
     */
    private void deliverPushed()
    {
        Pushed next;
        while (!closed.get() && (next = pushed.peek()) != null)
        {
            boolean follows = Objects.equals(next.previousId(), lastDelivered);
            if (follows && !listener.ready(this::schedule))
                return;
            pushed.poll();
            pushedCount.decrementAndGet();
            pushedChars.addAndGet(-next.event().message().length());
            if (follows)
                deliver(next.event());
            else
                readNeeded.set(true);
        }
    }

    private void deliverRead()
    {
        // Nothing is read for a listener that takes nothing now: a stuck client's session may
        // go on appending, and each wake-up would read a batch for nothing.
        if (!listener.ready(this::schedule))
        {
            readNeeded.set(true);
            return;
        }
        if (!sessionExists())
        {
            end();
            return;
        }
        List<Event> events;
        while (!closed.get() && !(events = readAfter(lastDelivered)).isEmpty())
        {
            for (Event event : events)
            {
                if (closed.get())
                    return;
                // Not taken now: the drain when it is reads on from the last delivered.
                if (!listener.ready(this::schedule))
                {
                    readNeeded.set(true);
                    return;
                }
                deliver(event);
            }
        }
    }

    private void deliver(Event event)
    {
        listener.onEvent(event.id(), event.message(), event.traceparent());
        lastDelivered = event.id();
    }

    private void end()
    {
        if (closed.compareAndSet(false, true))
        {
            release();
            listener.onEnd();
        }
    }

    public void ended()
    {
        executor.execute(this::end);
    }

    @Override
    public void close()
    {
        if (closed.compareAndSet(false, true))
            release();
    }
}
