package io.sandgate.egress;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

import io.micrometer.core.instrument.Counter;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static io.sandgate.egress.AgentPolicyIT.ADMIN;
import static io.sandgate.egress.AgentPolicyIT.ALPHA;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Agent policies and budgets with the Redis store: one policy and one count for every replica. */
class AgentPolicyAcrossReplicasIT
{
    @TempDir
    Path scratch;
    private RedisServerProcess redis;
    private TargetServer target;
    private ForwardProxy node;

    @RegisterExtension
    final GatewayExtension gateways = GatewayExtension.manual(config ->
        AgentPolicyIT.configure(config.redisStore(redis), AgentPolicyIT.secrets(scratch), target, node));

    @BeforeEach
    void start()
    {
        redis = RedisServerProcess.start();
        target = TargetServer.start();
        node = ForwardProxy.start("n1");
    }

    @AfterEach
    void stop()
    {
        node.close();
        target.close();
        redis.close();
    }

    private static HttpResponse<String> put(RunningGateway replica, String body) throws Exception
    {
        return AgentPolicyIT.admin(replica.uri(), "PUT", "alpha", body, ADMIN);
    }

    @Test
    void aPolicyChangedOnOneReplica_isInForceOnBoth_withinASecond() throws Exception
    {
        RunningGateway a = gateways.startAnother();
        RunningGateway b = gateways.startAnother();
        assertEquals(403, AgentPolicyIT.call(b.uri(), target, ALPHA, null).statusCode(), "configured: only *.example.org");

        assertEquals(200, put(a, "{\"domains\":[\"localhost\"]}").statusCode());
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(50))
            .until(() -> AgentPolicyIT.call(b.uri(), target, ALPHA, null).statusCode() == 200);
        assertEquals(200, AgentPolicyIT.call(a.uri(), target, ALPHA, null).statusCode());

        assertEquals(200, put(b, "{\"domains\":[\"api.example.org\"]}").statusCode());
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(50))
            .until(() -> AgentPolicyIT.call(a.uri(), target, ALPHA, null).statusCode() == 403);
        assertTrue(AgentPolicyIT.admin(a.uri(), "GET", "alpha", null, ADMIN).body().contains("api.example.org"));
    }

    @Test
    void requestsPerMinute_holdAcrossReplicas_inTotal() throws Exception
    {
        RunningGateway a = gateways.startAnother();
        RunningGateway b = gateways.startAnother();
        assertEquals(200, put(a, "{\"domains\":[\"localhost\"],\"budgets\":{\"requests_per_minute\":5}}").statusCode());
        await().atMost(Duration.ofSeconds(1)).until(() -> AgentPolicyIT.admin(b.uri(), "GET", "alpha", null, ADMIN).body().contains("\"requests_per_minute\":5"));
        int ok = 0;
        int over = 0;
        for (int i = 0; i < 12; i++)
        {
            int status = AgentPolicyIT.call((i % 2 == 0 ? a : b).uri(), target, ALPHA, null).statusCode();
            if (status == 200)
                ok++;
            else if (status == 429)
                over++;
        }
        assertEquals(5, ok, "five calls a minute in all, whichever replica takes them");
        assertEquals(7, over);
        assertEquals(5, target.requestLog().size());
    }

    @Test
    void responseBytes_countedOnOneReplica_refuseTheNextCallOnTheOther() throws Exception
    {
        RunningGateway a = gateways.startAnother();
        RunningGateway b = gateways.startAnother();
        assertEquals(200, put(a, "{\"budgets\":{\"response_bytes_per_hour\":300}}").statusCode());
        await().atMost(Duration.ofSeconds(1)).until(() -> AgentPolicyIT.admin(b.uri(), "GET", "alpha", null, ADMIN).body().contains("\"response_bytes_per_hour\":300"));
        assertEquals(200, AgentPolicyIT.call(a.uri(), target, ALPHA, "x".repeat(400)).statusCode());
        // A's bytes reach the store with A's next call or its flush, within a second or so.
        await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(200))
            .until(() -> AgentPolicyIT.call(b.uri(), target, ALPHA, null).statusCode() == 429);
        HttpResponse<String> over = AgentPolicyIT.call(b.uri(), target, ALPHA, null);
        assertEquals(429, over.statusCode());
        assertTrue(over.body().contains("response_bytes_per_hour"), over.body());
    }

    @Test
    void storeDown_callsWithABudgetGo_uncounted_andCounted() throws Exception
    {
        RunningGateway a = gateways.startAnother();
        assertEquals(200, put(a, "{\"domains\":[\"localhost\"],\"budgets\":{\"requests_per_minute\":1}}").statusCode());
        assertEquals(200, AgentPolicyIT.call(a.uri(), target, ALPHA, null).statusCode());
        assertEquals(429, AgentPolicyIT.call(a.uri(), target, ALPHA, null).statusCode());
        redis.kill();
        HttpResponse<String> open = AgentPolicyIT.call(a.uri(), target, ALPHA, null);
        assertEquals(200, open.statusCode(), "fail open: a budget is no wall; " + open.body());
        Counter unchecked = a.sandgate().metrics().get("sandgate.egress.agent.budget.unchecked").counter();
        assertTrue(unchecked.count() >= 1, "counted: " + unchecked.count());
        HttpResponse<String> refused = put(a, "{\"domains\":[\"localhost\"],\"mode\":\"report\"}");
        assertEquals(503, refused.statusCode(), refused.body());
        assertTrue(AgentPolicyIT.admin(a.uri(), "GET", "alpha", null, ADMIN).body().contains("\"mode\":\"enforce\""), "nothing changed");
    }
}
