package io.sandgate.egress;

import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.channels.WritePendingException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.EgressConfig;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.client.HttpResponseException;
import org.eclipse.jetty.http.HttpFields;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Who is blamed for a failed attempt and when another node is tried, one reason per test. */
class FailurePolicyTest
{
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final EgressConfig config;
    private final FailurePolicy policy;

    FailurePolicyTest()
    {
        Map<String, Object> values = new HashMap<>();
        values.put("egress.retry-backoff", "40ms");
        values.put("egress.routes", List.of(
            Map.of("match", Map.of("domains", List.of("retry.test")), "upstream", "main", "retry", 2),
            Map.of("match", Map.of("domains", List.of("post.test")), "upstream", "main", "retry", 2, "retry_non_idempotent", true)));
        values.put("egress.pools", Map.of("main", Map.of("nodes", List.of(Map.of("id", "n1", "address", "192.0.2.1:3128")))));
        config = ConfigLoader.fromValues(values).egress();
        policy = new FailurePolicy(config, new EgressMetrics(registry, new NodePools(config, NodeSelector.weighted())));
    }

    private EgressConfig.Route route(String host)
    {
        return config.routes().stream().filter(r -> r.domains().contains(host)).findFirst().orElseThrow();
    }

    /** An attempt through a node, no answer begun. */
    private FailurePolicy.Verdict judge(Throwable failure, String method, boolean hasBody, int attempts, String host)
    {
        return policy.judge(new FailurePolicy.Attempt(failure, false, 0, false, method, hasBody, attempts, route(host)));
    }

    /** A first attempt of a GET without body on the retrying route, no answer begun. */
    private FailurePolicy.Verdict get(Throwable failure)
    {
        return judge(failure, "GET", false, 1, "retry.test");
    }

    @Test
    void connectRefusedOrDropped_blamesTheNode_andAGetGoesToAnotherNode()
    {
        for (Throwable failure : List.of(new ConnectException("refused"), new IOException(new EOFException()),
            new HttpResponseException("CONNECT refused", null), new FailurePolicy.NodeFailure(502)))
        {
            FailurePolicy.Verdict verdict = get(failure);
            assertEquals(FailurePolicy.Outcome.NODE_FAILURE, verdict.outcome(), failure.toString());
            assertTrue(verdict.retry(), failure.toString());
        }
        assertEquals(4, registry.get("sandgate.egress.retries").counter().count());
    }

    @Test
    void silence_isTheNodesBeforeTheAnswerBegins_andTheTargetsAfter()
    {
        assertTrue(get(new TimeoutException()).blamesNode());
        FailurePolicy.Verdict slowTarget = policy.judge(new FailurePolicy.Attempt(new TimeoutException(), false, 200, false, "GET", false, 1,
            route("retry.test")));
        assertEquals(FailurePolicy.Outcome.FAILURE, slowTarget.outcome());
        assertFalse(slowTarget.retry(), "through another node the target would be as slow");
    }

    @Test
    void targetsOwnFailure_isNotTheNodes_andNotRetried()
    {
        FailurePolicy.Verdict verdict = get(new IOException("target reset the stream"));
        assertEquals(FailurePolicy.Outcome.FAILURE, verdict.outcome());
        assertFalse(verdict.retry());
    }

    @Test
    void blockedBody_isTheAgentsDoing()
    {
        FailurePolicy.Verdict verdict = get(new GatewayException(422, "secret_detected", "blocked"));
        assertEquals(FailurePolicy.Outcome.BLOCKED, verdict.outcome());
        assertTrue(verdict.outcome().nodeOk());
        assertFalse(verdict.retry());
    }

    @Test
    void requestFailedUnsentOnAFreshTunnel_isRetried_withoutBlame()
    {
        FailurePolicy.Verdict verdict = get(new IOException(new WritePendingException()));
        assertEquals(FailurePolicy.Outcome.FAILURE, verdict.outcome());
        assertTrue(verdict.retry());
    }

