package io.sandgate.ingress;

import java.time.Clock;
import java.time.Instant;

import io.sandgate.core.StoreUnavailableException;

/**
 * Which grants have been redeemed: a grant opens a session once, on whichever replica it is
 * presented first, and is refused everywhere after that until it expires (when it would be refused
 * anyway). Replicas that share a store share this memory; {@link #inMemory(Clock)} serves one.
 */
public interface Redemptions
{
    /**
     * Records a grant's nonce as redeemed.
     *
     * @param until the grant's own expiry: it need not be remembered longer
     * @return true the first time this nonce is presented, false for every replay
     * @throws StoreUnavailableException when the answer cannot be had; the caller refuses the grant
     *         rather than risk letting a replay through
     */
    boolean redeem(String nonce, Instant until);

    /** Redemptions remembered in this process: right for a single replica. */
    static Redemptions inMemory(Clock clock)
    {
        return new MemoryRedemptions(clock);
    }
}
