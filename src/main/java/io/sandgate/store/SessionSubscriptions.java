package io.sandgate.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.sandgate.core.Schedulers;
import io.sandgate.mcp.SerialDrain;
import io.sandgate.mcp.SessionBus;
import org.redisson.api.RBatch;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.api.listener.BaseStatusListener;
import org.redisson.api.listener.MessageListener;
import org.redisson.api.listener.StatusListener;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The delivery side of {@link RedisSessionBus}: the client streams this replica holds, each a drain
 * woken through its session's channel and reading the session's log, which stays the authority.
 *
 * <p>Wake-ups are lost where pub/sub is: a connection that drops (a blink, a restart, a subscriber
 * cut off for a full output buffer) misses what is published until it has subscribed again. So
 * every subscribe Redis confirms, a reconnect's included, wakes the session to read its log, and a
 * subscribe that failed is tried again within a second. A slow safety poll remains for what nothing
 * notices; it looks at every session in pipelined batches, two cheap commands each that send
 * nothing back for an idle session, and wakes only those with something to read.</p>
 */
final class SessionSubscriptions implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(SessionSubscriptions.class);
    /** Events one read of a log takes at most. */
    private static final int BATCH = 256;
    /** Sessions looked at in one pipelined batch. */
    private static final int CHECK_BATCH = 1000;
    /**
     * How soon a subscribe or a read that failed is tried again, at most: delivery after Redis
     * comes back must not wait for the safety poll.
     */
    private static final long REPAIR_MILLIS = 1000;

    private final RedissonClient redisson;
    private final SessionLayout layout;
    /** Deliveries read Redis and write to client streams, both of which may block. */
    private final Executor delivery;
    private final long pollNanos;
    private final ScheduledFuture<?> ticker;
    private final Set<Listening> subscriptions = ConcurrentHashMap.newKeySet();
    /** Set with a subscription's {@code broken}: the next tick repairs what is broken. */
    private final AtomicBoolean repairNeeded = new AtomicBoolean();
    private final AtomicBoolean checking = new AtomicBoolean();
    private volatile long lastPollNanos = System.nanoTime();

    SessionSubscriptions(RedissonClient redisson, SessionLayout layout, Duration pollInterval, Schedulers schedulers)
    {
        this.redisson = redisson;
        this.layout = layout;
        this.delivery = schedulers.workers();
        this.pollNanos = pollInterval.toNanos();
        long tick = Math.min(pollInterval.toMillis(), REPAIR_MILLIS);
        // Deciding whether to look stays on the timer; looking, which waits for Redis, goes to a worker.
        this.ticker = schedulers.timer().scheduleWithFixedDelay(this::tick, tick, tick, TimeUnit.MILLISECONDS);
    }

    /** @param afterEventId a stream id ({@link SessionLayout#validId}), or null to deliver all that is retained */
    SessionBus.Subscription subscribe(String sessionId, String afterEventId, SessionBus.Listener listener)
    {
        Listening subscription = new Listening(sessionId, afterEventId, listener);
        subscriptions.add(subscription);
        // The caller's thread does not wait for Redis, which may hang: the drain first reads the
        // log once the listeners are in, so what was published before is read then. A failure to
        // subscribe marks the subscription broken, and the next tick subscribes again and wakes it.
        subscription.listen().whenComplete((done, failure) -> subscription.wake());
        return subscription;
    }

    /**
     * One stream's subscription: its drain and its two listeners on the session's channel, one for
     * wake-ups, one told of every subscribe Redis confirms. After a reconnect or a failover Redisson
     * subscribes again by itself, and what was published meanwhile reached no one: that confirmation
     * wakes the drain to read the log.
     */
    private final class Listening extends SerialDrain
    {
        private final String sessionId;
        private final RTopic channel;
        private final MessageListener<String> wakeUp = (topic, message) -> SessionLayout.onWakeUp(this, message);
        private final StatusListener resubscribed = new BaseStatusListener()
        {
            @Override
            public void onSubscribe(String name)
            {
                wake();
            }
        };
        /** Registrations of the two listeners, null until made; guarded by this. */
        private Integer wakeUpId;
        private Integer resubscribedId;
        private boolean attempting;
        private boolean released;
        /**
         * A read or a subscribe failed: what a spent wake-up announced may be unread, or no wake-up
         * comes at all. Repaired by the next tick that finds Redis answering.
         */
        private final AtomicBoolean broken = new AtomicBoolean();

        Listening(String sessionId, String afterEventId, SessionBus.Listener listener)
        {
            super(delivery, afterEventId, listener);
            this.sessionId = sessionId;
            this.channel = layout.channel(sessionId);
        }

        /**
         * Adds whichever listener is missing, wake-ups first; completes at once when both are there,
         * the subscription has ended or an attempt is under way. A failure asks the next tick to try
         * again. What was published before it completes was not heard: the caller wakes the drain.
         */
        CompletableFuture<Void> listen()
        {
            boolean wakeUpMissing;
            synchronized (this)
            {
                if (released || attempting || resubscribedId != null)
                    return CompletableFuture.completedFuture(null);
                attempting = true;
                wakeUpMissing = wakeUpId == null;
            }
            CompletableFuture<Void> wakeUps = wakeUpMissing
                ? channel.addListenerAsync(String.class, wakeUp).toCompletableFuture().thenAccept(id -> registered(id, true))
                : CompletableFuture.completedFuture(null);
            return wakeUps.thenCompose(done -> channel.addListenerAsync(resubscribed).toCompletableFuture())
                .thenAccept(id -> registered(id, false))
                .whenComplete((done, failure) ->
                {
                    synchronized (this)
                    {
                        attempting = false;
                    }
                    if (failure != null)
                        broke();
                });
        }

        private void broke()
        {
            broken.set(true);
            repairNeeded.set(true);
        }

        /** When broken: subscribes again if it could not, and reads its log. */
        void repair()
        {
            if (!broken.getAndSet(false))
                return;
            if (listening())
                wake();
            else
                listen().thenRun(this::wake);
        }

        boolean isBroken()
        {
            return broken.get();
        }

        /** Keeps a registration, or undoes it when the subscription ended while it was being made. */
        private void registered(int id, boolean wakeUps)
        {
            synchronized (this)
            {
                if (!released)
                {
                    if (wakeUps)
                        wakeUpId = id;
                    else
                        resubscribedId = id;
                    return;
                }
            }
            channel.removeListenerAsync(id);
        }

        boolean listening()
        {
            synchronized (this)
            {
                return resubscribedId != null;
            }
        }

        /**
         * Queues the safety poll's look at this session in a batch: whether the record still exists,
         * and the first event after the last delivered, which an idle session has not. True when the
         * drain must read: to end the subscription, or to deliver.
         */
        CompletableFuture<Boolean> check(RBatch batch)
        {
            String last = lastDelivered();
            StreamMessageId from = last == null ? StreamMessageId.MIN : SessionLayout.next(last);
            CompletableFuture<Boolean> exists = batch.getMap(SessionLayout.recordKey(sessionId), StringCodec.INSTANCE).isExistsAsync().toCompletableFuture();
            CompletableFuture<Boolean> unread = batch.<String, String>getStream(SessionLayout.logKey(sessionId), StringCodec.INSTANCE)
                .rangeAsync(1, from, StreamMessageId.MAX).toCompletableFuture().thenApply(range -> !range.isEmpty());
            return exists.thenCombine(unread, (live, news) -> !live || news);
        }

        @Override
        protected List<Event> readAfter(String afterId)
        {
            try
            {
                StreamMessageId from = afterId == null ? StreamMessageId.MIN : SessionLayout.next(afterId);
                Map<StreamMessageId, Map<String, String>> range = layout.log(sessionId).range(BATCH, from, StreamMessageId.MAX);
                List<Event> events = new ArrayList<>(range.size());
                range.forEach((id, fields) -> events.add(new Event(id.toString(), fields.get(SessionLayout.MESSAGE), fields.get(SessionLayout.TRACE))));
                return events;
            }
            catch (RuntimeException x)
            {
                // The wake-up that led here is spent: without a repair, what it announced would wait for the poll.
                broke();
                throw x;
            }
        }

        @Override
        protected boolean sessionExists()
        {
            try
            {
                return layout.record(sessionId).isExists();
            }
            catch (RuntimeException x)
            {
                broke();
                throw x;
            }
        }

        @Override
        protected void release()
        {
            subscriptions.remove(this);
            List<Integer> ids = new ArrayList<>(2);
            synchronized (this)
            {
                released = true;
                if (wakeUpId != null)
                    ids.add(wakeUpId);
                if (resubscribedId != null)
                    ids.add(resubscribedId);
            }
            if (ids.isEmpty())
                return;
            try
            {
                channel.removeListener(ids.toArray(Integer[]::new));
            }
            catch (RuntimeException x)
            {
                // Redis down. Should Redisson keep the listeners and subscribe them again, they wake a
                // closed drain, which does nothing.
            }
        }
    }

    /** On the timer: starts a look at the sessions when the poll is due or something failed, never two at once. */
    private void tick()
    {
        long now = System.nanoTime();
        boolean due = now - lastPollNanos >= pollNanos;
        if (!(due || repairNeeded.get()) || !checking.compareAndSet(false, true))
            return;
        // Taken here rather than when the worker starts, so that a poll due every tick runs every tick.
        if (due)
            lastPollNanos = now;
        try
        {
            delivery.execute(() ->
            {
                try
                {
                    check(due);
                }
                finally
                {
                    checking.set(false);
                }
            });
        }
        catch (RejectedExecutionException x)
        {
            // Shutting down.
            checking.set(false);
        }
    }

    /**
     * The safety poll when {@code due}: wakes the sessions whose log holds what they have not
     * delivered, or that have ended. Then the repair of what failed, once Redis answers again.
     */
    private void check(boolean due)
    {
        repairNeeded.set(false);
        List<Listening> all = List.copyOf(subscriptions);
        if (due)
        {
            try
            {
                for (int from = 0; from < all.size(); from += CHECK_BATCH)
                    checkBatch(all.subList(from, Math.min(all.size(), from + CHECK_BATCH)));
            }
            catch (RuntimeException x)
            {
                // Unanswered (a node down, a timeout): every session reads for itself once Redis answers.
                LOG.debug("MCP session safety poll failed", x);
                all.forEach(Listening::broke);
            }
        }
        repair(all);
    }

    /**
     * Subscribes again and wakes the broken subscriptions, once one command shows Redis answering:
     * while it is down, that one command is all a tick costs, not a failing read per session.
     */
    private void repair(List<Listening> all)
    {
        Listening probe = all.stream().filter(Listening::isBroken).findFirst().orElse(null);
        if (probe == null)
            return;
        try
        {
            layout.record(probe.sessionId).isExists();
        }
        catch (RuntimeException x)
        {
            repairNeeded.set(true);
            return;
        }
        all.forEach(Listening::repair);
    }

    /** The safety poll now, whatever its schedule: what one costs is measured in tests. */
    void pollNow()
    {
        check(true);
    }

    private void checkBatch(List<Listening> sessions)
    {
        RBatch batch = redisson.createBatch();
        List<CompletableFuture<Boolean>> answers = new ArrayList<>(sessions.size());
        for (Listening subscription : sessions)
            answers.add(subscription.check(batch));
        batch.execute();
        for (int i = 0; i < sessions.size(); i++)
        {
            if (answers.get(i).join())
                sessions.get(i).wake();
        }
    }

    @Override
    public void close()
    {
        ticker.cancel(false);
    }
}
