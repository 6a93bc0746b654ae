package io.sandgate.egress;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.sandgate.config.EgressConfig;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Health, ejection, recovery and selection rules, driven with explicit times (no clocks, no sleeps). */
class NodeSelectionTest
{
    private static final long SECOND = 1_000_000_000L;
    private static final EgressConfig.Health HEALTH = new EgressConfig.Health(Duration.ofSeconds(3), Duration.ofSeconds(2), 3,
        Duration.ofSeconds(15), Optional.empty(), Duration.ofSeconds(3), 10, Duration.ofMillis(50), Duration.ofMillis(100), 3,
        Duration.ofSeconds(10), List.of(10, 50, 100), Duration.ofSeconds(10), 0.5, 0.8);

    private static PoolState pool(String preferred, String... idRegion)
    {
        List<EgressConfig.Node> nodes = new java.util.ArrayList<>();
        for (String entry : idRegion)
        {
            String[] parts = entry.split("@");
            nodes.add(new EgressConfig.Node(parts[0], "127.0.0.1", 1, parts[1], 100));
        }
        return new PoolState(new EgressConfig.Pool("p", preferred, nodes), HEALTH);
    }

    private static Map<String, Integer> picks(PoolState pool, long now, int n)
    {
        Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i < n; i++)
            counts.merge(pool.pick(Set.of(), now).node().id(), 1, Integer::sum);
        return counts;
    }

    @Test
    void threeFailedTcpProbes_eject_andASuccessLaterRampsTenFiftyHundred()
    {
        NodeState node = new NodeState("p", new EgressConfig.Node("n", "h", 1, "eu", 100), HEALTH);
        node.tcpProbe(false, 0);
        node.tcpProbe(false, 3 * SECOND);
        assertFalse(node.isEjected(), "two failures are not enough");
        node.tcpProbe(false, 6 * SECOND);
        assertTrue(node.isEjected());
        assertEquals(0, node.weight(6 * SECOND));

        node.tcpProbe(true, 9 * SECOND);
        assertFalse(node.isEjected());
        assertEquals(10, node.weight(9 * SECOND), 0.001);
        assertEquals(50, node.weight(19 * SECOND), 0.001);
        assertEquals(100, node.weight(29 * SECOND), 0.001);
        assertEquals(1, node.ejections());
    }

    @Test
    void consecutiveRequestFailures_eject_butSuccessesInBetweenDoNot()
    {
        NodeState node = new NodeState("p", new EgressConfig.Node("n", "h", 1, "eu", 100), HEALTH);
        node.requestResult(false, 0);
        node.requestResult(false, 0);
        node.requestResult(true, 0);
        node.requestResult(false, 0);
        assertFalse(node.isEjected());
        node.requestResult(false, 0);
        node.requestResult(false, 0);
        assertTrue(node.isEjected());
        node.tcpProbe(true, 3 * SECOND);
        assertTrue(node.isEjected(), "accepting TCP does not end a passive ejection before its cool-down");
        node.tcpProbe(true, 11 * SECOND);
        assertFalse(node.isEjected());
    }

    @Test
    void jitteryNode_isDownWeightedThenEjected_andComesBackWhenSteady()
    {
        NodeState node = new NodeState("p", new EgressConfig.Node("n", "h", 1, "eu", 100), HEALTH);
        long ms = 1_000_000L;
        for (long latency : new long[]{100, 220, 100, 220, 100, 220})
            node.httpProbe(true, latency * ms, 0);
        assertFalse(node.isEjected());
        assertEquals(70, node.weight(0), 0.001, "a standard deviation of 60 ms takes 30 %");

        for (long latency : new long[]{50, 350, 50, 350})
            node.httpProbe(true, latency * ms, 0);
        assertTrue(node.isEjected(), "stddev above 100 ms ejects: " + node.jitterNanos() / 1e6);

        for (int i = 0; i < 10; i++)
            node.httpProbe(true, 100 * ms, SECOND);
        assertFalse(node.isEjected());
    }

    @Test
    void failingOrSlowHttpProbe_halvesTheWeight()
    {
        NodeState node = new NodeState("p", new EgressConfig.Node("n", "h", 1, "eu", 100), HEALTH);
        node.httpProbe(false, 1_000_000L, 0);
        assertEquals(50, node.weight(0), 0.001);
        node.httpProbe(true, 1_000_000L, 0);
        assertEquals(100, node.weight(0), 0.001);
    }

    @Test
    void selection_prefersTheRegion_andFailsOverWhenMostOfItIsEjected()
    {
        PoolState pool = pool("eu", "eu1@eu", "eu2@eu", "us1@us");
        assertEquals(Set.of("eu1", "eu2"), picks(pool, 0, 200).keySet());

        for (int i = 0; i < 3; i++)
            pool.node("eu1").tcpProbe(false, 0);
        assertEquals(Set.of("eu2"), picks(pool, 0, 100).keySet(), "half ejected is not more than half");
        for (int i = 0; i < 3; i++)
            pool.node("eu2").tcpProbe(false, 0);
        assertEquals(Set.of("us1"), picks(pool, 0, 100).keySet());
        assertTrue(pool.regionFailing("eu"));
    }

    @Test
    void regionWithALowSuccessRate_failsOver()
    {
        PoolState pool = pool("eu", "eu1@eu", "us1@us");
        NodeState eu1 = pool.node("eu1");
        for (int i = 0; i < 40; i++)
            eu1.requestResult(i % 10 != 0, 0);
        assertFalse(pool.regionFailing("eu"), "90 % success");
        for (int i = 0; i < 10; i++)
        {
            // Interleaved, so no run of failures ejects the node: only the rate speaks.
            eu1.requestResult(false, 0);
            eu1.requestResult(true, 0);
            eu1.requestResult(i % 2 == 0, 0);
        }
        assertTrue(pool.regionFailing("eu"), "success " + eu1.successRate());
    }

    @Test
    void weights_shareTheTraffic()
    {
        PoolState pool = new PoolState(new EgressConfig.Pool("p", "eu", List.of(
            new EgressConfig.Node("heavy", "h", 1, "eu", 300), new EgressConfig.Node("light", "h", 1, "eu", 100))), HEALTH);
        Map<String, Integer> counts = picks(pool, 0, 4000);
        double share = counts.get("heavy") / 4000.0;
        assertTrue(share > 0.7 && share < 0.8, "heavy share " + share);
    }

    @Test
    void noHealthyNode_isPanic_allNodesAreUsed_andExclusionsHold()
    {
        PoolState pool = pool("eu", "a@eu", "b@eu");
        for (NodeState node : pool.nodes())
        {
            for (int i = 0; i < 3; i++)
                node.tcpProbe(false, 0);
        }
        NodeState picked = pool.pick(Set.of("a"), 0);
        assertEquals("b", picked.node().id());
        assertTrue(pool.isPanic());
        assertEquals(null, pool.pick(Set.of("a", "b"), 0));
        assertNotEquals(null, pool.pick(Set.of(), 0));
    }

    @Test
    void retryBudget_boundsRetriesToItsShareOfRequests()
    {
        RetryBudget budget = new RetryBudget(0.2);
        int allowed = 0;
        for (int i = 0; i < 1000; i++)
        {
            budget.deposit();
            if (budget.tryWithdraw())
                allowed++;
        }
        assertTrue(allowed <= 0.2 * 1000 + 10, "retries allowed: " + allowed);
        assertTrue(allowed >= 0.2 * 1000 - 10, "retries allowed: " + allowed);
    }
}
