package io.sandgate.egress;

import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.EgressConfig;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a reload keeps, changes, adds and removes in the pools, and that nothing changes before it is applied. */
class NodePoolsReloadTest
{
    private static final Optional<EgressPlan.Sticky> AGENT_7 = Optional.of(new EgressPlan.Sticky("main", Optional.empty(), "agent-7", Duration.ofMinutes(5)));

    private static EgressConfig config(Map<String, ?> pools)
    {
        Map<String, Object> values = new HashMap<>();
        values.put("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("*")), "upstream", pools.keySet().iterator().next(), "retry", 5)));
        values.put("egress.pools", pools);
        return ConfigLoader.fromValues(values).egress();
    }

    private static Map<String, Object> pool(Map<?, ?>... nodes)
    {
        return Map.of("region", "eu", "nodes", List.of(nodes));
    }

    private static Map<String, Object> node(String id, String address, int weight)
    {
        return Map.of("id", id, "address", address, "region", "eu", "weight", weight);
    }

    private static final EgressConfig START = config(Map.of("main", pool(node("a", "192.0.2.1:3128", 100), node("b", "192.0.2.2:3128", 100))));

    private static EgressPlan plan(EgressConfig config, Optional<EgressPlan.Sticky> sticky) throws Exception
    {
        EgressConfig.Route route = config.routes().get(0);
        return new EgressPlan(EgressPlan.Entry.BASE_URL, route, new PinnedTarget("https", "target.test", InetAddress.getByName("192.0.2.10"), 443),
            "/", Optional.empty(), sticky, new EgressPlan.Timeouts(config.connectTimeout(), route.idleTimeout(), route.timeout()));
    }

    @Test
    void unchangedNode_keepsItsState_andANewWeightApplies()
    {
        NodePools pools = new NodePools(START, NodeSelector.weighted());
        NodeState a = pools.node("a");
        NodeState b = pools.node("b");
        NodeSelectorTest.eject(a);

        EgressConfig fresh = config(Map.of("main", pool(node("a", "192.0.2.1:3128", 100), node("b", "192.0.2.2:3128", 40))));
        NodePools.Reconciled reconciled = pools.reconcile(fresh.pools());
        assertEquals(List.of(), reconciled.added());
        assertEquals(List.of(), reconciled.removed());
        assertEquals(100, b.node().weight(), "nothing changes before the reconciliation is applied");
        pools.apply(reconciled);

        assertSame(a, pools.node("a"));
        assertTrue(a.isEjected(), "still ejected: it is the same proxy");
        assertEquals(1, a.ejections());
        assertSame(b, pools.node("b"));
        assertEquals(40, b.weight(System.nanoTime()), 0.001);
    }

    @Test
    void newNode_andNewPool_areAdded_freshAndHealthy()
    {
        NodePools pools = new NodePools(START, NodeSelector.weighted());
        EgressConfig fresh = config(Map.of(
            "main", pool(node("a", "192.0.2.1:3128", 100), node("b", "192.0.2.2:3128", 100), node("c", "192.0.2.3:3128", 100)),
            "other", pool(node("o", "192.0.2.9:3128", 100))));
        NodePools.Reconciled reconciled = pools.reconcile(fresh.pools());
        pools.apply(reconciled);

        assertEquals(List.of("c", "o"), reconciled.added().stream().map(n -> n.node().id()).sorted().toList());
        assertSame(pools.node("c"), pools.pool("main").node("c"));
        assertSame(pools.node("o"), pools.pool("other").node("o"));
        assertFalse(pools.node("c").isEjected());
    }

    @Test
    void removedNode_isNeverChosenAgain_andItsStickySessionsMove_announced() throws Exception
    {
        NodePools pools = new NodePools(START, NodeSelector.sticky(new MemoryStickySessions(), NodeSelector.weighted()));
        NodeState pinned = pools.choose(plan(START, AGENT_7), Set.of()).node();
        String kept = pinned.node().id().equals("a") ? "b" : "a";
        NodeState other = pools.node(kept);

        EgressConfig fresh = config(Map.of("main", pool(node(kept, other.node().host() + ":" + other.node().port(), 100))));
        NodePools.Reconciled reconciled = pools.reconcile(fresh.pools());
        pools.apply(reconciled);

        assertEquals(List.of(pinned), reconciled.removed());
        assertFalse(pools.serves("main", pinned));
        NodeSelector.Choice moved = pools.choose(plan(fresh, AGENT_7), Set.of());
        assertSame(other, moved.node());
        assertTrue(moved.repinned(), "the session left its node: the agent is told");
        for (int i = 0; i < 20; i++)
            assertSame(other, pools.choose(plan(fresh, Optional.empty()), Set.of()).node());
    }

    @Test
    void nodeAtANewAddress_underItsOldId_isAnotherNode()
    {
        NodePools pools = new NodePools(START, NodeSelector.weighted());
        NodeState old = pools.node("a");
        NodeSelectorTest.eject(old);
        EgressConfig fresh = config(Map.of("main", pool(node("a", "192.0.2.7:3128", 100), node("b", "192.0.2.2:3128", 100))));
        NodePools.Reconciled reconciled = pools.reconcile(fresh.pools());
        pools.apply(reconciled);

        assertEquals(List.of(old), reconciled.removed());
        NodeState moved = pools.node("a");
        assertNotSame(old, moved);
        assertEquals(List.of(moved), reconciled.added());
        assertFalse(moved.isEjected(), "nothing is known of the proxy at the new address");
    }

    @Test
    void removedPool_leavesAnExchangePlannedForIt_withNoNode() throws Exception
    {
        NodePools pools = new NodePools(START, NodeSelector.weighted());
        EgressPlan planned = plan(START, Optional.empty());
        pools.apply(pools.reconcile(config(Map.of("other", pool(node("o", "192.0.2.9:3128", 100)))).pools()));
        assertNull(pools.choose(planned, Set.of()));
        assertNull(pools.pool("main"));
    }

    @Test
    void removedNode_seriesAreNoLongerExported_andItsLateAttemptsAreNotCounted() throws Exception
    {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        NodePools pools = new NodePools(START, NodeSelector.weighted());
        EgressMetrics metrics = new EgressMetrics(registry, pools);
        NodeState a = pools.node("a");
        metrics.attempt("main", a, FailurePolicy.Outcome.OK);
        assertEquals(1, registry.find("sandgate.egress.requests").tag("node", "a").counters().size());

        pools.apply(pools.reconcile(config(Map.of("main", pool(node("b", "192.0.2.2:3128", 100), node("c", "192.0.2.3:3128", 100)))).pools()));
        metrics.poolsReloaded();
        metrics.attempt("main", a, FailurePolicy.Outcome.OK);

        assertTrue(registry.find("sandgate.egress.node.weight").tag("node", "a").gauges().isEmpty());
        assertTrue(registry.find("sandgate.egress.requests").tag("node", "a").counters().isEmpty(), "an exchange that ends on it later does not bring it back");
        assertEquals(100, registry.get("sandgate.egress.node.weight").tag("node", "c").gauge().value(), 0.001);
        assertEquals(100, registry.get("sandgate.egress.node.weight").tag("node", "b").gauge().value(), 0.001);
    }
}
