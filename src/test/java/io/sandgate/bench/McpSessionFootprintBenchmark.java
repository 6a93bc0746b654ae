package io.sandgate.bench;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;

/**
 * What an open MCP session costs a replica: {@code N} clients each hold a legacy SSE stream on one
 * gateway replica (a separate process, Redis store) and have initialized their session through it
 * to a Streamable HTTP upstream; the replica's heap after a full GC, its RSS, open files and threads
 * are read before and after, per session. The capacity plan (docs/CAPACITY.md) multiplies these.
 *
 * <p>Run (build target/sandgate.jar first): {@code mvn -q test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.sandgate.bench.McpSessionFootprintBenchmark [-Dexec.args="SESSIONS OUT.md [POLL]"]},
 * POLL being a {@code store.redis.poll-interval} such as {@code 500ms}; the gateway's default when
 * left out. With {@code BENCH_JSTACK=FILE} set, the replica's thread dump
 * with the sessions open is written there, to see what holds its threads.</p>
 */
public final class McpSessionFootprintBenchmark
{
    private static final String HEADING = "## MCP sessions held by a replica";
    private static final Duration SETTLE = Duration.ofSeconds(65);
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");
    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
        + "\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}";
    private static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

    private McpSessionFootprintBenchmark()
    {
    }

    /** What the replica process holds at one moment. */
    private record Footprint(long heapKb, long rssKb, int files, int threads)
    {
    }

    public static void main(String[] args) throws Exception
    {
        int sessions = args.length > 0 ? Integer.parseInt(args[0]) : 150;
        Path out = Path.of(args.length > 1 ? args[1] : "docs/BENCHMARKS.md");
        // The store's safety poll of every subscribed session (store.redis.poll-interval): the gateway's default unless given.
        String poll = args.length > 2 ? args[2] : null;
        GatewayProcess gateway = null;
        List<InputStream> streams = new ArrayList<>();
        try (RedisServerProcess redis = RedisServerProcess.start(); McpUpstream upstream = McpUpstream.start())
        {
            String yaml = """
                server:
                  max-concurrent-requests-per-client: 1000000
                %s
                mcp:
                  max-sessions-per-client: 1000000
                  max-streams-per-client: 1000000
                  servers:
                    - name: stream
                      url: %s
                      transport: streamable
                """.formatted(poll == null ? "" : "store:\n  redis:\n    poll-interval: " + poll, upstream.streamableUrl());
            gateway = GatewayProcess.start(yaml, Map.of("SANDGATE_STORE_TYPE", "redis", "SANDGATE_STORE_REDIS_ADDRESS", redis.address()));
            URI base = gateway.uri("");
            // One session first, so that what is made once (clients, classes, pools) is not counted per session.
            streams.add(open(base));
            Footprint before = footprint(gateway.pid());
            for (int i = 1; i < sessions; i++)
                streams.add(open(base));
            // The worker threads the burst of set-ups started idle out after a minute; what stays is
            // what the sessions hold.
            long idleCalls;
            try (RawRedis raw = RawRedis.connect(redis.port()))
            {
                long calls = raw.calls(null);
                Thread.sleep(SETTLE.toMillis());
                idleCalls = raw.calls(null) - calls;
            }
            Footprint after = footprint(gateway.pid());
            if (System.getenv("BENCH_JSTACK") != null)
                Files.writeString(Path.of(System.getenv("BENCH_JSTACK")), run("jstack", Long.toString(gateway.pid())));
            String section = report(sessions - 1, poll == null ? "at its default" : poll, before, after, idleCalls / (double)SETTLE.toSeconds());
            System.out.println(section);
            BenchmarksDocument.writeSection(out, HEADING, section);
        }
        finally
        {
            for (InputStream stream : streams)
                stream.close();
            if (gateway != null)
                gateway.close();
        }
        System.exit(0);
    }

