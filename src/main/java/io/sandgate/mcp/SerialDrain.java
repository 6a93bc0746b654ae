package io.sandgate.mcp;

import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The delivery side of a {@link SessionBus} subscription, shared by both stores: any number of
 * wake-ups (a notification, a poll) lead to one drain at a time that reads the events after the
 * last one delivered and hands them over in order. Tracking the last delivered id is what makes
 * delivery exactly-once whatever the number of wake-ups.
 */
public abstract class SerialDrain implements SessionBus.Subscription
{
    private static final Logger LOG = LoggerFactory.getLogger(SerialDrain.class);

    /** One retained event. */
    public record Event(String id, String message)
    {
    }

    private final Executor executor;
    private final SessionBus.Listener listener;
    private final AtomicInteger wakeups = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();
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

    public void wake()
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
                        listener.onEvent(event.id(), event.message());
                        lastDelivered = event.id();
                    }
                }
            }
            catch (RuntimeException x)
            {
                // The store is unreachable or the listener's client went away: the next wake-up
                // (a poll at the latest) tries again from the last delivered id.
                LOG.debug("MCP subscription drain failed", x);
            }
        }
        while (wakeups.decrementAndGet() > 0 && !closed.get());
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
