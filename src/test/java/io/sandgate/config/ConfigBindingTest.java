package io.sandgate.config;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static io.sandgate.config.ConfigProblems.problems;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every value reaches its own component: values of one type (the durations of a record, its
 * counts, its names) are all set to different values here, so a swap anywhere between a key and
 * its record fails a test instead of compiling quietly.
 */
class ConfigBindingTest
{
    private static final Map<String, Object> POOLS = Map.of("p", Map.of("region", "eu",
        "nodes", List.of(Map.of("id", "n1", "address", "10.0.0.1:3128"), Map.of("id", "n2", "address", "10.0.0.2:3128", "region", "us", "weight", 7))));

    @Test
    void server_connectionCapAndHeadTimeout_apartFromTheOtherLimitsAndTimeouts()
    {
        ServerConfig server = ConfigLoader.fromValues(Map.of(
            "server.max-connections", "5000",
            "server.max-connections-per-client", "50",
            "server.head-timeout", "7s",
            "server.idle-timeout", "9s",
            "server.stop-timeout", "11s")).server();

        assertEquals(Optional.of(5000), server.maxConnections());
        assertEquals(50, server.maxConnectionsPerClient());
        assertEquals(Duration.ofSeconds(7), server.headTimeout());
        assertEquals(Duration.ofSeconds(9), server.idleTimeout());
        assertEquals(Duration.ofSeconds(11), server.stopTimeout());
    }

    @Test
    void server_connectionCap_derivedUnlessSet_andAHeadTimeoutByDefault()
    {
        ServerConfig server = ConfigLoader.fromValues(Map.of()).server();

        assertEquals(Optional.empty(), server.maxConnections());
        assertEquals(Duration.ofSeconds(30), server.headTimeout());
        assertTrue(problems(Map.of("server.head-timeout", "0s")).contains("server.head-timeout"));
        assertTrue(problems(Map.of("server.max-connections", "0")).contains("server.max-connections"));
    }

    @Test
    void egressHealth_eachDurationAndCount()
    {
        Map<String, Object> values = new HashMap<>();
        values.put("egress.health.tcp-interval", "1s");
        values.put("egress.health.tcp-timeout", "2s");
        values.put("egress.health.tcp-failures", "4");
        values.put("egress.health.http-interval", "3s");
        values.put("egress.health.http-url", "http://probe.example/");
        values.put("egress.health.slow-tls", "4s");
        values.put("egress.health.latency-window", "5");
        values.put("egress.health.jitter-down-weight", "6ms");
        values.put("egress.health.jitter-eject", "7ms");
        values.put("egress.health.passive-failures", "6");
        values.put("egress.health.passive-ejection-time", "8s");
        values.put("egress.health.recovery-steps", "20,100");
        values.put("egress.health.recovery-step-interval", "9s");
        values.put("egress.health.region-ejected-share", "0.3");
        values.put("egress.health.region-min-success", "0.9");

        EgressConfig.Health health = ConfigLoader.fromValues(values).egress().health();

        assertEquals(new EgressConfig.Health(Duration.ofSeconds(1), Duration.ofSeconds(2), 4, Duration.ofSeconds(3),
            Optional.of("http://probe.example/"), Duration.ofSeconds(4), 5, Duration.ofMillis(6), Duration.ofMillis(7), 6,
            Duration.ofSeconds(8), List.of(20, 100), Duration.ofSeconds(9), 0.3, 0.9), health);
    }

    @Test
    void egress_eachTopLevelValue()
    {
        EgressConfig egress = ConfigLoader.fromValues(Map.of(
            "egress.connect-timeout", "1s",
            "egress.first-byte-timeout", "2s",
            "egress.retry-budget", "0.1",
            "egress.retry-backoff", "3ms",
            "egress.node-error-headers", "X-A",
            "egress.tls.trust-store", "/trust.p12",
            "egress.tls.trust-store-password", "changeit-please",
            "egress.max-connections-per-node", "9",
            "egress.forward-proxy-port", "3128")).egress();

        assertEquals(Duration.ofSeconds(1), egress.connectTimeout());
        assertEquals(Duration.ofSeconds(2), egress.firstByteTimeout());
        assertEquals(0.1, egress.retryBudget());
        assertEquals(Duration.ofMillis(3), egress.retryBackoff());
        assertEquals(List.of("X-A"), egress.nodeErrorHeaders());
        assertEquals(Optional.of("/trust.p12"), egress.trustStore());
        assertEquals("changeit-please", egress.trustStorePassword().orElseThrow().reveal());
        assertEquals(9, egress.maxConnectionsPerNode());
        assertEquals(Optional.of(3128), egress.forwardProxyPort());
    }

