package io.sandgate.bench;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

import io.sandgate.testing.Fixtures;
import io.sandgate.testing.ReferenceMcpServer;
import io.sandgate.testing.RunningGateway;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;

/**
 * What a federation costs an MCP client against one server: {@code tools/list} over a federation
 * of three members ({@code /mcp/all/mcp}, fanned out to all three and merged) against the same
 * list of one member through its own endpoint ({@code /mcp/first/mcp}) and straight from the
 * server, and {@code tools/call} of the same tool on the same server by the three paths. Each path
 * is one 2025-11-25 Streamable session (initialize once, then requests carrying its
 * {@code Mcp-Session-Id}), as an agent holds one. The six kinds of request share one open-loop run
 * ({@link OpenLoopLoad}), request {@code i} going to target {@code i % 6}, so every row shares every
 * second of the run and the machine's noise, as in {@link McpAuthBenchmark}. The members are three
 * instances of the reference server, so the federation's list is three times the one server's.
 *
 * <p>Run: {@code java -cp target/test-classes:target/classes:$(cat CLASSPATH_FILE) io.sandgate.bench.McpFederationBenchmark
 * [RATE SECONDS WARMUP_SECONDS OUT.md]}, the class path from {@code mvn -o -q dependency:build-classpath
 * -Dmdep.outputFile=CLASSPATH_FILE -Dmdep.includeScope=test}; {@code RATE} is the total over the six targets.
 */
public final class McpFederationBenchmark
{
    private static final String HEADING = "## MCP federation: tools/list over three members, tools/call through the federation";

    private static final List<String> MEMBERS = List.of("first", "second", "third");
    private static final String FEDERATION = "all";
    private static final String SEPARATOR = "__";
    private static final String TOOL = "test_simple_text";
    private static final String REVISION = "2025-11-25";
    /** Per host: the gateway serves four of the six rows, and on a loaded machine 8 would queue requests in this client. */
    private static final int CONNECTIONS = 32;
    /** Unrecorded seconds at the start of the measured run, after the warm-up run, as in {@link McpAuthBenchmark}. */
    private static final int SETTLE_SECONDS = 2;

    /**
     * An answer counts when it holds a result, and a federation's list only when it holds the tool
     * of every member: a member left out of the merge (its answer late or failed) would otherwise
     * pass for a faster list.
     */
    private static final Predicate<String> ANSWERED = body -> body.contains("\"result\"")
        && (!body.contains(SEPARATOR + TOOL) || !body.contains("\"tools\"")
            || MEMBERS.stream().allMatch(member -> body.contains("\"" + member + SEPARATOR + TOOL + "\"")));

    /** Where one path's requests go, with the session opened there, and the name its calls use. */
    private record Endpoint(String name, URI endpoint, String session, String tool)
    {
    }

    /** One row: a path and the method sent on it. */
    private record Target(String method, Endpoint path)
    {
    }

    private McpFederationBenchmark()
    {
    }

