package io.sandgate.bench;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.SandboxBackend;

/**
 * Routes changing at Kubernetes speed: plain {@code HSET}/{@code HDEL} on the route hash at a steady
 * rate (1 000 writes/s by default, as a cluster creating sandboxes in a burst would), while two
 * gateway replicas, separate processes on one Redis, serve steady traffic. Measures how long each
 * change takes to be seen by both replicas (a sample of writes is followed by polling both until
 * they route it as written), whether the traffic kept being served, the replicas' CPU with and
 * without the churn, and Redis's commands, to show that requests are answered from the replicas'
 * caches and not by a round trip each.
 *
 * <p>Each write is one of three, by pass over the ids: create (to backend a), move (to b), delete.
 * The replicas run {@code target/sandgate.jar} (build it first).</p>
 *
 * <p>Run: {@code mvn -q test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.sandgate.bench.RouteChurnBenchmark [-Dexec.args="WRITES_PER_S SECONDS OUT.md"]}</p>
 */
public final class RouteChurnBenchmark
{
    private static final String HEADING = "## Route churn";
    private static final String HASH = "vnc_sandboxes";
    private static final int FIRST_ID = 100_000;
    /** Ids written in turn: each pass over them creates, moves, then deletes every one. */
    private static final int IDS = 20_000;
    /** Sandboxes the steady traffic goes to (routed once, before the churn). */
    private static final int STEADY = 50;
    private static final int TRAFFIC_PER_REPLICA = 200;
    /** One write in this many is followed until both replicas route it as written. */
    private static final int FOLLOW_EVERY = 50;
    private static final Duration QUIET = Duration.ofSeconds(15);
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();
    private static final Pattern CALLS = Pattern.compile("cmdstat_(\\w+):calls=(\\d+)");
    /** Requests sent to follow changes. */
    private static final AtomicLong PROBES = new AtomicLong();

    private RouteChurnBenchmark()
    {
    }

    /** The steady traffic's tally. */
    private static final class Traffic
    {
        final AtomicLong sent = new AtomicLong();
        final AtomicLong ok = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
    }

    public static void main(String[] args) throws Exception
    {
        int rate = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 60;
        Path out = Path.of(args.length > 2 ? args[2] : "docs/BENCHMARKS.md");

        ScheduledExecutorService timer = Executors.newScheduledThreadPool(4);
        List<GatewayProcess> replicas = new ArrayList<>();
        try (RedisServerProcess redis = RedisServerProcess.start();
            SandboxBackend a = SandboxBackend.start("a");
            SandboxBackend b = SandboxBackend.start("b");
            RawRedis writer = RawRedis.connect(redis.port());
            RawRedis observer = RawRedis.connect(redis.port()))
        {
            for (int i = 0; i < STEADY; i++)
                writer.hset(HASH, Integer.toString(i + 1), a.hostPort());
            for (int i = 0; i < 2; i++)
                replicas.add(GatewayProcess.start("{}\n", Map.of("SANDGATE_STORE_TYPE", "redis", "SANDGATE_STORE_REDIS_ADDRESS", redis.address())));

            Traffic traffic = new Traffic();
            for (GatewayProcess replica : replicas)
                steady(replica, traffic, timer);

            // Quiet: the traffic alone, for the CPU it costs without churn (and the JIT's warm-up).
            Thread.sleep(QUIET.toMillis() / 3);
            double[] quiet = cpu(replicas, Duration.ofMillis(QUIET.toMillis() * 2 / 3));
            long quietRequests = traffic.sent.get();

            // Churn.
            Map<String, Long> before = commandCalls(observer);
            long trafficBefore = traffic.sent.get();
            long failedBefore = traffic.failed.get();
            Samples visible = new Samples();
            AtomicLong lost = new AtomicLong();
            double cpuBefore = totalCpu(replicas);
            long start = System.nanoTime();
            long writes = (long)rate * seconds;
            for (long i = 0; i < writes; i++)
            {
                long due = start + i * 1_000_000_000L / rate;
                long wait = due - System.nanoTime();
                if (wait > 0)
                    TimeUnit.NANOSECONDS.sleep(wait);
                String id = Integer.toString(FIRST_ID + (int)(i % IDS));
                int pass = (int)((i / IDS) % 3);
                String expected = switch (pass)
                {
                    case 0 -> { writer.hset(HASH, id, a.hostPort()); yield a.name(); }
                    case 1 -> { writer.hset(HASH, id, b.hostPort()); yield b.name(); }
                    default -> { writer.hdel(HASH, id); yield null; }
                };
                if (i % FOLLOW_EVERY == 0)
                    follow(replicas, id, expected, System.nanoTime(), visible, lost, timer);
            }
            long elapsed = System.nanoTime() - start;
            double churnCpu = totalCpu(replicas) - cpuBefore;
            // The last followed writes finish being seen.
            Thread.sleep(3000);
            Map<String, Long> after = commandCalls(observer);
            long churnRequests = traffic.sent.get() - trafficBefore;
            long churnFailed = traffic.failed.get() - failedBefore;

            String section = report(rate, seconds, writes, elapsed, visible.sorted(), lost.get(), quiet, quietRequests, churnCpu, churnRequests,
                churnFailed, before, after);
            System.out.println(section);
            BenchmarksDocument.writeSection(out, HEADING, section);
        }
        finally
        {
            timer.shutdownNow();
            replicas.forEach(GatewayProcess::close);
        }
    }