    @Test
    void route_everyKeyOfTheTable_andTheDefaultsFromTheFlatKeys()
    {
        Map<String, Object> route = new HashMap<>();
        route.put("match", Map.of("domains", List.of("API.example.com", "*.example.org"), "task_type", "llm"));
        route.put("upstream", "p");
        route.put("timeout", "11s");
        route.put("idle_timeout", "12s");
        route.put("retry", 2);
        route.put("retry_non_idempotent", "yes");
        route.put("sticky_session", true);
        route.put("sticky_ttl", "13s");
        route.put("scheme", "HTTP");
        route.put("scan", "redact");
        route.put("scan_responses", "on");
        route.put("max_body_size", 2048);
        List<EgressConfig.Route> routes = ConfigLoader.fromValues(Map.of(
            "egress.pools", POOLS,
            "egress.routes", List.of(route, Map.of("match", Map.of("domains", List.of("*")), "upstream", "p")),
            "egress.timeout", "21s",
            "egress.first-byte-timeout", "22s",
            "egress.scan.mode", "report")).egress().routes();

        assertEquals(new EgressConfig.Route(List.of("api.example.com", "*.example.org"), Optional.of("llm"), "p", Duration.ofSeconds(11),
            Duration.ofSeconds(12), 2, true, true, Duration.ofSeconds(13), "http", Optional.empty(), EgressConfig.ScanMode.REDACT, true, 2048, false),
            routes.get(0));
        assertEquals(new EgressConfig.Route(List.of("*"), Optional.empty(), "p", Duration.ofSeconds(21), Duration.ofSeconds(22), 1,
            false, false, Duration.ofMinutes(5), "https", Optional.empty(), EgressConfig.ScanMode.REPORT, false, 10 * 1024 * 1024, false), routes.get(1));
    }

    @Test
    void pool_nodesTakeThePoolsRegion_unlessTheyNameTheirOwn()
    {
        EgressConfig.Pool pool = ConfigLoader.fromValues(Map.of("egress.pools", POOLS)).egress().pools().get("p");

        assertEquals(new EgressConfig.Pool("p", "eu", List.of(new EgressConfig.Node("n1", "10.0.0.1", 3128, "eu", 100),
            new EgressConfig.Node("n2", "10.0.0.2", 3128, "us", 7))), pool);
    }

    @Test
    void tableProblems_nameWhereTheyAre()
    {
        assertTrue(problems(Map.of("egress.pools", Map.of("p", Map.of("nodes", List.of(Map.of("id", "n1", "address", "h:1", "weight", "-1"))))))
            .contains("egress.pools.p.nodes.n1.weight: -1 (expected: an integer from 0 to 1000000)"));
        assertTrue(problems(Map.of("egress.pools", Map.of("p", Map.of("nodes", List.of(Map.of("id", "n1", "address", "h:1"),
                Map.of("id", "n1", "address", "h:2"))))))
            .contains("egress.pools.p.nodes: id n1 appears twice (expected: unique node ids)"));
        assertTrue(problems(Map.of("egress.pools", POOLS, "egress.routes", List.of(Map.of("match", Map.of("domains", List.of("*")),
                "upstream", "p", "stiky_session", true))))
            .contains("egress.routes[0]: unknown key stiky_session (expected: credential, idle_timeout, inspect, match, max_body_size, retry, retry_non_idempotent, "
                + "scan, scan_responses, scheme, sticky_session, sticky_ttl, timeout, upstream)"));
        assertTrue(problems(Map.of("egress.agents", List.of(Map.of("id", "a", "revoked", "maybe"))))
            .contains("egress.agents[0].revoked: maybe (expected: true or false)"));
        assertTrue(problems(Map.of("mcp.servers", List.of(Map.of("name", "files", "url", "http://files/", "tranport", "sse"))))
            .contains("mcp.servers: unknown key tranport (expected: auth, credential, name, pin, quota, tools, transport, url)"));
        assertTrue(problems(Map.of("mcp.servers", List.of(Map.of("name", "files", "url", "http://files/", "tools", Map.of("allow", "read_*"))))).contains(
            "mcp.servers: files: tools.allow: read_* (expected: a list of tool-name globs)"));
    }

    @Test
    void agents_defaultsAndTypedValues()
    {
        List<CredentialsConfig.Agent> agents = ConfigLoader.fromValues(Map.of(
            "egress.credentials", Map.of("openai", Map.of("hosts", List.of("api.openai.com"))),
            "egress.agents", List.of(Map.of("id", "a1", "credentials", List.of("openai"), "expires", "2027-01-31T00:00:00Z", "revoked", "yes"),
                Map.of("id", "a2", "token", "shared-token")))).egress().credentials().agents();

        assertEquals(new CredentialsConfig.Agent("a1", "a1-token", Set.of("openai"), Optional.of(Instant.parse("2027-01-31T00:00:00Z")), true),
            agents.get(0));
        assertEquals(new CredentialsConfig.Agent("a2", "shared-token", Set.of(), Optional.empty(), false), agents.get(1));
    }

