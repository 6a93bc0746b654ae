package io.sandgate.bench;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.ReferenceMcpServer;
import io.sandgate.testing.RunningGateway;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;

/**
 * Latency the gateway adds to MCP 2026-07-28 requests, which carry no session: {@code tools/call}
 * of the reference server's {@code test_simple_text} at a fixed rate ({@link OpenLoopLoad}: open
 * loop, latency counted from each request's due time), sent directly to the server, through one
 * replica (memory store), and alternately to two replicas sharing a Redis store. All three run in
 * one process, one after another, so the ratios hold on a noisy machine.
 *
 * <p>Run: {@code mvn -q test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.sandgate.bench.McpStatelessBenchmark [-Dexec.args="RATE SECONDS WARMUP_SECONDS OUT.md"]}</p>
 */
public final class McpStatelessBenchmark
{
    private static final String HEADING = "## MCP 2026-07-28 stateless requests: latency added";

    private static final String SERVER_NAME = "reference";
    private static final String TOOL = "test_simple_text";
    private static final String REVISION = "2026-07-28";
    /** Far more than 100 req/s of millisecond answers needs; the warm-up opens them. */
    private static final int CONNECTIONS = 8;

    private McpStatelessBenchmark()
    {
    }

    public static void main(String[] args) throws Exception
    {
        int rate = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        Path out = Path.of(args.length > 3 ? args[3] : "docs/BENCHMARKS.md");
        double loadAtStart = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        Map<String, OpenLoopLoad.Outcome> rows = new LinkedHashMap<>();
        HttpClient client = OpenLoopLoad.client(CONNECTIONS);
        // The reference server (Node) closes connections idle for 5 s; close ours first, never mid-request.
        client.setIdleTimeout(4000);
        try (RedisServerProcess redis = RedisServerProcess.start(); ReferenceMcpServer reference = ReferenceMcpServer.start())
        {
            rows.put("direct (reference server)", run(client, List.of(URI.create(reference.url())), rate, seconds, warmup));
            try (RunningGateway single = McpBenchGateway.start(SERVER_NAME, reference.url(), null))
            {
                rows.put("one replica, memory store", run(client, List.of(endpoint(single)), rate, seconds, warmup));
            }
            try (RunningGateway a = McpBenchGateway.start(SERVER_NAME, reference.url(), redis);
                RunningGateway b = McpBenchGateway.start(SERVER_NAME, reference.url(), redis))
            {
                rows.put("two replicas, Redis store (requests alternate A, B)", run(client, List.of(endpoint(a), endpoint(b)), rate, seconds, warmup));
            }
        }
        client.stop();
        String section = HEADING + "\n\n"
            + "POST `tools/call` (`test_simple_text`, one text answer) as a 2026-07-28 request: no session, `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers, "
            + "the `_meta` envelope in the body. " + rate + " requests/s for " + seconds + " s per row after a " + warmup + " s unrecorded warm-up, "
            + "open loop (`OpenLoopLoad`: latency counted from each request's due time), Jetty HttpClient over up to " + CONNECTIONS
            + " keep-alive connections per host; an answer counts when it is a 200 whose body holds `\"result\"`. "
            + "Upstream: the reference server (`src/test/mcp-ts/reference-server.mjs`, TypeScript SDK 2.x on Node); the gateways, the load and the client run in one JVM, "
            + "Redis is a real `redis-server`.\n"
            + "Machine: " + Runtime.getRuntime().availableProcessors() + " cores, " + System.getProperty("os.name") + " " + System.getProperty("os.arch")
            + ", Java " + System.getProperty("java.version") + String.format(Locale.ROOT, ", load average %.1f at start.%n", loadAtStart)
            + "Command: `mvn -q test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.sandgate.bench.McpStatelessBenchmark`\n\n"
            + table(rows);
        BenchmarksDocument.writeSection(out, HEADING, section);
        System.out.println(section);
        // The gateways' and the client's threads are not daemons.
        System.exit(0);
    }

    private static URI endpoint(RunningGateway gateway)
    {
        return gateway.uri().resolve("/mcp/" + SERVER_NAME + "/mcp");
    }

    /** Request {@code i} goes to {@code targets[i % size]}. */
    private static OpenLoopLoad.Outcome run(HttpClient client, List<URI> targets, int rate, int seconds, int warmup) throws InterruptedException
    {
        return OpenLoopLoad.measure(client, rate, seconds, warmup, i -> call(client, targets.get((int)(i % targets.size())), i),
            body -> body.contains("\"result\""));
    }

    /** The request measured: also what {@link McpAuthBenchmark} sends, with a token. */
    static Request call(HttpClient client, URI target, long id)
    {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + TOOL + "\",\"arguments\":{},"
            + "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" + REVISION + "\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
        return client.newRequest(target).method(HttpMethod.POST)
            .headers(headers -> headers
                .put("Accept", "application/json, text/event-stream")
                .put("MCP-Protocol-Version", REVISION)
                .put("Mcp-Method", "tools/call")
                .put("Mcp-Name", TOOL))
            .body(new StringRequestContent("application/json", body));
    }

    private static String table(Map<String, OpenLoopLoad.Outcome> rows)
    {
        long[] direct = rows.values().iterator().next().sorted();
        StringBuilder s = new StringBuilder("| target | samples | errors | p50 ms | p99 ms | max ms | added p50 ms | added p99 ms | p50 vs direct |\n"
            + "|---|---|---|---|---|---|---|---|---|\n");
        rows.forEach((name, outcome) ->
        {
            long[] sorted = outcome.sorted();
            s.append(String.format(Locale.ROOT, "| %s | %d | %d | %.2f | %.2f | %.2f | %+.2f | %+.2f | %.2fx |%n", name, sorted.length, outcome.errors(),
                Samples.millis(sorted, 0.50), Samples.millis(sorted, 0.99), Samples.millis(sorted, 1.0),
                Samples.millis(sorted, 0.50) - Samples.millis(direct, 0.50), Samples.millis(sorted, 0.99) - Samples.millis(direct, 0.99),
                Samples.millis(sorted, 0.50) / Samples.millis(direct, 0.50)));
        });
        return s.toString();
    }
}
