package io.sandgate.bench;

import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.testing.Gateway;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;

/**
 * Cross-replica MCP delivery latency: a client's stream is on replica A, its POSTs (tools/call
 * echo) go to replica B at a steady rate, and each sample is the time from sending the POST to
 * reading the answer on A's stream. The same path on one replica (memory store, and Redis store)
 * runs beside it in the same process, so the ratios hold on a noisy machine.
 *
 * <p>Run: {@code mvn -q test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.sandgate.bench.McpDeliveryBenchmark [-Dexec.args="RATE SECONDS OUT.md"]}</p>
 */
public final class McpDeliveryBenchmark
{
    private static final String HEADING = "## MCP cross-replica delivery";

    private static final Pattern ID = Pattern.compile("\"id\":(\\d+)");
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private McpDeliveryBenchmark()
    {
    }

    public static void main(String[] args) throws Exception
    {
        int rate = args.length > 0 ? Integer.parseInt(args[0]) : 50;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        Path out = Path.of(args.length > 2 ? args[2] : "docs/BENCHMARKS.md");
        List<String> rows = new ArrayList<>();
        try (RedisServerProcess redis = RedisServerProcess.start(); McpUpstream upstream = McpUpstream.start())
        {
            String url = upstream.streamableUrl();
            try (RunningGateway single = McpBenchGateway.start("stream", url, null))
            {
                rows.add(row("one replica, memory store (stream and POST on A)", run(single, single, rate, seconds)));
            }
            try (RunningGateway a = McpBenchGateway.start("stream", url, redis); RunningGateway b = McpBenchGateway.start("stream", url, redis))
            {
                rows.add(row("one replica, Redis store (stream and POST on A)", run(a, a, rate, seconds)));
                rows.add(row("two replicas, Redis store (stream on A, POST on B)", run(a, b, rate, seconds)));
            }
        }
        String section = HEADING + "\n\n"
            + "POST `tools/call` on one replica -> answer event on the client's SSE stream, " + rate + " calls/s for " + seconds
            + " s per row, after a 2 s warm-up; upstream: the MCP Java SDK's Streamable HTTP server in the same JVM.\n"
            + "Machine: " + Runtime.getRuntime().availableProcessors() + " cores, " + System.getProperty("os.name") + " " + System.getProperty("os.arch")
            + ", Java " + System.getProperty("java.version") + ".\n"
            + "Command: `mvn -q test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.sandgate.bench.McpDeliveryBenchmark`\n\n"
            + "| path | samples | p50 ms | p99 ms | max ms | p50 vs one replica (memory) |\n|---|---|---|---|---|---|\n"
            + String.join("\n", ratios(rows)) + "\n";
        BenchmarksDocument.writeSection(out, HEADING, section);
        System.out.println(section);
        System.exit(0);
    }

    /** Samples in nanoseconds. */
    private static List<Long> run(Gateway streamOn, Gateway postOn, int rate, int seconds) throws Exception
    {
        Map<Integer, Long> sent = new ConcurrentHashMap<>();
        List<Long> samples = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch endpoint = new CountDownLatch(1);
        String[] session = new String[1];
        HttpResponse<InputStream> stream = HTTP.send(HttpRequest.newBuilder(streamOn.uri().resolve("/mcp/stream/sse")).build(),
            HttpResponse.BodyHandlers.ofInputStream());
        Thread reader = new Thread(() ->
        {
            try (var lines = new java.io.BufferedReader(new java.io.InputStreamReader(stream.body())))
            {
                String line;
                while ((line = lines.readLine()) != null)
                {
                    if (line.startsWith("data: /mcp/"))
                    {
                        session[0] = line.substring(line.indexOf("sessionId=") + 10);
                        endpoint.countDown();
                    }
                    else if (line.startsWith("data: {"))
                    {
                        long now = System.nanoTime();
                        Matcher m = ID.matcher(line);
                        if (m.find())
                        {
                            Long start = sent.remove(Integer.parseInt(m.group(1)));
                            if (start != null && start > 0)
                                samples.add(now - start);
                        }
                    }
                }
            }
            catch (Exception x)
            {
                // Stream closed at the end of the run.
            }
        }, "bench-reader");
        reader.setDaemon(true);
        reader.start();
        endpoint.await(10, TimeUnit.SECONDS);
        post(postOn, session[0], "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
            + "\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}");
        post(postOn, session[0], "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        long interval = TimeUnit.SECONDS.toNanos(1) / rate;
        int warmup = rate * 2;
        int total = warmup + rate * seconds;
        long next = System.nanoTime();
        for (int i = 1; i <= total; i++)
        {
            long wait = next - System.nanoTime();
            if (wait > 0)
                TimeUnit.NANOSECONDS.sleep(wait);
            next += interval;
            // Warm-up calls are answered but not sampled.
            sent.put(i, i <= warmup ? -1L : System.nanoTime());
            post(postOn, session[0], "{\"jsonrpc\":\"2.0\",\"id\":" + i + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"x\"}}}");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (samples.size() < total - warmup && System.nanoTime() < deadline)
            TimeUnit.MILLISECONDS.sleep(20);
        stream.body().close();
        return new ArrayList<>(samples);
    }

    private static void post(Gateway replica, String session, String json) throws Exception
    {
        HTTP.send(HttpRequest.newBuilder(replica.uri().resolve("/mcp/stream/message?sessionId=" + session)).timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.discarding());
    }

    private static String row(String name, List<Long> samples)
    {
        Collections.sort(samples);
        return name + "|" + samples.size() + "|" + ms(samples, 0.50) + "|" + ms(samples, 0.99) + "|" + ms(samples, 1.0);
    }

    private static List<String> ratios(List<String> rows)
    {
        double base = Double.parseDouble(rows.get(0).split("\\|")[2]);
        List<String> result = new ArrayList<>();
        for (String row : rows)
        {
            String[] f = row.split("\\|");
            result.add("| " + f[0] + " | " + f[1] + " | " + f[2] + " | " + f[3] + " | " + f[4] + " | "
                + String.format("%.2fx", Double.parseDouble(f[2]) / base) + " |");
        }
        return result;
    }

    private static String ms(List<Long> sorted, double quantile)
    {
        if (sorted.isEmpty())
            return "n/a";
        int index = (int)Math.min(sorted.size() - 1, Math.ceil(quantile * sorted.size()) - 1);
        return String.format("%.2f", sorted.get(Math.max(0, index)) / 1e6);
    }
}
