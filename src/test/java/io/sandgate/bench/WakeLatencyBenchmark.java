package io.sandgate.bench;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.SandboxManagerDouble;

/**
 * What waking a paused sandbox adds to its first request, the manager's own time subtracted. One
 * embedded gateway on a real redis-server, a sandbox manager (an HTTP test double) that marks the
 * route running as soon as it is asked (an {@code HSET} by a client of its own, as a pod watcher
 * would), and a sandbox backend. For each of N fresh sandboxes, paused beforehand: the first
 * request (it wakes the sandbox) and, right after, a request to a running sandbox on the same
 * backend, the reference of the same moment. Added = first request - reference - the manager's
 * time from being asked to its write being acknowledged.
 *
 * <p>Run: {@code mvn -q test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.sandgate.bench.WakeLatencyBenchmark [-Dexec.args="WAKES"]}</p>
 */
public final class WakeLatencyBenchmark
{
    private static final String ROUTES = "vnc_sandboxes";
    private static final int WARM_UP = 100;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private WakeLatencyBenchmark()
    {
    }

    public static void main(String[] args) throws Exception
    {
        int wakes = args.length > 0 ? Integer.parseInt(args[0]) : 500;
        Map<String, Long> managerNanos = new ConcurrentHashMap<>();
        try (RedisServerProcess redis = RedisServerProcess.start();
             RawRedis raw = RawRedis.connect(redis.port());
             RawRedis watcher = RawRedis.connect(redis.port());
             SandboxBackend sandbox = SandboxBackend.start("bench");
             SandboxManagerDouble manager = SandboxManagerDouble.start())
        {
            manager.resumingAfter(Duration.ZERO, id ->
            {
                long start = System.nanoTime();
                watcher.hset(ROUTES, id, sandbox.hostPort());
                managerNanos.put(id, System.nanoTime() - start);
            });
            int first = 500_000;
            for (int i = 0; i < WARM_UP + wakes; i++)
                raw.hset(ROUTES, Integer.toString(first + i), "{\"state\":\"paused\"}");
            raw.hset(ROUTES, "1", sandbox.hostPort());
            try (RunningGateway gateway = RunningGateway.start(config -> config.redisStore(redis).set("log.access", "false")
                .set("ingress.wake.url", manager.url().toString())))
            {
                long[] wake = new long[wakes];
                long[] reference = new long[wakes];
                long[] added = new long[wakes];
                for (int i = 0; i < WARM_UP + wakes; i++)
                {
                    String id = Integer.toString(first + i);
                    long woken = timed(gateway, "/vnc/" + id + "/echo");
                    long plain = timed(gateway, "/vnc/1/echo");
                    if (i < WARM_UP)
                        continue;
                    int n = i - WARM_UP;
                    wake[n] = woken;
                    reference[n] = plain;
                    added[n] = woken - plain - managerNanos.getOrDefault(id, 0L);
                }
                if (manager.calls() != WARM_UP + wakes)
                    throw new IllegalStateException("the manager was asked " + manager.calls() + " times for " + (WARM_UP + wakes) + " sandboxes");
                System.out.printf(Locale.ROOT, "## Wake latency (%s, %d wakes after %d of warm-up)%n%n", Instant.now(), wakes, WARM_UP);
                System.out.println("| | p50 ms | p99 ms |");
                System.out.println("|---|---|---|");
                row("first request to a paused sandbox", wake);
                row("request to a running sandbox (reference)", reference);
                row("added by the wake, manager's time subtracted", added);
            }
        }
    }

    private static long timed(RunningGateway gateway, String path) throws Exception
    {
        long start = System.nanoTime();
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve(path)).build(), HttpResponse.BodyHandlers.ofString());
        long took = System.nanoTime() - start;
        if (response.statusCode() != 200)
            throw new IllegalStateException(path + " answered " + response.statusCode() + ": " + response.body());
        return took;
    }

    private static void row(String what, long[] nanos)
    {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        System.out.printf(Locale.ROOT, "| %s | %.2f | %.2f |%n", what, sorted[sorted.length / 2] / 1e6, sorted[(int)Math.ceil(sorted.length * 0.99) - 1] / 1e6);
    }
}