    public static void main(String[] args) throws Exception
    {
        // 25 requests/s a row: at twice that the three Node servers, the gateway and the load
        // saturated a shared 2-core machine, and every row measured its queue.
        int rate = args.length > 0 ? Integer.parseInt(args[0]) : 150;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 120;
        int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        Path out = Path.of(args.length > 3 ? args[3] : "docs/BENCHMARKS.md");
        double loadAtStart = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        HttpClient client = OpenLoopLoad.client(CONNECTIONS);
        // The reference server (Node) closes connections idle for 5 s; close ours first, never mid-request.
        client.setIdleTimeout(4000);
        List<ReferenceMcpServer> servers = new ArrayList<>();
        String section;
        try
        {
            Map<String, String> urls = new LinkedHashMap<>();
            for (String member : MEMBERS)
            {
                ReferenceMcpServer server = ReferenceMcpServer.start();
                servers.add(server);
                urls.put(member, server.url());
            }
            try (RunningGateway gateway = McpBenchGateway.start(urls, null, config -> config.set("mcp.federations",
                List.of(Map.of("name", FEDERATION, "servers", MEMBERS, "prefix", "always", "separator", SEPARATOR)))))
            {
                String first = MEMBERS.get(0);
                List<Endpoint> paths = List.of(
                    open(client, "directly at the server (no gateway)", URI.create(urls.get(first)), TOOL),
                    open(client, "gateway, single-server endpoint `/mcp/" + first + "/mcp`", gateway.uri().resolve("/mcp/" + first + "/mcp"), TOOL),
                    open(client, "gateway, federation of 3 `/mcp/" + FEDERATION + "/mcp`", gateway.uri().resolve("/mcp/" + FEDERATION + "/mcp"),
                        first + SEPARATOR + TOOL));
                List<Target> targets = new ArrayList<>();
                for (String method : List.of("tools/list", "tools/call"))
                    paths.forEach(path -> targets.add(new Target(method, path)));
                // One request each first: a refused call or an incomplete list ends the run before it is measured.
                List<Integer> sizes = new ArrayList<>();
                int tools = 0;
                for (Target target : targets)
                {
                    String body = request(client, target, 0).send().getContentAsString();
                    if (!ANSWERED.test(body) || target.method().equals("tools/list") && target.path() == paths.get(2) && !body.contains(SEPARATOR + TOOL))
                        throw new IllegalStateException(target.method() + " " + target.path().name() + " does not answer: " + body);
                    sizes.add(body.length());
                    if (sizes.size() == 1)
                        tools = body.split("\"inputSchema\"", -1).length - 1;
                }
                // The warm-up is a run of its own whose answers are all awaited, as in McpAuthBenchmark:
                // what queues while the JIT is at work must not count as the measured run's latency.
                OpenLoopLoad.measureInterleaved(client, rate, 0, warmup, targets.size(), i -> request(client, targets.get((int)(i % targets.size())), i),
                    OpenLoopLoad.ANY_BODY);
                List<OpenLoopLoad.Outcome> outcomes = OpenLoopLoad.measureInterleaved(client, rate, seconds, SETTLE_SECONDS, targets.size(),
                    i -> request(client, targets.get((int)(i % targets.size())), i), ANSWERED);
                section = section(rate, seconds, warmup, loadAtStart, targets, outcomes, sizes, tools);
            }
        }
        finally
        {
            Fixtures.closeInOrder(servers.toArray(AutoCloseable[]::new));
        }
        client.stop();
        BenchmarksDocument.writeSection(out, HEADING, section);
        System.out.println(section);
        // The gateway's and the client's threads are not daemons.
        System.exit(0);
    }

    /** Opens a session at {@code endpoint}: {@code initialize}, then {@code notifications/initialized}. */
    private static Endpoint open(HttpClient client, String name, URI endpoint, String tool) throws Exception
    {
        String initialize = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"" + REVISION + "\","
            + "\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}";
        ContentResponse opened = post(client, endpoint, null, initialize).send();
        String session = opened.getHeaders().get("Mcp-Session-Id");
        if (opened.getStatus() != 200 || session == null)
            throw new IllegalStateException(name + " opened no session: " + opened.getStatus() + " " + opened.getContentAsString());
        ContentResponse initialized = post(client, endpoint, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}").send();
        if (initialized.getStatus() != 202)
            throw new IllegalStateException(name + " refused notifications/initialized: " + initialized.getStatus());
        return new Endpoint(name, endpoint, session, tool);
    }

    private static Request request(HttpClient client, Target target, long id)
    {
        String params = target.method().equals("tools/list") ? "{}" : "{\"name\":\"" + target.path().tool() + "\",\"arguments\":{}}";
        return post(client, target.path().endpoint(), target.path().session(),
            "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + target.method() + "\",\"params\":" + params + "}");
    }

    private static Request post(HttpClient client, URI endpoint, String session, String body)
    {
        return client.newRequest(endpoint).method(HttpMethod.POST)
            .headers(headers ->
            {
                headers.put("Accept", "application/json, text/event-stream");
                headers.put("MCP-Protocol-Version", REVISION);
                if (session != null)
                    headers.put("Mcp-Session-Id", session);
            })
            .body(new StringRequestContent("application/json", body));
    }

