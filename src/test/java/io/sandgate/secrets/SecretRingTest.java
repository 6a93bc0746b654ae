package io.sandgate.secrets;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.sandgate.core.Secret;
import io.sandgate.testing.MutableClock;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Rotation with overlap, on a source whose values the test changes and a clock it moves. */
class SecretRingTest
{
    private final Map<String, String> values = new HashMap<>(Map.of("k", "first-value"));
    private volatile boolean down;
    private final MutableClock clock = new MutableClock(Instant.parse("2026-11-29T00:00:00Z"));
    private final SecretRing ring = new SecretRing(source(), Duration.ofHours(24), clock);

    private SecretSource source()
    {
        return new SecretSource()
        {
            @Override
            public Secret get(String name)
            {
                if (down)
                    throw new SecretUnavailableException(SecretUnavailableException.Reason.SOURCE_DOWN, "down");
                String value = values.get(name);
                if (value == null)
                    throw new SecretUnavailableException(SecretUnavailableException.Reason.UNKNOWN, "no " + name);
                return new Secret(value);
            }

            @Override
            public String kind()
            {
                return "test";
            }
        };
    }

    private List<String> valid(String name)
    {
        return ring.valid(name).stream().map(v -> v.value().reveal()).toList();
    }

    @Test
    void aChangedValue_isCurrentAtOnce_andTheOldOneValidForTheOverlapOnly()
    {
        assertEquals("first-value", ring.current("k").reveal());
        values.put("k", "second-value");
        assertEquals("second-value", ring.current("k").reveal());
        assertEquals(List.of("second-value", "first-value"), valid("k"));

        clock.advance(Duration.ofHours(23));
        assertEquals(List.of("second-value", "first-value"), valid("k"), "still inside the overlap");
        clock.advance(Duration.ofHours(1));
        assertEquals(List.of("second-value"), valid("k"), "the overlap is over");
    }

    @Test
    void twoRotations_keepBothOldValuesForTheirOwnOverlap()
    {
        ring.current("k");
        values.put("k", "second-value");
        ring.current("k");
        clock.advance(Duration.ofHours(12));
        values.put("k", "third-value");
        ring.current("k");
        assertEquals(Set.of("first-value", "second-value", "third-value"), ring.held(List.of("k")));
        clock.advance(Duration.ofHours(13));
        assertEquals(List.of("third-value", "second-value"), valid("k"), "the first value's overlap ended first");
    }

    @Test
    void refresh_dropsASecretDeletedFromTheSource_atOnce()
    {
        ring.current("k");
        values.put("k", "second-value");
        ring.current("k");
        values.remove("k");
        assertEquals(1, ring.refresh(List.of("k")));
        assertEquals(List.of(), valid("k"), "deleting a token revokes it, overlap included");
        assertThrows(SecretUnavailableException.class, () -> ring.current("k"));
    }

    @Test
    void refresh_keepsWhatWasKnown_whenTheSourceIsDown()
    {
        ring.current("k");
        down = true;
        assertEquals(1, ring.refresh(List.of("k")));
        assertEquals(List.of("first-value"), valid("k"));
    }
}