    /** Requests to the steady sandboxes, ids in the path, at a fixed rate, for as long as the run. */
    private static void steady(GatewayProcess replica, Traffic traffic, ScheduledExecutorService timer)
    {
        AtomicLong n = new AtomicLong();
        timer.scheduleAtFixedRate(() ->
        {
            long i = n.getAndIncrement();
            traffic.sent.incrementAndGet();
            HTTP.sendAsync(HttpRequest.newBuilder(replica.uri("/vnc/" + (1 + i % STEADY) + "/asset.js")).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding())
                .whenComplete((response, failure) -> (failure == null && response.statusCode() == 200 ? traffic.ok : traffic.failed).incrementAndGet());
        }, 0, 1_000_000 / TRAFFIC_PER_REPLICA, TimeUnit.MICROSECONDS);
    }

    /**
     * Polls every replica for {@code id} until each routes it as written ({@code expected} backend,
     * or no route once deleted); the slowest replica's time is the sample. A write not seen within
     * 10 s counts as lost.
     */
    private static void follow(List<GatewayProcess> replicas, String id, String expected, long written, Samples visible, AtomicLong lost,
                               ScheduledExecutorService timer)
    {
        timer.execute(new Runnable()
        {
            private final boolean[] seen = new boolean[replicas.size()];

            @Override
            public void run()
            {
                boolean all = true;
                for (int r = 0; r < replicas.size(); r++)
                {
                    if (!seen[r])
                        seen[r] = routes(replicas.get(r), id, expected);
                    all &= seen[r];
                }
                long age = System.nanoTime() - written;
                if (all)
                    visible.add(age);
                else if (age > TimeUnit.SECONDS.toNanos(10))
                    lost.incrementAndGet();
                else
                    timer.schedule(this, 5, TimeUnit.MILLISECONDS);
            }
        });
    }