    private static String section(int rate, int seconds, int warmup, double loadAtStart, List<Target> targets, List<OpenLoopLoad.Outcome> outcomes,
                                  List<Integer> sizes, int tools)
    {
        int perTarget = rate / targets.size();
        StringBuilder s = new StringBuilder(HEADING).append("\n\n");
        s.append("Three instances of the reference server (`src/test/mcp-ts/reference-server.mjs`, TypeScript SDK 2.x on Node, ")
            .append(tools).append(" tools each) behind one gateway (memory store) as the servers `first`, `second` and `third`, and the federation ")
            .append("`{name: all, servers: [first, second, third], prefix: always}`. Three paths, each one 2025-11-25 Streamable session ")
            .append("(initialize once, then every request with its `Mcp-Session-Id`): straight to `first`, through the gateway's endpoint of ")
            .append("`first`, and through the federation, whose `tools/list` goes to the three members in parallel and merges their prefixed tools, ")
            .append("and whose `tools/call` of `first__").append(TOOL).append("` goes to `first` with the prefix removed. On each path `tools/list` ")
            .append("and `tools/call` of `").append(TOOL).append("` (one text answer), so every call lands on the same server process. ")
            .append(rate).append(" requests/s in all for ").append(seconds).append(" s, request i going to row i mod ").append(targets.size())
            .append(" (").append(perTarget).append(" requests/s each), after a warm-up run of ").append(warmup)
            .append(" s whose answers were all awaited and ").append(SETTLE_SECONDS).append(" s unrecorded; open loop (`OpenLoopLoad`: latency ")
            .append("counted from each request's due time), Jetty HttpClient over up to ").append(CONNECTIONS)
            .append(" keep-alive connections per host. An answer counts when it is a 200 holding `\"result\"`, and a federated list only when ")
            .append("it holds the tool of every member. Sizes of the answers: `tools/list` ")
            .append(sizes.get(0)).append(" bytes direct, ").append(sizes.get(1)).append(" through the server's endpoint, ").append(sizes.get(2))
            .append(" through the federation; `tools/call` ").append(sizes.get(3)).append(", ").append(sizes.get(4)).append(", ").append(sizes.get(5))
            .append(" (bodies as received, an event stream or JSON). The gateway and the load run in one JVM, the servers are Node processes on the same machine.\n");
        s.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, ").append(System.getProperty("os.name")).append(' ')
            .append(System.getProperty("os.arch")).append(", Java ").append(System.getProperty("java.version"))
            .append(String.format(Locale.ROOT, ", load average %.1f at start (the machine is shared: other builds ran).%n", loadAtStart));
        s.append("Command: `mvn -o -q dependency:build-classpath -Dmdep.outputFile=cp.txt -Dmdep.includeScope=test`, then ")
            .append("`java -cp target/test-classes:target/classes:$(cat cp.txt) io.sandgate.bench.McpFederationBenchmark ").append(rate).append(' ')
            .append(seconds).append(' ').append(warmup).append("`\n\n");
        s.append("| request | path | samples | errors | p50 ms | p99 ms | max ms | p50 / p99 vs direct | p50 / p99 vs single-server endpoint |\n")
            .append("|---|---|---|---|---|---|---|---|---|\n");
        for (int t = 0; t < targets.size(); t++)
        {
            int row = t % 3;
            long[] sorted = outcomes.get(t).sorted();
            long[] direct = outcomes.get(t - row).sorted();
            long[] single = outcomes.get(t - row + 1).sorted();
            s.append(String.format(Locale.ROOT, "| `%s` | %s | %d | %d | %.2f | %.2f | %.2f | %.2fx / %.2fx | %s |%n", targets.get(t).method(),
                targets.get(t).path().name(), sorted.length, outcomes.get(t).errors(),
                Samples.millis(sorted, 0.50), Samples.millis(sorted, 0.99), Samples.millis(sorted, 1.0),
                Samples.millis(sorted, 0.50) / Samples.millis(direct, 0.50), Samples.millis(sorted, 0.99) / Samples.millis(direct, 0.99),
                row == 0 ? "-" : String.format(Locale.ROOT, "%.2fx / %.2fx", Samples.millis(sorted, 0.50) / Samples.millis(single, 0.50),
                    Samples.millis(sorted, 0.99) / Samples.millis(single, 0.99))));
        }
        s.append("\nAdded by the federation over the single-server endpoint, same run:\n\n| request | added p50 ms | added p99 ms |\n|---|---|---|\n");
        for (int t = 2; t < targets.size(); t += 3)
        {
            long[] federated = outcomes.get(t).sorted();
            long[] single = outcomes.get(t - 1).sorted();
            s.append(String.format(Locale.ROOT, "| `%s` | %+.2f | %+.2f |%n", targets.get(t).method(),
                Samples.millis(federated, 0.50) - Samples.millis(single, 0.50), Samples.millis(federated, 0.99) - Samples.millis(single, 0.99)));
        }
        s.append("\nHow to read it: the single-server rows are what the gateway adds to one server (its session, its relay of the answer); ")
            .append("the federation's `tools/list` adds to that a fan-out to three members, each over its own member session, and the merge ")
            .append("of three lists into one three times as long: it answers when the slowest member has, so its tail is the worst of three ")
            .append("servers' on a shared machine, not one's. The federation's `tools/call` adds only the routing by prefix (and the ")
            .append("member session's record) to the single-server call: its rows should sit by the single-server ones, and their ")
            .append("difference is that cost or this run's noise. Only figures of one run compare.\n");
        List<String> firstErrors = new ArrayList<>();
        for (int t = 0; t < targets.size(); t++)
        {
            if (outcomes.get(t).firstError() != null)
                firstErrors.add(targets.get(t).method() + ", " + targets.get(t).path().name() + ": " + outcomes.get(t).firstError());
        }
        if (!firstErrors.isEmpty())
            s.append("\nFirst errors: ").append(String.join("; ", firstErrors)).append('\n');
        return s.toString();
    }
}
