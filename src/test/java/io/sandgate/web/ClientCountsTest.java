package io.sandgate.web;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClientCountsTest
{
    @Test
    void eachClientHoldsUpToTheLimit_andGetsPlacesBackAsItReleases()
    {
        ClientCounts counts = new ClientCounts(2);

        assertTrue(counts.tryAcquire("a"));
        assertTrue(counts.tryAcquire("a"));
        assertFalse(counts.tryAcquire("a"), "at the limit");
        assertEquals(2, counts.count("a"), "a refusal takes nothing");
        assertTrue(counts.tryAcquire("b"), "another client has its own places");

        counts.release("a");
        assertTrue(counts.tryAcquire("a"));
    }

    @Test
    void clientHoldingNothing_isForgotten_andAStrayReleaseChangesNothing()
    {
        ClientCounts counts = new ClientCounts(3);
        counts.tryAcquire("a");
        counts.tryAcquire("b");
        assertEquals(2, counts.clients());

        counts.release("a");
        counts.release("a");
        counts.release("never-seen");

        assertEquals(1, counts.clients());
        assertEquals(0, counts.count("a"));
        assertEquals(1, counts.count("b"));
    }

    @Test
    void limitBelowOne_isRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> new ClientCounts(0));
    }
}
