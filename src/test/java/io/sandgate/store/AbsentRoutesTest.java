package io.sandgate.store;

import java.time.Duration;
import java.time.Instant;

import io.sandgate.testing.MutableClock;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ids known to have no route: believed for their TTL while nothing changed, forgotten all at
 * once by any change, never remembered from a read that a change overtook, and bounded in number.
 */
class AbsentRoutesTest
{
    private final MutableClock clock = new MutableClock(Instant.parse("2027-01-01T00:00:00Z"));

    @Test
    void absence_isBelievedUntilItsTtl()
    {
        AbsentRoutes absent = new AbsentRoutes(Duration.ofSeconds(2), 100, clock);
        absent.add("7", 0, 0);

        clock.advance(Duration.ofMillis(1999));
        assertTrue(absent.contains("7", 0));
        clock.advance(Duration.ofMillis(1));
        assertFalse(absent.contains("7", 0));
        assertFalse(absent.contains("8", 0), "never looked up");
    }

    @Test
    void anyChange_forgetsEveryAbsence()
    {
        AbsentRoutes absent = new AbsentRoutes(Duration.ofHours(1), 100, clock);
        absent.add("7", 4, 4);
        absent.add("8", 4, 4);

        assertFalse(absent.contains("7", 5));
        assertFalse(absent.contains("8", 5));
        assertFalse(absent.contains("8", 4), "a forgotten entry is gone, not hidden");
    }

    @Test
    void readThatAChangeOvertook_isNotRemembered()
    {
        AbsentRoutes absent = new AbsentRoutes(Duration.ofHours(1), 100, clock);
        absent.add("7", 4, 5);

        assertFalse(absent.contains("7", 4));
        assertFalse(absent.contains("7", 5));
    }

    @Test
    void zeroTtl_remembersNothing()
    {
        AbsentRoutes absent = new AbsentRoutes(Duration.ZERO, 100, clock);
        absent.add("7", 0, 0);

        assertFalse(absent.contains("7", 0));
    }

    @Test
    void full_dropsWhatIsNoLongerValidFirst_andStaysWithinItsBound()
    {
        AbsentRoutes absent = new AbsentRoutes(Duration.ofHours(1), 100, clock);
        for (int i = 0; i < 50; i++)
            absent.add("old-" + i, 1, 1);
        for (int i = 0; i < 50; i++)
            absent.add("new-" + i, 2, 2);

        absent.add("one-more", 2, 2);

        assertTrue(absent.size() <= 100, "size " + absent.size());
        for (int i = 0; i < 50; i++)
            assertTrue(absent.contains("new-" + i, 2), "new-" + i + " was valid and there was room once the old went");
        for (int i = 0; i < 10_000; i++)
            absent.add("flood-" + i, 2, 2);
        assertTrue(absent.size() <= 100, "size " + absent.size());
    }

    @Test
    void negativeTtl_isRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> new AbsentRoutes(Duration.ofMillis(-1), 100, clock));
    }
}