    @Test
    void agentPolicy_boundFromTheAgentsEntry_andItsProblemsNamed()
    {
        CredentialsConfig.Agent agent = ConfigLoader.fromValues(Map.of("egress.agents", List.of(Map.of("id", "a1", "policy",
            Map.of("domains", List.of("API.example.com", "*.example.org"), "mode", "report", "budgets", Map.of("requests_per_minute", 60))))))
            .egress().credentials().agents().get(0);

        assertEquals(new AgentPolicy(List.of("api.example.com", "*.example.org"), AgentPolicy.Mode.REPORT, new AgentPolicy.Budgets(60, 0, 0)), agent.policy());
        assertTrue(agent.policy().allows("a.example.org") && agent.policy().allows("api.example.com") && !agent.policy().allows("example.org.evil.test"));
        assertTrue(problems(Map.of("egress.agents", List.of(Map.of("id", "a", "policy", Map.of("mode", "block")))))
            .contains("egress.agents[0].policy.mode: block (expected: enforce or report)"));
        assertTrue(problems(Map.of("egress.agents", List.of(Map.of("id", "a", "policy", Map.of("budgets", Map.of("requests_per_minute", -5))))))
            .contains("egress.agents[0].policy.budgets.requests_per_minute: -5 (expected: a whole number, 0 for none)"));
    }

    @Test
    void ingressAndWebSocket_eachDuration()
    {
        IngressConfig ingress = ConfigLoader.fromValues(Map.of(
            "ingress.idle-timeout", "1s",
            "ingress.connect-timeout", "2s",
            "ingress.destination-idle-timeout", "3s",
            "ingress.max-connections-per-sandbox", "4",
            "ingress.route-cache-size", "5000",
            "ingress.id-max-length", "6",
            "ingress.websocket.ping-interval", "7s",
            "ingress.websocket.idle-timeout", "8s")).ingress();

        assertEquals(List.of(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3)),
            List.of(ingress.idleTimeout(), ingress.connectTimeout(), ingress.destinationIdleTimeout()));
        assertEquals(List.of(4, 5000, 6), List.of(ingress.maxConnectionsPerSandbox(), ingress.routeCacheSize(), ingress.idMaxLength()));
        assertEquals(List.of(Duration.ofSeconds(7), Duration.ofSeconds(8)), List.of(ingress.webSocket().pingInterval(), ingress.webSocket().idleTimeout()));
    }

    @Test
    void storeMcpAndWatcher_eachValueOfOneType()
    {
        Map<String, Object> values = new HashMap<>();
        values.put("store.redis.timeout", "1s");
        values.put("store.redis.revalidate-interval", "2s");
        values.put("store.redis.poll-interval", "3s");
        values.put("store.redis.negative-cache-ttl", "0s");
        values.put("store.redis.sentinel-nodes", "redis://s1:26379");
        values.put("store.redis.sentinel-master", "master");
        values.put("store.redis.username", "user");
        values.put("mcp.keepalive-interval", "4s");
        values.put("mcp.session-ttl", "5s");
        values.put("mcp.replay-buffer", "6");
        values.put("mcp.max-body-size", "7000");
        values.put("mcp.max-sessions-per-client", "8");
        values.put("mcp.max-streams-per-client", "9");
        values.put("controlplane.watcher.id-label", "label");
        values.put("controlplane.watcher.port-annotation", "annotation");

        SandgateConfig config = ConfigLoader.fromValues(values);

        StoreConfig.Redis redis = config.store().redis();
        assertEquals(List.of(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3), Duration.ofSeconds(3)),
            List.of(redis.timeout(), redis.revalidateInterval(), redis.pollInterval(), redis.sessionPollInterval()));
        assertEquals(Duration.ZERO, redis.negativeCacheTtl(), "zero turns it off, unlike the other times");
        assertEquals(List.of(Optional.of("master"), Optional.of("user")), List.of(redis.sentinelMaster(), redis.username()));
        McpConfig mcp = config.mcp();
        assertEquals(List.of(Duration.ofSeconds(4), Duration.ofSeconds(5)), List.of(mcp.keepalive(), mcp.sessionTtl()));
        assertEquals(List.of(6, 7000, 8, 9), List.of(mcp.replayBuffer(), mcp.maxBodySize(), mcp.maxSessionsPerClient(), mcp.maxStreamsPerClient()));
        assertEquals(List.of("label", "annotation"), List.of(config.watcher().idLabel(), config.watcher().portAnnotation()));
        assertFalse(config.watcher().masterUrl().isPresent());
    }
}
