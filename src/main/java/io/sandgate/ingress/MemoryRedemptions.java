package io.sandgate.ingress;

import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Redeemed grants of one process, each kept until its grant expires. Expired ones are swept on the
 * way, every so many redemptions, so memory follows the grants still valid without a timer.
 */
final class MemoryRedemptions implements Redemptions
{
    private static final int SWEEP_EVERY = 1024;

    private final Clock clock;
    private final Map<String, Instant> redeemed = new ConcurrentHashMap<>();
    private final AtomicInteger untilSweep = new AtomicInteger(SWEEP_EVERY);

    MemoryRedemptions(Clock clock)
    {
        this.clock = clock;
    }

    @Override
    public boolean redeem(String nonce, Instant until)
    {
        Instant now = clock.instant();
        if (untilSweep.decrementAndGet() <= 0)
        {
            untilSweep.set(SWEEP_EVERY);
            redeemed.values().removeIf(expiry -> !expiry.isAfter(now));
        }
        Instant recorded = redeemed.putIfAbsent(nonce, until);
        if (recorded == null)
            return true;
        // Only a nonce whose grant has expired is recorded again, and the grant is refused by then anyway.
        return !recorded.isAfter(now) && redeemed.replace(nonce, recorded, until);
    }

    int size()
    {
        return redeemed.size();
    }
}
