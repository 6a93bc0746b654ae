package io.sandgate.launcher;

import io.sandgate.config.ConfigException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The selectors the pool can spare, and the refusal of a pool they would leave too little of. */
class ThreadPlanTest
{
    @Test
    void selectors_onePerCore_onASmallMachine()
    {
        assertEquals(new ThreadPlan(2, 2, 2), ThreadPlan.of(2, 200));
        assertEquals(new ThreadPlan(1, 1, 1), ThreadPlan.of(1, 200));
    }

    /** 64 cores with three listeners took 3 x 64 selectors, more than the default pool of 200 has. */
    @Test
    void selectors_areBoundedByThePool_onALargeMachine()
    {
        assertEquals(new ThreadPlan(25, 6, 12), ThreadPlan.of(64, 200));
        assertEquals(new ThreadPlan(25, 6, 12), ThreadPlan.of(256, 200));
        assertEquals(new ThreadPlan(64, 31, 62), ThreadPlan.of(64, 1000));
    }

    @Test
    void selectors_atLeastOne_inTheSmallestPool()
    {
        assertEquals(new ThreadPlan(1, 1, 1), ThreadPlan.of(64, 8));
    }

    @Test
    void halfThePoolLeased_isAccepted_moreIsAConfigError()
    {
        assertDoesNotThrow(() -> ThreadPlan.checkLeft(200, 100, 2));
        ConfigException refused = assertThrows(ConfigException.class, () -> ThreadPlan.checkLeft(200, 101, 64));
        assertTrue(refused.getMessage().contains("server.max-threads = 200 is too few"), refused.getMessage());
        assertTrue(refused.getMessage().contains("take 101 of them on 64 cores"), refused.getMessage());
        assertTrue(refused.getMessage().contains("set it to at least 202"), refused.getMessage());
    }
}
