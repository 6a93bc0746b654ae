package io.sandgate.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's background threads, made once by the composition root and handed to every
 * component: a small timer for delayed and periodic ticks, and a worker pool for work that may
 * block (health probes, Vault calls, event deliveries, stream pumps). Components start no threads
 * of their own, so one {@link #close()} ends them all and a thread dump names each by its pool; the
 * one exception is the pools of the HTTP clients some components run ({@code web.ClientThreads}),
 * which their clients start and stop.
 *
 * <p>Timer tasks must be short and must never block: a blocking periodic job goes through
 * {@link #every}, which runs it on a worker.</p>
 */
public final class Schedulers implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Schedulers.class);

    private final String name;
    private final ScheduledThreadPoolExecutor timer;
    private final ExecutorService workers;
    private final List<ScheduledExecutorService> lanes = new CopyOnWriteArrayList<>();

    /**
     * @param name prefix of the thread names, such as {@code sandgate}
     * @param timerThreads threads of the timer (two keep one slow tick from delaying every other)
     */
    public Schedulers(String name, int timerThreads)
    {
        if (timerThreads < 1)
            throw new IllegalArgumentException("timerThreads: " + timerThreads + " (expected: >= 1)");
        this.name = name;
        this.timer = new ScheduledThreadPoolExecutor(timerThreads, daemon(name + "-timer"));
        // A cancelled deadline (most of them are) leaves the queue at once instead of at its time.
        timer.setRemoveOnCancelPolicy(true);
        this.workers = Executors.newCachedThreadPool(daemon(name + "-worker"));
    }

    /** The gateway's default set: two timer threads and a worker pool that grows with the work. */
    public static Schedulers create()
    {
        return new Schedulers("sandgate", 2);
    }

    /** Delayed and periodic ticks that never block. */
    public ScheduledExecutorService timer()
    {
        return timer;
    }

    /** Work that may block. */
    public ExecutorService workers()
    {
        return workers;
    }

    /**
     * Runs {@code job} on a worker every {@code period} after {@code initialDelay}; a run that is
     * still going when the next is due makes that one skip, so runs never overlap or pile up. A
     * failing run is logged and the schedule goes on.
     *
     * @return cancels the schedule (a run under way finishes)
     */
    public ScheduledFuture<?> every(Duration initialDelay, Duration period, String what, Runnable job)
    {
        AtomicBoolean running = new AtomicBoolean();
        Runnable guarded = () ->
        {
            try
            {
                job.run();
            }
            catch (RuntimeException x)
            {
                LOG.warn("{} failed", what, x);
            }
            finally
            {
                running.set(false);
            }
        };
        return timer.scheduleWithFixedDelay(() ->
        {
            if (!running.compareAndSet(false, true))
                return;
            try
            {
                workers.execute(guarded);
            }
            catch (RuntimeException x)
            {
                // Rejected after close.
                running.set(false);
            }
        }, initialDelay.toNanos(), period.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * A thread of its own for work that must stay on one thread or in one order: a Redisson lock
     * belongs to the thread that took it, and the route cache's refreshes must not overtake each
     * other. Closed with the rest.
     */
    public ScheduledExecutorService lane(String job)
    {
        ScheduledThreadPoolExecutor lane = new ScheduledThreadPoolExecutor(1, daemon(name + "-" + job));
        lane.setRemoveOnCancelPolicy(true);
        lanes.add(lane);
        return lane;
    }

    /** Named daemon threads: the gateway's background work never keeps a JVM alive. */
    public static ThreadFactory daemon(String name)
    {
        AtomicInteger count = new AtomicInteger();
        return task ->
        {
            Thread thread = new Thread(task, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    @Override
    public void close()
    {
        timer.shutdownNow();
        workers.shutdownNow();
        lanes.forEach(ScheduledExecutorService::shutdownNow);
    }
}