    /** A legacy SSE stream, its session initialized; the stream stays open, its events unread. */
    private static InputStream open(URI base) throws Exception
    {
        HttpResponse<InputStream> stream = HTTP.send(HttpRequest.newBuilder(base.resolve("/mcp/stream/sse")).build(), HttpResponse.BodyHandlers.ofInputStream());
        if (stream.statusCode() != 200)
            throw new IllegalStateException("stream refused: " + stream.statusCode());
        // Read only up to the endpoint event; not through a buffered reader that would read ahead.
        BufferedReader lines = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8), 1);
        String line;
        String session = null;
        while (session == null && (line = lines.readLine()) != null)
        {
            if (line.startsWith("data: /mcp/"))
                session = line.substring(line.indexOf("sessionId=") + 10);
        }
        if (session == null)
            throw new IllegalStateException("no endpoint event");
        URI messages = base.resolve("/mcp/stream/message?sessionId=" + session);
        post(messages, INITIALIZE);
        post(messages, INITIALIZED);
        return stream.body();
    }

    private static void post(URI uri, String json) throws Exception
    {
        int status = HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        if (status / 100 != 2)
            throw new IllegalStateException("POST answered " + status);
    }

    private static Footprint footprint(long pid) throws Exception
    {
        run("jcmd", Long.toString(pid), "GC.run");
        Matcher used = HEAP_USED.matcher(run("jcmd", Long.toString(pid), "GC.heap_info"));
        long heap = used.find() ? Long.parseLong(used.group(1)) : -1;
        String status = Files.readString(Path.of("/proc/" + pid + "/status"));
        long rss = Long.parseLong(field(status, "VmRSS:").replace("kB", "").strip());
        int threads = Integer.parseInt(field(status, "Threads:").strip());
        int files;
        try (var fds = Files.list(Path.of("/proc/" + pid + "/fd")))
        {
            files = (int)fds.count();
        }
        return new Footprint(heap, rss, files, threads);
    }

    private static String field(String status, String name)
    {
        return status.lines().filter(line -> line.startsWith(name)).findFirst().orElseThrow().substring(name.length());
    }

    private static String run(String... command) throws Exception
    {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor(30, TimeUnit.SECONDS);
        return output;
    }

    private static String report(int sessions, String poll, Footprint before, Footprint after, double idleCallsPerSecond)
    {
        StringBuilder s = new StringBuilder(HEADING).append("\n\n");
        s.append(String.format(Locale.ROOT, "`McpSessionFootprintBenchmark %d` (%s): %d clients each hold a legacy SSE stream on one replica "
                + "(`java -Xmx512m -jar target/sandgate.jar`, Redis store, `store.redis.poll-interval` %s) and have initialized their session through it to a Streamable HTTP "
                + "upstream (the MCP Java SDK's); the replica's heap after a full GC, RSS, open files and threads before and after (65 s after the last set-up, long enough for worker threads that only the set-up burst needed to idle out), per session.%n%n",
            sessions + 1, Instant.now().toString().substring(0, 16) + "Z", sessions, poll));
        s.append("| measure | before | after | per session |\n|---|---|---|---|\n");
        s.append(String.format(Locale.ROOT, "| heap used (KB) | %d | %d | %.1f KB |%n", before.heapKb(), after.heapKb(),
            (after.heapKb() - before.heapKb()) / (double)sessions));
        s.append(String.format(Locale.ROOT, "| RSS (KB) | %d | %d | %.1f KB |%n", before.rssKb(), after.rssKb(), (after.rssKb() - before.rssKb()) / (double)sessions));
        s.append(String.format(Locale.ROOT, "| open files | %d | %d | %.2f |%n", before.files(), after.files(), (after.files() - before.files()) / (double)sessions));
        s.append(String.format(Locale.ROOT, "| threads | %d | %d | %.3f |%n", before.threads(), after.threads(),
            (after.threads() - before.threads()) / (double)sessions));
        s.append(String.format(Locale.ROOT, "| Redis commands per second while every session is idle | - | %.1f | %.2f |%n", idleCallsPerSecond,
            idleCallsPerSecond / (sessions + 1)));
        return s.toString();
    }
}
