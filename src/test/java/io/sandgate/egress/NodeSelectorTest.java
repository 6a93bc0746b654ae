package io.sandgate.egress;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
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
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Sticky selection on top of the weighted one, and the attempts of an exchange moving from node to node. */
class NodeSelectorTest
{
    private static final Optional<EgressPlan.Sticky> AGENT_7 = Optional.of(new EgressPlan.Sticky("main", Optional.empty(), "agent-7", Duration.ofMinutes(5)));

    private final EgressConfig config;
    private final PoolState pool;
    private final NodeSelector sticky = NodeSelector.sticky(new MemoryStickySessions(), NodeSelector.weighted());

    NodeSelectorTest()
    {
        Map<String, Object> values = new HashMap<>();
        values.put("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("*")), "upstream", "main", "retry", 5)));
        values.put("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(
            Map.of("id", "a", "address", "192.0.2.1:3128", "region", "eu"),
            Map.of("id", "b", "address", "192.0.2.2:3128", "region", "eu"),
            Map.of("id", "c", "address", "192.0.2.3:3128", "region", "eu")))));
        config = ConfigLoader.fromValues(values).egress();
        pool = new PoolState(config.pools().get("main"), config.health());
    }

    /** Ejects the node by failed TCP probes, as three in a row do. */
    static void eject(NodeState node)
    {
        for (int i = 0; i < 3; i++)
            node.tcpProbe(false, System.nanoTime());
        assertTrue(node.isEjected());
    }

    @Test
    void sticky_keepsTheSessionOnItsNode()
    {
        NodeSelector.Choice first = sticky.select(pool, AGENT_7, Set.of());
        assertFalse(first.repinned());
        for (int i = 0; i < 20; i++)
            assertSame(first.node(), sticky.select(pool, AGENT_7, Set.of()).node());
    }

    @Test
    void sticky_pinnedNodeEjected_movesTheSession_andSaysSo()
    {
        NodeState pinned = sticky.select(pool, AGENT_7, Set.of()).node();
        eject(pinned);
        NodeSelector.Choice moved = sticky.select(pool, AGENT_7, Set.of());
        assertNotEquals(pinned, moved.node());
        assertTrue(moved.repinned());
        NodeSelector.Choice next = sticky.select(pool, AGENT_7, Set.of());
        assertSame(moved.node(), next.node(), "the new pin holds");
        assertFalse(next.repinned());
    }

    @Test
    void sticky_retryGoesToAnotherNode_butThePinStaysOnItsHealthyNode()
    {
        NodeState pinned = sticky.select(pool, AGENT_7, Set.of()).node();
        NodeSelector.Choice retry = sticky.select(pool, AGENT_7, Set.of(pinned.node().id()));
        assertNotEquals(pinned, retry.node());
        assertFalse(retry.repinned(), "a retry is not a move of the session");
        assertSame(pinned, sticky.select(pool, AGENT_7, Set.of()).node(), "the next exchange goes to the pin again");
    }

    @Test
    void sticky_retryAfterThePinnedNodeWasEjected_movesThePin_andSaysSo()
    {
        NodeState pinned = sticky.select(pool, AGENT_7, Set.of()).node();
        eject(pinned);
        NodeSelector.Choice retry = sticky.select(pool, AGENT_7, Set.of(pinned.node().id()));
        assertTrue(retry.repinned());
        assertSame(retry.node(), sticky.select(pool, AGENT_7, Set.of()).node());
    }

    @Test
    void withoutASession_pinsPlayNoPart()
    {
        List<String> calls = new ArrayList<>();
        StickySessions recording = new StickySessions()
        {
            @Override
            public Optional<String> get(String sessionKey, Duration ttl)
            {
                calls.add("get " + sessionKey);
                return Optional.empty();
            }

            @Override
            public void put(String sessionKey, String nodeId, Duration ttl)
            {
                calls.add("put " + sessionKey);
            }
        };
        NodeSelector selector = NodeSelector.sticky(recording, NodeSelector.weighted());
        Set<String> chosen = new HashSet<>();
        for (int i = 0; i < 50; i++)
            chosen.add(selector.select(pool, Optional.empty(), Set.of()).node().node().id());
        assertEquals(List.of(), calls);
        assertTrue(chosen.size() > 1, "spread by weight: " + chosen);
    }

    @Test
    void attempts_eachGoToANodeNotTriedYet_untilNoneIsLeft() throws Exception
    {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        NodePools pools = new NodePools(config, NodeSelector.weighted());
        Attempts attempts = new Attempts(plan(), pools, new EgressMetrics(registry, pools), new TargetFailures());
        Set<String> nodes = new HashSet<>();
        while (attempts.next())
            nodes.add(attempts.node().node().id());
        assertEquals(Set.of("a", "b", "c"), nodes);
        assertEquals(3, attempts.count());
        assertEquals(3, attempts.tried());
        assertFalse(attempts.next(), "nothing left, nothing changed");
        assertEquals(3, attempts.count());
    }

    @Test
    void attempts_recordOutcomes_inTheNodesHealthAndTheCounter() throws Exception
    {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        NodePools pools = new NodePools(config, NodeSelector.weighted());
        EgressMetrics metrics = new EgressMetrics(registry, pools);
        NodeState node = null;
        for (int i = 0; i < 3; i++)
        {
            Attempts attempts = new Attempts(plan(), pools, metrics, new TargetFailures());
            do
            {
                assertTrue(attempts.next());
            }
            while (node != null && attempts.node() != node);
            node = attempts.node();
            attempts.record(FailurePolicy.Outcome.NODE_FAILURE);
        }
        assertTrue(node.isEjected(), "three node failures in a row eject it");
        assertEquals(3, registry.get("sandgate.egress.requests").tags("node", node.node().id(), "outcome", "node_failure").counter().count());
    }

    /** One exchange: its attempt on {@code node} ends with {@code outcome}; a retry, if any, opens the tunnel through another node. */
    private void exchange(NodePools pools, EgressMetrics metrics, TargetFailures targetFailures, String node, FailurePolicy.Outcome outcome,
                          boolean retry) throws Exception
    {
        // Selection is weighted at random: exchanges whose first attempt lands elsewhere are dropped unrecorded.
        Attempts attempts;
        do
        {
            attempts = new Attempts(plan(), pools, metrics, targetFailures);
            assertTrue(attempts.next());
        }
        while (!attempts.node().node().id().equals(node));
        attempts.record(outcome);
        if (retry)
        {
            assertTrue(attempts.next());
            attempts.record(FailurePolicy.Outcome.OK);
        }
    }

    @Test
    void aRefusalOrSilence_isBlamedWhenAnotherNodeReachesTheTarget_unlessThatNodeFailedTheTargetToo() throws Exception
    {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        NodePools pools = new NodePools(config, NodeSelector.weighted());
        EgressMetrics metrics = new EgressMetrics(registry, pools);

        // a fails the target, which the others reach steadily: a is failing, and out after three.
        TargetFailures steady = new TargetFailures();
        for (FailurePolicy.Outcome outcome : List.of(FailurePolicy.Outcome.REFUSED, FailurePolicy.Outcome.UNANSWERED, FailurePolicy.Outcome.REFUSED))
            exchange(pools, metrics, steady, "a", outcome, true);
        assertTrue(pools.node("a").isEjected(), "failed three times a target another node reached");

        // The target comes and goes: every node has failed it lately, so a retry that finds it back
        // up says nothing against the node refused before. However often that happens, no node is out.
        SimpleMeterRegistry flappingRegistry = new SimpleMeterRegistry();
        NodePools flappingPools = new NodePools(config, NodeSelector.weighted());
        EgressMetrics flappingMetrics = new EgressMetrics(flappingRegistry, flappingPools);
        TargetFailures flapping = new TargetFailures();
        for (String node : List.of("a", "b", "c"))
            exchange(flappingPools, flappingMetrics, flapping, node, FailurePolicy.Outcome.REFUSED, false);
        for (int i = 0; i < 5; i++)
        {
            for (String node : List.of("a", "b", "c"))
                exchange(flappingPools, flappingMetrics, flapping, node, i % 2 == 0 ? FailurePolicy.Outcome.REFUSED : FailurePolicy.Outcome.UNANSWERED, true);
        }
        for (String node : List.of("a", "b", "c"))
            assertFalse(flappingPools.node(node).isEjected(), node + ": the target flapped");
    }

    private EgressPlan plan() throws Exception
    {
        EgressConfig.Route route = config.routes().get(0);
        return new EgressPlan(EgressPlan.Entry.BASE_URL, route, new PinnedTarget("https", "target.test", InetAddress.getByName("192.0.2.10"), 443),
            "/", Optional.empty(), Optional.empty(), new EgressPlan.Timeouts(config.connectTimeout(), route.idleTimeout(), route.timeout()));
    }
}
