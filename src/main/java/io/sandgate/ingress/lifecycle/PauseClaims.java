package io.sandgate.ingress.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * That a sandbox was asked to pause for one idle spell, so that it is never asked twice for the same
 * spell: not while its manager takes its time to pause it (the route still reads running), not by a
 * leader elected meanwhile, not by a manager that pauses sandboxes without ever marking their routes.
 * A claim records when it was made and expires on its own; a spell is the one claimed when no
 * traffic came after the claim was made.
 */
public interface PauseClaims
{
    /**
     * Claims the pause of the sandbox's idle spell.
     *
     * @param idleSince when the spell began (epoch millis): the sandbox's last traffic, 0 when none is on record (then a claim holds until it expires, so a route that runs again without traffic is asked again only after the claim's time to live)
     * @param ttl how long the claim holds
     * @return true when no claim was made since {@code idleSince} (this one now is); false when this spell is claimed already
     */
    CompletableFuture<Boolean> claim(String sandboxId, long idleSince, Duration ttl);

    /** The pause failed: the claim holds only {@code delay} more, and the sandbox is asked again after it if still idle. */
    void retryAfter(String sandboxId, Duration delay);

    /** Claims of one replica: the in-memory store's. */
    static PauseClaims inMemory(Clock clock)
    {
        /** When each claim was made, and when it runs out, epoch millis. */
        record Claim(long made, long until)
        {
        }
        Map<String, Claim> claims = new ConcurrentHashMap<>();
        // Claims kept before the expired ones are dropped, now and then rather than by a thread of their own.
        int pruneAbove = 1024;
        return new PauseClaims()
        {
            @Override
            public CompletableFuture<Boolean> claim(String sandboxId, long idleSince, Duration ttl)
            {
                long now = clock.millis();
                if (claims.size() > pruneAbove)
                    claims.values().removeIf(claim -> claim.until <= now);
                Claim mine = new Claim(now, now + ttl.toMillis());
                Claim held = claims.compute(sandboxId, (id, current) -> current != null && current.until > now && current.made >= idleSince ? current : mine);
                return CompletableFuture.completedFuture(held == mine);
            }

            @Override
            public void retryAfter(String sandboxId, Duration delay)
            {
                long until = clock.millis() + delay.toMillis();
                claims.computeIfPresent(sandboxId, (id, current) -> new Claim(current.made, Math.min(current.until, until)));
            }
        };
    }
}
