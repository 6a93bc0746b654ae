package io.sandgate.store;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.sandgate.core.Leadership;
import io.sandgate.mcp.RawSseClient;
import io.sandgate.testing.BrowserRequests;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RedisCluster;
import io.sandgate.testing.RedisSentinels;
import io.sandgate.testing.ReplicatedRedis;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxBackend;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static io.sandgate.mcp.RawSseClient.call;
import static io.sandgate.testing.BrowserRequests.servedBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What every store must do on a Redis of several processes, tested with two gateway replicas on
 * each {@link ReplicatedRedis}, a Redis Cluster and a Sentinel set-up: routes written by {@code redis-cli} reach both within a second, MCP
 * messages POSTed on one reach the stream on the other once, sticky pins, redeemed grants and
 * leadership are shared; and when the master holding the routes dies under traffic, cached routes
 * keep routing, accepted MCP messages are delivered once, and writes resume once a replica is
 * promoted, without restarting a gateway. Each topology is started once for all its tests; the
 * fault test runs last, as it leaves a master dead.
 */
@ParameterizedClass
@EnumSource
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReplicatedRedisIT
{
    enum Topology
    {
        CLUSTER(RedisCluster::start),
        SENTINEL(RedisSentinels::start);

        private final Supplier<ReplicatedRedis> start;

        Topology(Supplier<ReplicatedRedis> start)
        {
            this.start = start;
        }
    }

    private static final String ROUTES = "vnc_sandboxes";
    private static final Duration WITHIN_A_SECOND = Duration.ofMillis(1000);
    private static final Duration FAILOVER = Duration.ofSeconds(20);
    private static final RawSseClient MCP = new RawSseClient("stream");

    static ReplicatedRedis redis;
    static SandboxBackend a;
    static SandboxBackend b;
    static McpUpstream upstream;
    static RunningGateway replicaA;
    static RunningGateway replicaB;

    @RegisterExtension
    static final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .redisStore(redis)
        .set("store.redis.timeout", "500ms")
        .set("ingress.cookie.secret", "replicated-redis-it-secret-0123456789")
        .set("mcp.servers", List.of(Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable"))));

    @Parameter
    Topology topology;

    @BeforeParameterizedClassInvocation
    static void startReplicas(Topology topology) throws Exception
    {
        redis = topology.start.get();
        a = SandboxBackend.start("a");
        b = SandboxBackend.start("b");
        upstream = McpUpstream.start();
        replicaA = gateways.startAnother();
        replicaB = gateways.startAnother();
    }

    @AfterParameterizedClassInvocation
    static void stopAll() throws Exception
    {
        // The replicas before what they use; the extension would stop them only after this.
        Fixtures.closeInOrder(replicaA, replicaB, upstream, a, b, redis);
        redis = null;
        replicaA = null;
        replicaB = null;
    }

    private static boolean bothServe(String path, String expected)
    {
        return servedBy(replicaA, path).equals(expected) && servedBy(replicaB, path).equals(expected);
    }

    private static boolean bothHearKeyspaceEvents()
    {
        return List.of(replicaA, replicaB).stream().allMatch(replica ->
        {
            try
            {
                return BrowserRequests.get(replica.uri(), "/readyz").body().contains("changes seen by keyspace notifications");
            }
            catch (Exception x)
            {
                return false;
            }
        });
    }

    /**
     * Writes with redis-cli, then returns how long until both replicas route sandbox {@code id} to
     * {@code expected} (none: null), at most a second after the write. Asked of their route stores
     * in process, as their routing asks: an HTTP request per poll would add the machine's load to
     * what is measured. The requests are checked after.
     */
    private static long propagation(String id, SandboxBackend expected, String... write)
    {
        return propagation(WITHIN_A_SECOND, id, expected, write);
    }

    private static long propagation(Duration within, String id, SandboxBackend expected, String... write)
    {
        Optional<String> target = Optional.ofNullable(expected).map(SandboxBackend::hostPort);
        long start = System.nanoTime();
        redis.cli(write);
        try
        {
            await().atMost(within).pollInterval(Duration.ofMillis(10))
                .until(() -> routedTo(replicaA, id).equals(target) && routedTo(replicaB, id).equals(target));
        }
        catch (ConditionTimeoutException x)
        {
            throw new AssertionError("sandbox " + id + " not routed to " + target + " by both replicas within " + within.toMillis() + " ms: A routes to "
                + routedToNow(replicaA, id) + ", B to " + routedToNow(replicaB, id) + "; A's readiness " + readiness(replicaA) + ", B's "
                + readiness(replicaB) + "\n" + redis.diagnostics(), x);
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        String served = expected == null ? "404" : expected.name();
        assertEquals(served, servedBy(replicaA, "/vnc/" + id + "/"));
        assertEquals(served, servedBy(replicaB, "/vnc/" + id + "/"));
        return millis;
    }

    /** What the replica routes the sandbox to, or why it cannot say: for the report of a propagation that did not happen. */
    private static String routedToNow(RunningGateway replica, String id)
    {
        try
        {
            return routedTo(replica, id).toString();
        }
        catch (RuntimeException x)
        {
            return x.toString();
        }
    }

    private static String readiness(RunningGateway replica)
    {
        try
        {
            return BrowserRequests.get(replica.uri(), "/readyz").body();
        }
        catch (Exception x)
        {
            return x.toString();
        }
    }

    private static Optional<String> routedTo(RunningGateway replica, String id)
    {
        return replica.sandgate().store().routes().find(id).map(route -> route.host() + ":" + route.port());
    }

    @Test
    @Order(1)
    void plainHsetAndHdelByRedisCli_reachBothReplicasWithinASecond_evenForCachedRoutes()
    {
        redis.cli("HSET", ROUTES, "8001", a.hostPort());
        await().atMost(Duration.ofSeconds(5)).until(() -> bothServe("/vnc/8001/", "a"));
        // Within a second by notifications, not by polling: each replica says which it relies on.
        await().atMost(Duration.ofSeconds(5)).until(ReplicatedRedisIT::bothHearKeyspaceEvents);

        long moved = propagation("8001", b, "HSET", ROUTES, "8001", b.hostPort());
        long deleted = propagation("8001", null, "HDEL", ROUTES, "8001");
        System.out.printf("[%s] redis-cli HSET reached both replicas in %d ms, HDEL in %d ms%n", topology, moved, deleted);
    }

    @Test
    @Order(2)
    void mcpMessagesPostedOnB_reachTheStreamOnA_exactlyOnce() throws Exception
    {
        RawSseClient.Stream onA = MCP.stream(replicaA, "", null);
        String sessionId = MCP.openSession(onA, replicaB);
        int calls = 50;
        for (int i = 1; i <= calls; i++)
            assertEquals(202, MCP.post(replicaB, sessionId, call(i)), "call " + i);

        Map<Integer, Integer> answered = new HashMap<>();
        RawSseClient.collect(onA, answered, calls);
        assertEquals(calls, answered.size(), "answers: " + answered.keySet());
        assertTrue(answered.values().stream().allMatch(n -> n == 1), "answers delivered twice: " + answered);
    }

    @Test
    @Order(3)
    void stickyPins_redeemedGrants_andLeadership_areSharedByBothReplicas()
    {
        Store onA = replicaA.sandgate().store();
        Store onB = replicaB.sandgate().store();
        Duration ttl = Duration.ofMinutes(1);
        // Several keys, so that in a cluster they fall on several masters.
        for (int agent = 0; agent < 10; agent++)
        {
            onA.sticky().put("agent-" + agent, "node-" + agent, ttl);
            assertEquals(Optional.of("node-" + agent), onB.sticky().get("agent-" + agent, ttl), "pin of agent-" + agent + " seen on B");
        }

        Instant until = Instant.now().plus(Duration.ofMinutes(5));
        for (int grant = 0; grant < 10; grant++)
        {
            assertTrue(onA.redemptions().redeem("nonce-" + topology + "-" + grant, until), "first redemption, on A");
            assertFalse(onB.redemptions().redeem("nonce-" + topology + "-" + grant, until), "replay on B");
        }

        try (Leadership leaderA = onA.leadership("replicated-it"); Leadership leaderB = onB.leadership("replicated-it"))
        {
            leaderA.run(() -> { }, () -> { });
            leaderB.run(() -> { }, () -> { });
            await().atMost(Duration.ofSeconds(5)).until(() -> leaderA.isLeader() || leaderB.isLeader());
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> leaderA.isLeader() != leaderB.isLeader());
        }
    }

    @Test
    @Order(4)
    void masterOfTheRoutesDies_cachedRoutesKeepRouting_mcpMessagesArriveOnce_andWritesResumeAfterPromotion() throws Exception
    {
        redis.cli("HSET", ROUTES, "8002", a.hostPort());
        await().atMost(Duration.ofSeconds(5)).until(() -> bothServe("/vnc/8002/", "a"));
        RawSseClient.Stream onA = null;
        String sessionId = null;
        // In a cluster, a session whose keys live on the master about to die, so its messages cross the failover.
        for (int attempt = 0; attempt < 30 && (sessionId == null || redis.masterOf("{" + sessionId + "}") != redis.masterOf(ROUTES)); attempt++)
        {
            onA = MCP.stream(replicaA, "", null);
            sessionId = MCP.openSession(onA, replicaB);
        }
        assertEquals(redis.masterOf(ROUTES), redis.masterOf("{" + sessionId + "}"), "a session on the master of the routes");

        // A browser's worth of ingress traffic on both replicas all through the failover.
        Map<String, AtomicInteger> ingress = new ConcurrentHashMap<>();
        ScheduledExecutorService traffic = Executors.newSingleThreadScheduledExecutor();
        traffic.scheduleWithFixedDelay(() ->
        {
            for (Gateway replica : List.of(replicaA, replicaB))
                ingress.computeIfAbsent(servedBy(replica, "/vnc/8002/"), k -> new AtomicInteger()).incrementAndGet();
        }, 0, 20, TimeUnit.MILLISECONDS);

        int killed = redis.killMasterOf(ROUTES);
        long killedAt = System.nanoTime();
        assertEquals("503", servedBy(replicaA, "/vnc/8009/"), "a route not cached, whose hash has no master for now");
        int calls = 40;
        AtomicInteger refused = new AtomicInteger();
        String session = sessionId;
        for (int i = 1; i <= calls; i++)
        {
            String body = call(i);
            // A POST refused while the session's master is gone (503) was not accepted: the client sends it again.
            await().atMost(FAILOVER).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100)).until(() ->
            {
                int status = MCP.post(replicaB, session, body);
                if (status != 202)
                    refused.incrementAndGet();
                return status == 202;
            });
        }
        int promoted = redis.awaitPromotion(ROUTES, FAILOVER);
        long promotedAfter = (System.nanoTime() - killedAt) / 1_000_000;

        Map<Integer, Integer> answered = new HashMap<>();
        RawSseClient.collect(onA, answered, calls);
        List<Integer> missing = new ArrayList<>();
        for (int i = 1; i <= calls; i++)
        {
            if (!answered.containsKey(i))
                missing.add(i);
        }
        assertEquals(List.of(), missing, "answers never delivered (the stream ended); delivered: " + answered + "\n" + redis.diagnostics());
        assertEquals(calls, answered.size(), "answers to nothing asked now (a replay?): " + answered);
        assertTrue(answered.values().stream().allMatch(n -> n == 1), "answers delivered twice: " + answered);

        // Writes by anyone resume, and reach both replicas once they hear the new master.
        await().atMost(FAILOVER).until(ReplicatedRedisIT::bothHearKeyspaceEvents);
        long recoveredAfter = (System.nanoTime() - killedAt) / 1_000_000;
        traffic.shutdown();
        assertTrue(traffic.awaitTermination(10, TimeUnit.SECONDS));
        assertEquals(Set.of("a"), ingress.keySet(), "the cached route throughout: " + ingress);
        // Just after a failover a replica's client may still be learning the new topology (Redisson
        // looks at a cluster's every second), and its re-read of the routes waits for that.
        long moved = propagation(Duration.ofSeconds(3), "8002", b, "HSET", ROUTES, "8002", b.hostPort());
        redis.cli("HSET", ROUTES, "8003", a.hostPort());
        assertEquals("a", servedBy(replicaB, "/vnc/8003/"), "a route not cached before, read from the new master");

        System.out.printf("[%s] master %d killed: replica %d promoted after %d ms, both gateways on keyspace events of it after %d ms, "
                + "%d ingress requests all routed (%s), %d MCP POSTs refused meanwhile and resent, HSET then reached both in %d ms%n",
            topology, killed, promoted, promotedAfter, recoveredAfter, ingress.values().stream().mapToInt(AtomicInteger::get).sum(), ingress.keySet(),
            refused.get(), moved);
    }
}