    @Test
    void answerAlreadyBegunToTheAgent_isNeverRetried()
    {
        assertFalse(policy.judge(new FailurePolicy.Attempt(new ConnectException(), false, 0, true, "GET", false, 1, route("retry.test"))).retry());
    }

    @Test
    void postOrBody_isNotRetried_unlessTheRouteSaysSo()
    {
        ConnectException refused = new ConnectException();
        assertFalse(judge(refused, "POST", false, 1, "retry.test").retry());
        assertFalse(judge(refused, "PUT", true, 1, "retry.test").retry(), "a streamed body cannot be replayed");
        assertTrue(judge(refused, "POST", false, 1, "post.test").retry());
    }

    @Test
    void routesRetryCount_boundsTheAttempts()
    {
        ConnectException refused = new ConnectException();
        assertTrue(judge(refused, "GET", false, 2, "retry.test").retry());
        assertFalse(judge(refused, "GET", false, 3, "retry.test").retry(), "first attempt and two retries");
    }

    @Test
    void tunnelThatDidNotOpen_blamesTheNode_andIsRetriedWhateverTheMethod()
    {
        FailurePolicy.Verdict verdict = policy.judge(FailurePolicy.Attempt.tunnel(new IOException("egress node refused the tunnel: 403"), 1, route("retry.test")));
        assertTrue(verdict.blamesNode());
        assertTrue(verdict.retry());
        assertFalse(policy.judge(FailurePolicy.Attempt.tunnel(new IOException(), 3, route("retry.test"))).retry());
    }

    @Test
    void spentBudget_deniesRetries_andCountsThem()
    {
        int allowed = 0;
        for (int i = 0; i < 50; i++)
        {
            if (get(new ConnectException()).retry())
                allowed++;
        }
        assertEquals(10, allowed, "the reserve, with no requests to earn more");
        assertEquals(40, registry.get("sandgate.egress.retries.denied").counter().count());
        for (int i = 0; i < 10; i++)
            policy.exchangeStarted();
        int earned = 0;
        for (int i = 0; i < 10; i++)
        {
            if (get(new ConnectException()).retry())
                earned++;
        }
        assertTrue(earned >= 1 && earned <= 2, "ten requests at 20 % earn two retries, give or take rounding: " + earned);
    }

    @Test
    void nodesOwnAnswer_isA5xxMarkedByANodeErrorHeader()
    {
        HttpFields marked = HttpFields.build().add("X-Squid-Error", "ERR_CONNECT_FAIL 111");
        assertTrue(policy.isNodesOwnAnswer(503, marked));
        assertFalse(policy.isNodesOwnAnswer(404, marked), "a 4xx is never the node's");
        assertFalse(policy.isNodesOwnAnswer(503, HttpFields.build().add("Server", "target")), "an unmarked 5xx is the target's");
    }

    @Test
    void answer_saysTheNodeFailed_butATimeoutStaysATimeout()
    {
        FailurePolicy.Verdict blamed = new FailurePolicy.Verdict(FailurePolicy.Outcome.NODE_FAILURE, false);
        GatewayException nodeFailed = policy.answer(new ConnectException(), blamed, 3);
        assertEquals(502, nodeFailed.status());
        assertEquals("egress_node_failed", nodeFailed.code());
        assertEquals("the egress node failed (tried 3)", nodeFailed.getMessage());
        assertEquals(504, policy.answer(new TimeoutException(), blamed, 1).status());
        GatewayException notBlamed = policy.answer(new IOException(), new FailurePolicy.Verdict(FailurePolicy.Outcome.FAILURE, false), 1);
        assertEquals("upstream_failed", notBlamed.code());
        assertTrue(notBlamed.getMessage().contains("the target or its egress node"), notBlamed.getMessage());
    }

    @Test
    void backoff_doublesPerRetry_withFullJitter()
    {
        for (int i = 0; i < 200; i++)
        {
            assertTrue(policy.backoffMillis(0) <= 40);
            assertTrue(policy.backoffMillis(2) <= 160);
        }
    }
}
