package io.sandgate.ingress;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RouteMissesTest
{
    private final AtomicLong now = new AtomicLong(TimeUnit.DAYS.toNanos(3));
    private final RouteMisses misses = new RouteMisses(60, now::get);

    private void after(long seconds)
    {
        now.addAndGet(TimeUnit.SECONDS.toNanos(seconds));
    }

    @Test
    void aMinutesWorthAtOnce_thenOneAsEachComesBack()
    {
        for (int i = 0; i < 60; i++)
            assertTrue(misses.tryTake("a"), "miss " + i);

        assertFalse(misses.tryTake("a"));
        GatewayException refused = misses.exhausted("a");
        assertEquals(429, refused.status());
        assertEquals(2, refused.retryAfterSeconds(), "one back after a second, rounded up");
        assertTrue(refused.getMessage().contains("ingress.route-misses-per-client-per-minute"), refused.getMessage());
        after(1);
        assertTrue(misses.tryTake("a"));
        assertFalse(misses.tryTake("a"));
        after(30);
        for (int i = 0; i < 30; i++)
            assertTrue(misses.tryTake("a"), "miss " + i + " after half a minute");
        assertFalse(misses.tryTake("a"));
    }

    @Test
    void clientsHaveBudgetsOfTheirOwn()
    {
        for (int i = 0; i < 60; i++)
            misses.tryTake("a");

        assertFalse(misses.tryTake("a"));
        assertTrue(misses.tryTake("b"));
    }

    @Test
    void whatIsGivenBack_canBeTakenAgain_andAClientOwingNothingIsForgotten()
    {
        for (int i = 0; i < 60; i++)
            misses.tryTake("a");
        misses.giveBack("a");

        assertTrue(misses.tryTake("a"));
        assertFalse(misses.tryTake("a"));
        assertTrue(misses.tryTake("b"));
        misses.giveBack("b");
        assertEquals(1, misses.clients(), "a client that owes nothing takes no memory");
    }

    @Test
    void clientsWhoseBudgetIsFullAgain_areSweptOut_whenManyAreKept()
    {
        for (int i = 0; i < 4096; i++)
            misses.tryTake("client-" + i);
        assertEquals(4096, misses.clients());
        after(2);
        misses.tryTake("late");

        assertEquals(1, misses.clients(), "the 4 096 clients whose budget is full again");
    }
}