    /** Whether the replica routes {@code id} to {@code expected} (null: nowhere). */
    private static boolean routes(GatewayProcess replica, String id, String expected)
    {
        PROBES.incrementAndGet();
        try
        {
            HttpResponse<Void> response = HTTP.send(HttpRequest.newBuilder(replica.uri("/vnc/" + id + "/probe")).timeout(Duration.ofSeconds(2)).build(),
                HttpResponse.BodyHandlers.discarding());
            if (expected == null)
                return response.statusCode() == 404;
            return response.statusCode() == 200 && expected.equals(response.headers().firstValue("X-Backend").orElse(null));
        }
        catch (IOException x)
        {
            return false;
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Per replica, the CPU seconds spent over {@code window}. */
    private static double[] cpu(List<GatewayProcess> replicas, Duration window) throws Exception
    {
        double[] before = new double[replicas.size()];
        for (int r = 0; r < replicas.size(); r++)
            before[r] = replicas.get(r).cpuSeconds();
        Thread.sleep(window.toMillis());
        double[] spent = new double[replicas.size()];
        for (int r = 0; r < replicas.size(); r++)
            spent[r] = (replicas.get(r).cpuSeconds() - before[r]) / (window.toMillis() / 1000.0);
        return spent;
    }

    private static double totalCpu(List<GatewayProcess> replicas) throws IOException
    {
        double total = 0;
        for (GatewayProcess replica : replicas)
            total += replica.cpuSeconds();
        return total;
    }

    /** Calls per command since the server started ({@code INFO commandstats}). */
    private static Map<String, Long> commandCalls(RawRedis redis)
    {
        Object info = redis.command("INFO", "commandstats");
        Map<String, Long> calls = new java.util.TreeMap<>();
        Matcher m = CALLS.matcher(String.valueOf(info));
        while (m.find())
            calls.put(m.group(1), Long.parseLong(m.group(2)));
        return calls;
    }

    private static String report(int rate, int seconds, long writes, long elapsedNanos, long[] visible, long lost, double[] quietCpu, long quietRequests,
                                 double churnCpu, long churnRequests, long churnFailed, Map<String, Long> before, Map<String, Long> after)
    {
        double elapsed = elapsedNanos / 1e9;
        StringBuilder s = new StringBuilder(HEADING).append("\n\n");
        s.append(String.format(Locale.ROOT, "`RouteChurnBenchmark %d %d` (%s): plain `HSET`/`HDEL` on `%s` by a separate Redis client at %d writes/s "
                + "for %d s (each id created to backend a, moved to b, then deleted, in passes over %d ids), while two replicas "
                + "(`java -Xmx512m -jar target/sandgate.jar`, separate processes, one redis-server) serve %d req/s each to %d steady sandboxes. "
                + "One write in %d is followed: both replicas are polled every 5 ms until each routes the id as written (or answers 404 once deleted).\n\n",
            rate, seconds, Instant.now().toString().substring(0, 16) + "Z", HASH, rate, seconds, IDS, TRAFFIC_PER_REPLICA, STEADY, FOLLOW_EVERY));
        s.append("| measure | value |\n|---|---|\n");
        s.append(String.format(Locale.ROOT, "| writes | %d in %.1f s (%.0f/s) |%n", writes, elapsed, writes / elapsed));
        s.append(String.format(Locale.ROOT, "| changes followed, seen by both replicas | %d (not seen within 10 s: %d) |%n", visible.length, lost));
        s.append(String.format(Locale.ROOT, "| time until both replicas route a change, p50 / p99 / max | %.1f / %.1f / %.1f ms |%n",
            Samples.millis(visible, 0.5), Samples.millis(visible, 0.99), Samples.millis(visible, 1.0)));
        s.append(String.format(Locale.ROOT, "| steady traffic during the churn | %d requests, %d failed |%n", churnRequests, churnFailed));
        double quietTotal = 0;
        for (double core : quietCpu)
            quietTotal += core;
        s.append(String.format(Locale.ROOT, "| replicas' CPU, traffic alone (%d req/s in all) | %.0f %% of a core for both |%n",
            TRAFFIC_PER_REPLICA * 2, quietTotal * 100));
        s.append(String.format(Locale.ROOT, "| replicas' CPU, traffic and churn (probes included) | %.0f %% of a core for both |%n", churnCpu / elapsed * 100));
        long total = 0;
        StringBuilder commands = new StringBuilder();
        for (Map.Entry<String, Long> entry : after.entrySet())
        {
            long calls = entry.getValue() - before.getOrDefault(entry.getKey(), 0L);
            total += calls;
            if (calls > 0 && !entry.getKey().equals("info"))
                commands.append(commands.isEmpty() ? "" : ", ").append(entry.getKey()).append(' ').append(calls);
        }
        s.append(String.format(Locale.ROOT, "| Redis commands during the churn | %.0f/s in all: %s |%n", total / elapsed, commands));
        long reads = after.getOrDefault("hget", 0L) - before.getOrDefault("hget", 0L);
        long refreshes = after.getOrDefault("hmget", 0L) - before.getOrDefault("hmget", 0L);
        s.append(String.format(Locale.ROOT, "| route reads | hget %d (probes asking a replica for an id it had not cached yet; %d probes in all), "
            + "hmget %d (cached routes refreshed after change notifications, batched: %d writes x 2 replicas); the steady requests' ids are cached |%n",
            reads, PROBES.get(), refreshes, writes));
        s.append(String.format(Locale.ROOT, "| requests served during the churn | %d steady, %d probes |%n", churnRequests, PROBES.get()));
        s.append(String.format(Locale.ROOT, "%nBefore the churn, %d steady requests warmed the replicas up.%n", quietRequests));
        return s.toString();
    }
}
