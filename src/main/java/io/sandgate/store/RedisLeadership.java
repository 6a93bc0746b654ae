package io.sandgate.store;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.sandgate.core.Audit;
import io.sandgate.core.Leadership;
import io.sandgate.core.Schedulers;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election through a Redisson lock. The lock is taken without a lease of our own so that
 * Redisson's watchdog keeps extending it while this process is alive and connected; if the leader
 * dies or loses Redis, the watchdog stops, the lock expires after the watchdog timeout, and the
 * next replica's attempt takes it. One thread owns the lock, as Redisson locks are per thread.
 */
final class RedisLeadership implements Leadership
{
    private static final Logger LOG = LoggerFactory.getLogger(RedisLeadership.class);

    private final RLock lock;
    /** A Redisson lock belongs to the thread that took it: every lock call runs on this one. */
    private final ScheduledExecutorService owner;
    private volatile boolean leading;

    RedisLeadership(RedissonClient redisson, String name, Schedulers schedulers)
    {
        this.lock = redisson.getLock("sandgate:leader:" + name);
        this.owner = schedulers.lane("leadership-" + name);
    }

    @Override
    public void run(Runnable elected, Runnable demoted)
    {
        owner.scheduleWithFixedDelay(() ->
        {
            try
            {
                if (!leading && lock.tryLock())
                {
                    leading = true;
                    LOG.info("Elected leader ({})", lock.getName());
                    Audit.leadership(lock.getName(), true);
                    elected.run();
                }
                else if (leading && !lock.isHeldByCurrentThread())
                {
                    demote(demoted);
                }
            }
            catch (RuntimeException x)
            {
                // Redis unreachable: a leader cannot prove it still holds the lock, so it stops writing.
                if (leading)
                    demote(demoted);
            }
        }, 0, 1, TimeUnit.SECONDS);
    }

    private void demote(Runnable demoted)
    {
        leading = false;
        LOG.warn("No longer leader ({})", lock.getName());
        Audit.leadership(lock.getName(), false);
        demoted.run();
    }

    @Override
    public boolean isLeader()
    {
        return leading;
    }

    @Override
    public void close()
    {
        owner.execute(() ->
        {
            try
            {
                if (lock.isHeldByCurrentThread())
                    lock.unlock();
            }
            catch (RuntimeException x)
            {
                // The lease will run out by itself.
            }
        });
        owner.shutdown();
    }
}
