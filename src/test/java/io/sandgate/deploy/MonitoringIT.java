package io.sandgate.deploy;

import java.io.Reader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.TargetServer;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Grafana dashboard and the Prometheus alert rules in deploy/ read only metrics the gateway
 * exports: a gateway on a real Redis serves each face (an ingress miss, an MCP call to a server that
 * is down, an egress exchange through a real forward proxy and one stopped by the leak scanner),
 * then every metric named by every query must be in its {@code /metrics}.
 */
class MonitoringIT
{
    private static final Path DEPLOY = MavenPaths.projectBase().resolve("deploy");
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    @AutoClose
    private static RedisServerProcess redis;
    @AutoClose
    private static TargetServer target;
    @AutoClose
    private static ForwardProxy node;
    private static Set<String> exported;

    @BeforeAll
    static void scrape() throws Exception
    {
        redis = RedisServerProcess.start();
        target = TargetServer.start();
        node = ForwardProxy.start("n1");
        try (RunningGateway gateway = RunningGateway.start(config -> config
            .redisStore(redis)
            .set("mcp.servers", List.of(Map.of("name", "x", "url", "http://127.0.0.1:1/mcp")))
            .set("egress.ssrf.allow", "127.0.0.0/8")
            .set("egress.pools", Map.of("p", Map.of("nodes", List.of(Map.of("id", "n1", "address", node.address())))))
            .set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "p", "scheme", "http", "timeout", "5s")))))
        {
            send(gateway, HttpRequest.newBuilder(gateway.uri("/vnc/1/")));
            send(gateway, HttpRequest.newBuilder(gateway.uri("/mcp/x/mcp")).header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                    + "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}")));
            String echo = "/egress/127.0.0.1:" + target.httpPort() + "/echo";
            assertEquals(200, send(gateway, HttpRequest.newBuilder(gateway.uri(echo))));
            String fakeToken = "ghp_" + "A1b2C3d4E5".repeat(4).substring(0, 36);
            assertEquals(422, send(gateway, HttpRequest.newBuilder(gateway.uri(echo)).POST(HttpRequest.BodyPublishers.ofString("token=" + fakeToken))));
            String metrics = HTTP.send(HttpRequest.newBuilder(gateway.uri("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            exported = new TreeSet<>();
            for (String line : metrics.split("\n"))
            {
                if (!line.isBlank() && !line.startsWith("#"))
                    exported.add(line.split("[{ ]", 2)[0]);
            }
        }
    }

    private static int send(RunningGateway gateway, HttpRequest.Builder request) throws Exception
    {
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void grafanaDashboard_queriesOnlyExportedMetrics() throws Exception
    {
        JsonNode dashboard = new ObjectMapper().readTree(DEPLOY.resolve("grafana/sandgate-dashboard.json").toFile());
        assertEquals("sandgate", dashboard.get("uid").asText());
        List<String> queries = new ArrayList<>();
        Set<Integer> ids = new HashSet<>();
        for (JsonNode panel : dashboard.get("panels"))
        {
            assertTrue(ids.add(panel.get("id").asInt()), "panel id twice: " + panel.get("id"));
            panel.path("targets").forEach(target -> queries.add(target.get("expr").asText()));
        }
        assertTrue(queries.size() >= 15, queries.toString());
        assertQueriesReadExportedMetrics(queries);
    }

    @Test
    void alertRules_queryOnlyExportedMetrics() throws Exception
    {
        List<String> queries = new ArrayList<>();
        List<String> alerts = new ArrayList<>();
        try (Reader reader = Files.newBufferedReader(DEPLOY.resolve("kubernetes/prometheus-rules.yaml")))
        {
            Map<?, ?> rules = (Map<?, ?>)new Yaml(new SafeConstructor(new LoaderOptions())).load(reader);
            for (Object group : (List<?>)((Map<?, ?>)rules.get("spec")).get("groups"))
            {
                for (Object rule : (List<?>)((Map<?, ?>)group).get("rules"))
                {
                    queries.add((String)((Map<?, ?>)rule).get("expr"));
                    alerts.add((String)((Map<?, ?>)rule).get("alert"));
                }
            }
        }
        assertTrue(alerts.containsAll(List.of("SandgateEgressAvailabilityLow", "SandgateMcpSessionsDead", "SandgateRedisPingFailing")), alerts.toString());
        assertQueriesReadExportedMetrics(queries);
    }

    private static void assertQueriesReadExportedMetrics(List<String> queries)
    {
        for (String query : queries)
        {
            Set<String> names = PromQl.metricNames(query);
            assertFalse(names.isEmpty(), "no metric in " + query);
            for (String name : names)
                assertTrue(exported.contains(name), name + " (in " + query + ") is not exported; exported: " + exported);
        }
    }
}
