package io.sandgate.egress;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeoutException;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.EgressConfig;
import org.eclipse.jetty.http.HttpStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The attempts of one CONNECT, step by step, as the tunnel's callbacks drive them; no node is contacted. */
class TunnelAttemptsTest
{
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<String> opened = new ArrayList<>();
    private final List<SocketChannel> channels = new ArrayList<>();
    private final EgressConfig config;
    private final NodePools pools;
    private final EgressMetrics metrics;
    private final FailurePolicy policy;

    TunnelAttemptsTest()
    {
        Map<String, Object> values = new HashMap<>();
        values.put("egress.routes", List.of(
            Map.of("match", Map.of("domains", List.of("retry.test")), "upstream", "main", "retry", 1),
            Map.of("match", Map.of("domains", List.of("once.test")), "upstream", "main", "retry", 0)));
        values.put("egress.pools", Map.of("main", Map.of("nodes", List.of(
            Map.of("id", "a", "address", "192.0.2.1:3128"),
            Map.of("id", "b", "address", "192.0.2.2:3128"),
            Map.of("id", "c", "address", "192.0.2.3:3128")))));
        config = ConfigLoader.fromValues(values).egress();
        pools = new NodePools(config, NodeSelector.weighted());
        metrics = new EgressMetrics(registry, pools);
        policy = new FailurePolicy(config, metrics);
    }

    @AfterEach
    void close() throws IOException
    {
        for (SocketChannel channel : channels)
            channel.close();
    }

    private TunnelAttempts attempts(String host, TunnelAttempts.Opener opener) throws Exception
    {
        EgressConfig.Route route = config.routes().stream().filter(r -> r.domains().contains(host)).findFirst().orElseThrow();
        EgressPlan plan = new EgressPlan(EgressPlan.Entry.CONNECT, route, new PinnedTarget("https", host, InetAddress.getByName("192.0.2.10"), 443),
            "", Optional.empty(), Optional.empty(), new EgressPlan.Timeouts(config.connectTimeout(), route.idleTimeout(), route.timeout()));
        return new TunnelAttempts(plan, new Attempts(plan, pools, metrics, new TargetFailures()), policy, opener);
    }

    /** Records which node was asked and hands out an unconnected channel. */
    private SocketChannel open(EgressConfig.Node node) throws IOException
    {
        opened.add(node.id());
        SocketChannel channel = SocketChannel.open();
        channels.add(channel);
        return channel;
    }

    private double count(String outcome)
    {
        return registry.find("sandgate.egress.requests").tag("outcome", outcome).counters().stream().mapToDouble(c -> c.count()).sum();
    }

    @Test
    void nodeThatDoesNotAnswerOrCloses_isTriedOnAnotherNode_withinTheRoutesRetries() throws Exception
    {
        TunnelAttempts attempts = attempts("retry.test", this::open);

        assertNotNull(attempts.first());
        assertNotNull(attempts.failed(new TimeoutException("handshake")), "one retry on another node");
        assertNull(attempts.failed(new IOException("egress node refused the tunnel: 502")), "the route allows no more");

        assertEquals(2, opened.size());
        assertEquals(2, opened.stream().distinct().count(), "each attempt on a node not tried yet: " + opened);
        assertEquals(1, count("unanswered"), "silent: judged by whether another node opens the tunnel");
        assertEquals(1, count("node_failure"), "closed without an answer: the node's doing");
        assertEquals(HttpStatus.BAD_GATEWAY_502, attempts.exhausted().status());
    }

    @Test
    void openedTunnel_countsAsTheNodesSuccess() throws Exception
    {
        TunnelAttempts attempts = attempts("once.test", this::open);

        assertNotNull(attempts.first());
        attempts.opened();

        assertEquals(1, count("ok"));
        assertEquals(0, count("node_failure"));
    }

    @Test
    void channelThatCannotEvenBeOpened_isAFailedAttempt_andTheNextNodeIsTriedAtOnce() throws Exception
    {
        TunnelAttempts attempts = attempts("retry.test", node ->
        {
            if (opened.isEmpty())
            {
                opened.add(node.id());
                throw new ConnectException("refused at once");
            }
            return open(node);
        });

        assertNotNull(attempts.first(), "the second node's channel");
        assertEquals(2, opened.size());
        assertEquals(1, count("node_failure"));
    }

    @Test
    void nodesRefusalOfATunnel_isBlamedOnlyWhenAnotherNodeOpensOne() throws Exception
    {
        TunnelAttempts unreachable = attempts("retry.test", this::open);
        assertNotNull(unreachable.first());
        unreachable.answered();
        assertNotNull(unreachable.failed(new TunnelReply.TunnelRefused("503")), "nothing was sent: another node may try");
        unreachable.answered();
        assertNull(unreachable.failed(new TunnelReply.TunnelRefused("503")));
        for (String id : opened)
            assertEquals(0, pools.node(id).recentResults(), "a target that no node reaches is not the nodes' fault: " + id);
        assertEquals(0, count("node_failure"));

        opened.clear();
        TunnelAttempts reachable = attempts("retry.test", this::open);
        assertNotNull(reachable.first());
        reachable.answered();
        assertNotNull(reachable.failed(new TunnelReply.TunnelRefused("503")));
        reachable.opened();
        NodeState refuser = pools.node(opened.get(0));
        assertEquals(1, refuser.recentResults());
        assertEquals(0.0, refuser.successRate(), "another node reached the target: the refusal was the node's own failure");
    }

    @Test
    void routeWithoutRetries_endsAfterItsFirstNode() throws Exception
    {
        TunnelAttempts attempts = attempts("once.test", this::open);

        assertNotNull(attempts.first());
        assertNull(attempts.failed(new ConnectException("refused")));
        assertEquals(1, opened.size());
    }
}
