package io.sandgate.secrets;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicInteger;

import io.sandgate.core.Secret;
import io.sandgate.secrets.SecretUnavailableException.Reason;
import io.sandgate.testing.MutableClock;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Stale-while-revalidate over a source the test switches off and on, a clock it moves by hand and
 * an executor whose background refreshes it runs when it chooses.
 */
class CachingSecretSourceTest
{
    private static final Duration REFRESH = Duration.ofMinutes(5);
    private static final Duration MAX_AGE = Duration.ofHours(1);

    private final Map<String, String> values = new HashMap<>(Map.of("openai", "sk-one"));
    private final AtomicInteger reads = new AtomicInteger();
    private final Queue<Runnable> background = new ArrayDeque<>();
    private final MutableClock clock = new MutableClock(Instant.parse("2026-03-01T10:00:00Z"));
    private volatile boolean down;
    private volatile boolean closed;
    private final CachingSecretSource cache = new CachingSecretSource(source(), REFRESH, MAX_AGE, clock, background::add);

    private SecretSource source()
    {
        return new SecretSource()
        {
            @Override
            public Secret get(String name)
            {
                reads.incrementAndGet();
                if (down)
                    throw new SecretUnavailableException(Reason.SOURCE_DOWN, "store unreachable at store.internal");
                String value = values.get(name);
                if (value == null)
                    throw new SecretUnavailableException(Reason.UNKNOWN, "secret '" + name + "' not found");
                return new Secret(value);
            }

            @Override
            public String kind()
            {
                return "store";
            }

            @Override
            public void close()
            {
                closed = true;
            }
        };
    }

    private void runBackground()
    {
        while (!background.isEmpty())
            background.poll().run();
    }

    /** Caches {@code openai}, takes the source down, and lets the refresh the next get starts fail. */
    private void cachedThenOneFailedRefresh()
    {
        cache.get("openai");
        down = true;
        clock.advance(REFRESH);
        cache.get("openai");
        runBackground();
    }

    private SecretUnavailableException unavailable(String name)
    {
        return assertThrows(SecretUnavailableException.class, () -> cache.get(name));
    }

    @Test
    void firstGet_readsTheSource_thenTheCacheAnswersWithinTheRefreshInterval()
    {
        assertEquals("sk-one", cache.get("openai").reveal());
        values.put("openai", "sk-two");
        clock.advance(REFRESH.minusSeconds(1));

        assertEquals("sk-one", cache.get("openai").reveal());
        assertEquals(1, reads.get());
        assertTrue(background.isEmpty());
    }

    @Test
    void staleValue_isServed_whileOneBackgroundRefreshBringsTheNewOne()
    {
        cache.get("openai");
        values.put("openai", "sk-two");
        clock.advance(REFRESH);

        assertEquals("sk-one", cache.get("openai").reveal(), "the caller does not wait for the source");
        assertEquals("sk-one", cache.get("openai").reveal());
        assertEquals(1, background.size(), "one refresh per name at a time");
        runBackground();

        assertEquals("sk-two", cache.get("openai").reveal());
        assertEquals(2, reads.get());
    }

    @Test
    void failedRefresh_keepsTheValue_andWaitsAWholeIntervalBeforeTheNextTry()
    {
        cachedThenOneFailedRefresh();
        assertEquals(2, reads.get());

        clock.advance(REFRESH.minusSeconds(1));
        assertEquals("sk-one", cache.get("openai").reveal());
        assertTrue(background.isEmpty(), "no new try before a refresh interval has passed since the last one");

        clock.advance(Duration.ofSeconds(1));
        cache.get("openai");
        assertEquals(1, background.size());
    }

    @Test
    void sourceDownPastMaxAge_isExpired_withAMessageThatSaysWhy()
    {
        cachedThenOneFailedRefresh();
        clock.advance(MAX_AGE);

        SecretUnavailableException expired = unavailable("openai");

        assertEquals(Reason.EXPIRED, expired.reason());
        assertEquals("secret 'openai' expired from cache: store unreachable for 60m (value read 65m ago, max age 60m); "
            + "last error: store unreachable at store.internal", expired.getMessage());
        assertFalse(expired.getMessage().contains("sk-one"));
    }

    @Test
    void sourceBackAfterExpiry_servesAgain_withoutWaitingForARefresh()
    {
        cache.get("openai");
        down = true;
        clock.advance(MAX_AGE.plusSeconds(1));
        assertEquals(Reason.EXPIRED, unavailable("openai").reason());

        down = false;
        values.put("openai", "sk-after-outage");
        assertEquals("sk-after-outage", cache.get("openai").reveal());
    }

    @Test
    void nameNeverRead_isNotServedWhileTheSourceIsDown()
    {
        down = true;

        SecretUnavailableException x = unavailable("openai");

        assertEquals(Reason.SOURCE_DOWN, x.reason());
        assertEquals("store unreachable at store.internal", x.getMessage());
    }

    @Test
    void nameGoneFromTheSource_stopsBeingServedAtOnce()
    {
        cache.get("openai");
        values.remove("openai");
        clock.advance(MAX_AGE.plusSeconds(1));
        assertEquals(Reason.UNKNOWN, unavailable("openai").reason());

        down = true;
        assertEquals(Reason.SOURCE_DOWN, unavailable("openai").reason(), "nothing cached is left to serve");
    }

    @Test
    void closedCache_closesItsSource_andAnswersNoMore()
    {
        cache.get("openai");
        cache.close();

        assertTrue(closed);
        IllegalStateException x = assertThrows(IllegalStateException.class, () -> cache.get("openai"));
        assertEquals("store secret source is closed", x.getMessage());
        assertEquals("store", cache.kind());
    }

    @Test
    void intervalsMustBePositive()
    {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
            () -> new CachingSecretSource(source(), Duration.ZERO, MAX_AGE, clock, Runnable::run));
        assertEquals("refreshInterval: PT0S (expected: > 0)", x.getMessage());
    }
}
