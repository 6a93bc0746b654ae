package io.sandgate.ingress;

import java.time.Duration;
import java.time.Instant;

import io.sandgate.testing.MutableClock;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemoryRedemptionsTest
{
    private static final Instant T0 = Instant.parse("2025-03-01T10:00:00Z");

    private final MutableClock clock = new MutableClock(T0);
    private final MemoryRedemptions redemptions = new MemoryRedemptions(clock);

    @Test
    void aNonceIsRedeemedOnce_andEveryReplayIsRefused()
    {
        Instant until = T0.plus(Duration.ofMinutes(5));
        assertTrue(redemptions.redeem("n1", until));
        assertFalse(redemptions.redeem("n1", until));
        clock.advance(Duration.ofMinutes(5).minusSeconds(1));
        assertFalse(redemptions.redeem("n1", until), "refused until the grant itself expires");
        assertTrue(redemptions.redeem("n2", until), "another grant is another nonce");
    }

    @Test
    void aReplayWithALaterExpiryIsStillRefused()
    {
        assertTrue(redemptions.redeem("n1", T0.plusSeconds(60)));
        assertFalse(redemptions.redeem("n1", T0.plusSeconds(3600)));
    }

    @Test
    void expiredRedemptionsAreSweptAsRedemptionsGoOn()
    {
        for (int i = 0; i < 100; i++)
            assertTrue(redemptions.redeem("old-" + i, T0.plusSeconds(60)));
        clock.advance(Duration.ofMinutes(2));
        for (int i = 0; i < 2000; i++)
            assertTrue(redemptions.redeem("new-" + i, T0.plus(Duration.ofHours(1))));
        assertEquals(2000, redemptions.size(), "the expired ones are gone, the valid ones kept");
    }
}
