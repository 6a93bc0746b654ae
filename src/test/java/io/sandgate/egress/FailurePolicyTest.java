package io.sandgate.egress;

import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.WritePendingException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLHandshakeException;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.EgressConfig;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.client.HttpResponseException;
import org.eclipse.jetty.http.HttpFields;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
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
            Map.of("match", Map.of("domains", List.of("post.test")), "upstream", "main", "retry", 2, "retry_non_idempotent", true),
            Map.of("match", Map.of("domains", List.of("default.test")), "upstream", "main"),
            Map.of("match", Map.of("domains", List.of("none.test")), "upstream", "main", "retry", 0)));
        values.put("egress.pools", Map.of("main", Map.of("nodes", List.of(Map.of("id", "n1", "address", "192.0.2.1:3128")))));
        config = ConfigLoader.fromValues(values).egress();
        policy = new FailurePolicy(config, new EgressMetrics(registry, new NodePools(config, NodeSelector.weighted())));
    }

    private EgressConfig.Route route(String host)
    {
        return config.routes().stream().filter(r -> r.domains().contains(host)).findFirst().orElseThrow();
    }

    /** An attempt whose tunnel did not open, with or without a byte from the node. */
    private FailurePolicy.Verdict unsent(Throwable failure, boolean nodeAnswered, String method, boolean replayable, int attempts, String host)
    {
        return policy.judge(new FailurePolicy.Attempt(failure, false, nodeAnswered, false, method, replayable, attempts, route(host)));
    }

    /** An attempt whose request had started out through an open tunnel. */
    private FailurePolicy.Verdict sent(Throwable failure, String method, String host)
    {
        return policy.judge(new FailurePolicy.Attempt(failure, true, true, false, method, true, 1, route(host)));
    }

    /** A first attempt of a GET without body on the retrying route, its tunnel not open, the node silent. */
    private FailurePolicy.Verdict get(Throwable failure)
    {
        return unsent(failure, false, "GET", true, 1, "retry.test");
    }

    @Test
    void nodeRefusedDroppedOrNeverConnectedBeforeAnyByte_isBlamed_andAGetGoesToAnotherNode()
    {
        for (Throwable failure : List.of(new ConnectException("refused"), new IOException(new EOFException()), new SocketTimeoutException("Connect Timeout")))
        {
            FailurePolicy.Verdict verdict = get(failure);
            assertEquals(FailurePolicy.Outcome.NODE_FAILURE, verdict.outcome(), failure.toString());
            assertTrue(verdict.retry(), failure.toString());
        }
        assertEquals(3, registry.get("sandgate.egress.retries").counter().count());
    }

    @Test
    void nodeSilentOnAConnectionItAccepted_isJudgedAsARefusal_andAnotherNodeIsTried()
    {
        // A hung node, or a live one whose connect to a blackholed target has not given up yet.
        FailurePolicy.Verdict verdict = get(new TimeoutException("Idle timeout 1000 ms"));
        assertEquals(FailurePolicy.Outcome.UNANSWERED, verdict.outcome());
        assertFalse(verdict.blamesNode());
        assertTrue(verdict.retry(), "nothing reached the target");
    }

    @Test
    void nodeThatRefusesTheTunnelWithAnAnswer_isNotBlamed_butAnotherNodeIsTried()
    {
        // tinyproxy's 500/503 or squid's 503 + X-Squid-Error when the target refuses: the node is alive.
        for (Throwable failure : List.of(new HttpResponseException("Unexpected 503 for CONNECT", null), new TunnelReply.TunnelRefused("503")))
        {
            // The refusal is the node's answer, even when its bytes were not yet noted as one.
            for (boolean noted : List.of(true, false))
            {
                FailurePolicy.Verdict verdict = unsent(failure, noted, "GET", true, 1, "retry.test");
                assertEquals(FailurePolicy.Outcome.REFUSED, verdict.outcome(), failure.toString());
                assertFalse(verdict.blamesNode());
                assertTrue(verdict.retry(), "nothing reached the target: " + failure);
            }
        }
    }

    @Test
    void nodeThatHasAnsweredSinceTheAttemptStarted_isNotBlamedForADropOrSilence()
    {
        assertEquals(FailurePolicy.Outcome.FAILURE, unsent(new TimeoutException(), true, "GET", true, 1, "retry.test").outcome());
        assertEquals(FailurePolicy.Outcome.FAILURE, unsent(new IOException(new EOFException()), true, "GET", true, 1, "retry.test").outcome());
    }

    @Test
    void whateverHappensInsideAnOpenTunnel_isTheTargets()
    {
        for (Throwable failure : List.of(new TimeoutException(), new IOException(new EOFException()), new ClosedChannelException(),
            new IOException("target reset the stream")))
            assertEquals(FailurePolicy.Outcome.FAILURE, sent(failure, "GET", "retry.test").outcome(), failure.toString());
    }

    @Test
    void insideAnOpenTunnel_onlyADroppedConnectionIsRetried_andOnlyForIdempotentMethods()
    {
        assertTrue(sent(new IOException(new EOFException()), "GET", "retry.test").retry(), "the node carrying it may have died");
        assertFalse(sent(new TimeoutException(), "GET", "retry.test").retry(), "through another node the target would be as slow");
        assertFalse(sent(new IOException(new EOFException()), "POST", "retry.test").retry(), "the POST may have done its work");
        assertTrue(sent(new IOException(new EOFException()), "POST", "post.test").retry(), "the route says POST may be repeated");
    }

    @Test
    void nodesOwnErrorPage_onPlainHttp_isTheTargetUnreachable_retriedOnlyForIdempotentMethods()
    {
        HttpFields squid = HttpFields.build().put("Server", "squid/5.7").put("X-Squid-Error", "ERR_CONNECT_FAIL 111");
        HttpFields tinyproxy = HttpFields.build().put("Server", "tinyproxy/1.11.1");
        HttpFields target = HttpFields.build().put("Server", "Jetty(12)").put("Via", "1.1 t1 (tinyproxy/1.11.1)");
        assertNotNull(policy.nodeError(503, "Service Unavailable", squid));
        assertNotNull(policy.nodeError(500, "Unable to connect", tinyproxy));
        assertNull(policy.nodeError(500, "Server Error", target), "the target's own 5xx, relayed");
        assertNull(policy.nodeError(403, "Forbidden", squid), "a 4xx is never taken for the node's");

        FailurePolicy.NodeError page = policy.nodeError(500, "Unable to connect", tinyproxy);
        FailurePolicy.Verdict get = sent(page, "GET", "retry.test");
        assertEquals(FailurePolicy.Outcome.REFUSED, get.outcome(), "judged as a refused tunnel is");
        assertTrue(get.retry(), "another node may reach the target");
        assertFalse(sent(page, "POST", "retry.test").retry(), "the node may have passed the POST on before giving up");
        assertEquals("egress_target_unreachable", policy.answer(page, get, 1).code());
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
        FailurePolicy.Verdict verdict = sent(new IOException(new WritePendingException()), "POST", "retry.test");
        assertEquals(FailurePolicy.Outcome.FAILURE, verdict.outcome());
        assertTrue(verdict.retry());
    }

    @Test
    void answerAlreadyBegunToTheAgent_isNeverRetried()
    {
        assertFalse(policy.judge(new FailurePolicy.Attempt(new ConnectException(), false, false, true, "GET", true, 1, route("retry.test"))).retry());
    }

    @Test
    void anyMethodWhoseTunnelDidNotOpen_isRetried_ifItsBodyIsHeld()
    {
        ConnectException refused = new ConnectException();
        assertTrue(unsent(refused, false, "POST", true, 1, "retry.test").retry(), "nothing of the POST reached the target");
        assertFalse(unsent(refused, false, "POST", false, 1, "retry.test").retry(), "a body streamed on and not held cannot be sent again");
    }

    @Test
    void targetsTlsFailure_isNeitherBlamedNorRetried()
    {
        FailurePolicy.Verdict verdict = unsent(new SSLHandshakeException("bad certificate"), true, "GET", true, 1, "retry.test");
        assertEquals(FailurePolicy.Outcome.FAILURE, verdict.outcome());
        assertFalse(verdict.retry());
    }

    @Test
    void routesRetryCount_boundsTheAttempts_andIsOneByDefault()
    {
        ConnectException refused = new ConnectException();
        assertTrue(unsent(refused, false, "GET", true, 2, "retry.test").retry());
        assertFalse(unsent(refused, false, "GET", true, 3, "retry.test").retry(), "first attempt and two retries");
        assertTrue(unsent(refused, false, "GET", true, 1, "default.test").retry(), "one retry when the route says nothing");
        assertFalse(unsent(refused, false, "GET", true, 2, "default.test").retry());
        assertFalse(unsent(refused, false, "GET", true, 1, "none.test").retry(), "retry: 0 means none");
    }

    @Test
    void tunnelThatDidNotOpen_isRetriedWhateverTheMethod_andBlamesOnlyASilentNode()
    {
        FailurePolicy.Verdict refused = policy.judge(FailurePolicy.Attempt.tunnel(new TunnelReply.TunnelRefused("403"), true, 1, route("retry.test")));
        assertFalse(refused.blamesNode());
        assertTrue(refused.retry());
        assertTrue(policy.judge(FailurePolicy.Attempt.tunnel(new ConnectException(), false, 1, route("retry.test"))).blamesNode());
        assertFalse(policy.judge(FailurePolicy.Attempt.tunnel(new IOException(), false, 3, route("retry.test"))).retry());
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
        GatewayException unreachable = policy.answer(new HttpResponseException("Unexpected 503 for CONNECT", null),
            new FailurePolicy.Verdict(FailurePolicy.Outcome.REFUSED, false), 2);
        assertEquals(502, unreachable.status());
        assertEquals("egress_target_unreachable", unreachable.code());
        GatewayException writeRefused = policy.answer(new WritePendingException(), new FailurePolicy.Verdict(FailurePolicy.Outcome.FAILURE, false), 2);
        assertEquals(502, writeRefused.status(), "a write Jetty refused on a fresh tunnel is no internal error");
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
