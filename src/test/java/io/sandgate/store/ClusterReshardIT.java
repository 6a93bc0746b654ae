package io.sandgate.store;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.sandgate.mcp.RawSseClient;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RedisCluster;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.sandgate.mcp.RawSseClient.call;
import static io.sandgate.testing.BrowserRequests.servedBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Redis Cluster resharded under the gateways, as an operator adding a master does: the slot
 * holding an MCP session's keys, and the slot of the route hash, move to another master while two
 * replicas serve them. The session's stream on one replica keeps hearing what the other appends
 * (with the wake-ups on shard channels, it heard nothing after the move: see {@link WakeUps}), and
 * a plain HSET after the move still reaches both replicas within a second.
 */
class ClusterReshardIT
{
    private static final String ROUTES = "vnc_sandboxes";
    private static final RawSseClient MCP = new RawSseClient("stream");

    static RedisCluster redis;
    static SandboxBackend a;
    static SandboxBackend b;
    static McpUpstream upstream;

    @RegisterExtension
    static final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .redisStore(redis)
        .set("store.redis.timeout", "500ms")
        .set("ingress.cookie.secret", "cluster-reshard-it-secret-0123456789")
        .set("mcp.servers", List.of(Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable"))));

    @BeforeAll
    static void startCluster() throws Exception
    {
        redis = RedisCluster.start();
        a = SandboxBackend.start("a");
        b = SandboxBackend.start("b");
        upstream = McpUpstream.start();
    }

    @AfterAll
    static void stopAll() throws Exception
    {
        Fixtures.closeInOrder(upstream, a, b, redis);
    }

    @Test
    void slotsMoveToAnotherMaster_mcpAnswersKeepArrivingOnce_andRouteWritesKeepReachingBothReplicas() throws Exception
    {
        RunningGateway replicaA = gateways.startAnother();
        RunningGateway replicaB = gateways.startAnother();
        RawSseClient.Stream onA = MCP.stream(replicaA, "", null);
        String sessionId = MCP.openSession(onA, replicaB);
        int calls = 30;
        for (int i = 1; i <= 10; i++)
            assertEquals(202, MCP.post(replicaB, sessionId, call(i)), "call " + i);

        int before = redis.masterOf("{" + sessionId + "}");
        int after = redis.moveSlotOf("{" + sessionId + "}");
        assertNotEquals(before, after);
        assertEquals(after, redis.masterOf("{" + sessionId + "}"), "the session's slot moved");
        redis.cli("HSET", ROUTES, "9001", a.hostPort());
        await().atMost(Duration.ofSeconds(5)).until(() -> servedBy(replicaA, "/vnc/9001/").equals("a") && servedBy(replicaB, "/vnc/9001/").equals("a"));
        redis.moveSlotOf(ROUTES);

        // The client sends again what is refused while the gateways learn where the slot went.
        for (int i = 11; i <= calls; i++)
        {
            String body = call(i);
            await().atMost(Duration.ofSeconds(10)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100))
                .until(() -> MCP.post(replicaB, sessionId, body) == 202);
        }
        // Each answer within the client's 15 s: the sessions' safety poll (30 s) is not what delivers them.
        Map<Integer, Integer> answered = new HashMap<>();
        RawSseClient.collect(onA, answered, calls);
        assertEquals(calls, answered.size(), "answers: " + answered);
        assertTrue(answered.values().stream().allMatch(n -> n == 1), "answers delivered twice: " + answered);

        long start = System.nanoTime();
        redis.cli("HSET", ROUTES, "9001", b.hostPort());
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(10))
            .until(() -> servedBy(replicaA, "/vnc/9001/").equals("b") && servedBy(replicaB, "/vnc/9001/").equals("b"));
        System.out.printf("[reshard] session's slot moved from master %d to %d; HSET after the route hash moved reached both replicas in %d ms%n",
            before, after, (System.nanoTime() - start) / 1_000_000);
    }
}
