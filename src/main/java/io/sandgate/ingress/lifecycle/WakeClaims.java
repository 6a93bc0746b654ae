package io.sandgate.ingress.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which replica asks a sandbox's manager to resume it: the first to claim the wake, once across all
 * replicas sharing the store. A claim is a key with an expiry in the store, not a lock a thread
 * holds, so a replica that dies while waking leaves nothing behind for longer than the claim's time.
 */
public interface WakeClaims
{
    /**
     * @param ttl how long the claim holds: the longest a wake may take
     * @return true for the one caller that got the claim; failed when the store cannot be asked
     */
    CompletableFuture<Boolean> claim(String sandboxId, Duration ttl);

    /**
     * Gives a claim back before it expires (the wake failed), so that the next request asks again.
     *
     * @return done once the claim is gone, or failed when the store could not be told (the claim then expires)
     */
    CompletableFuture<Void> release(String sandboxId);

    /** Claims of one replica: the in-memory store's. */
    static WakeClaims inMemory(Clock clock)
    {
        Map<String, Instant> claims = new ConcurrentHashMap<>();
        return new WakeClaims()
        {
            @Override
            public CompletableFuture<Boolean> claim(String sandboxId, Duration ttl)
            {
                Instant now = clock.instant();
                Instant until = now.plus(ttl);
                Instant held = claims.compute(sandboxId, (id, current) -> current == null || !current.isAfter(now) ? until : current);
                // The same instant only when this call put it there (a claim made in the same
                // instant by another call would have found this one unexpired).
                return CompletableFuture.completedFuture(held == until);
            }

            @Override
            public CompletableFuture<Void> release(String sandboxId)
            {
                claims.remove(sandboxId);
                return CompletableFuture.completedFuture(null);
            }
        };
    }
}
