package io.sandgate.store;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.bench.BenchmarksDocument;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.SandgateConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.egress.EgressPlan;
import io.sandgate.ingress.RouteStore;
import io.sandgate.mcp.McpSession;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * What each thing the gateway keeps in Redis costs there, measured on a real redis-server as the
 * growth of {@code used_memory} per item: a route (as the pod watcher writes it), an MCP session
 * with its event log, an event in a log, a sticky pin. The capacity plan (docs/CAPACITY.md)
 * multiplies these.
 *
 * <p>Run: {@code mvn -q test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.sandgate.store.StoreFootprintBenchmark [-Dexec.args="OUT.md"]}</p>
 */
public final class StoreFootprintBenchmark
{
    private static final String HEADING = "## Store footprint in Redis";
    private static final Pattern USED = Pattern.compile("used_memory:(\\d+)");
    private static final Pattern VERSION = Pattern.compile("redis_version:(\\S+)");
    private static final int ROUTES = 100_000;
    private static final int SESSIONS = 10_000;
    /** Sessions whose log is then filled to the bus's capacity, and that capacity. */
    private static final int FULL_SESSIONS = 1_000;
    private static final int EVENTS_PER_SESSION = 100;
    private static final int PINS = 10_000;
    /** A relayed MCP message of a typical size: a tools/call answer with a short text result. */
    private static final String MESSAGE = "{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""
        + "x".repeat(200) + "\"}],\"isError\":false}}";

    private StoreFootprintBenchmark()
    {
    }

    public static void main(String[] args) throws Exception
    {
        Path out = Path.of(args.length > 0 ? args[0] : "docs/BENCHMARKS.md");
        try (RedisServerProcess redis = RedisServerProcess.start(); RawRedis raw = RawRedis.connect(redis.port()); Schedulers schedulers = Schedulers.create())
        {
            Config config = new Config();
            config.useSingleServer().setAddress(redis.address());
            RedissonClient redisson = Redisson.create(config);
            try
            {
                long start = used(raw);
                for (int i = 0; i < ROUTES; i++)
                    raw.hset("vnc_sandboxes", Integer.toString(1_000_000 + i), "10.42." + (i / 250 % 256) + "." + (i % 250) + ":6080");
                long routes = used(raw);

                RedisSessionBus bus = new RedisSessionBus(redisson, Duration.ofHours(1), EVENTS_PER_SESSION, 16L << 20, Duration.ofSeconds(1), WakeUps.BROADCAST, schedulers, new RedisWaits(64, new SimpleMeterRegistry()));
                for (int i = 0; i < SESSIONS; i++)
                {
                    McpSession session = McpSession.create(String.format("%032x", i + 1), "tools", "agent-" + (i % 100));
                    bus.create(session);
                    bus.append(session.id(), session.id() + "-0", MESSAGE);
                }
                long sessions = used(raw);
                for (int i = 0; i < FULL_SESSIONS; i++)
                {
                    for (int e = 1; e < EVENTS_PER_SESSION; e++)
                        bus.append(String.format("%032x", i + 1), i + "-" + e, MESSAGE);
                }
                long events = used(raw);

                RedisStickySessions sticky = new RedisStickySessions(redisson, new RedisWaits(64, new SimpleMeterRegistry()));
                for (int i = 0; i < PINS; i++)
                {
                    // Keyed as the egress planner keys them: scoped by pool and calling agent.
                    String key = new EgressPlan.Sticky("openai", Optional.of("agent-" + i), "task-" + i, Duration.ofMinutes(30)).key();
                    sticky.put(key, "node-" + (i % 8), Duration.ofMinutes(30));
                }
                long pins = used(raw);

                Matcher version = VERSION.matcher(String.valueOf(raw.command("INFO", "server")));
                double cached = heapPerCachedRoute(redis);
                String section = report(version.find() ? version.group(1) : "?", start, routes, sessions, events, pins, cached);
                System.out.println(section);
                BenchmarksDocument.writeSection(out, HEADING, section);
            }
            finally
            {
                redisson.shutdown();
            }
        }
    }

    /** {@code used_memory} after the server has settled. */
    private static long used(RawRedis raw)
    {
        Matcher m = USED.matcher(String.valueOf(raw.command("INFO", "memory")));
        if (!m.find())
            throw new IllegalStateException("no used_memory in INFO memory");
        return Long.parseLong(m.group(1));
    }

    /**
     * The gateway's side: heap per route in a replica's route cache, every route written above read
     * once through the gateway's own Redis route store. In this JVM, which does nothing else meanwhile.
     */
    private static double heapPerCachedRoute(RedisServerProcess redis) throws Exception
    {
        SandgateConfig config = ConfigLoader.fromValues(Map.of("store.type", "redis", "store.redis.address", redis.address(),
            "ingress.route-cache-size", Integer.toString(ROUTES * 2), "ingress.cookie.secret", "footprint-bench-0123456789abcdef"));
        try (Schedulers schedulers = Schedulers.create(); Store store = Store.create(config, new SimpleMeterRegistry(), schedulers))
        {
            RouteStore routes = store.routes();
            routes.find(Integer.toString(1_000_000));
            long before = heapUsed();
            for (int i = 0; i < ROUTES; i++)
                routes.find(Integer.toString(1_000_000 + i)).orElseThrow();
            long after = heapUsed();
            return (after - before) / (double)ROUTES;
        }
    }

    private static long heapUsed() throws InterruptedException
    {
        for (int i = 0; i < 3; i++)
        {
            System.gc();
            Thread.sleep(200);
        }
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }

    private static String report(String version, long start, long routes, long sessions, long events, long pins, double cachedRoute)
    {
        StringBuilder s = new StringBuilder(HEADING).append("\n\n");
        s.append(String.format(Locale.ROOT, "`StoreFootprintBenchmark` (%s, Redis %s, default settings): growth of `used_memory` per item written; "
                + "routes as the pod watcher writes them (`HSET vnc_sandboxes <id> <ip>:<port>`), MCP sessions created and given one "
                + "%d-byte event each through the gateway's own session bus, then %d of them filled to the log's capacity (%d events), sticky pins through the gateway's "
                + "own store.%n%n", Instant.now().toString().substring(0, 16) + "Z", version, MESSAGE.length(),
            FULL_SESSIONS, EVENTS_PER_SESSION));
        s.append("| item | count | bytes each |\n|---|---|---|\n");
        s.append(String.format(Locale.ROOT, "| route | %d | %.0f |%n", ROUTES, (routes - start) / (double)ROUTES));
        s.append(String.format(Locale.ROOT, "| MCP session with its first event | %d | %.0f |%n", SESSIONS, (sessions - routes) / (double)SESSIONS));
        s.append(String.format(Locale.ROOT, "| MCP event in a session's log (%d bytes of JSON; the first ones fill the 4 KiB node the first event took) | %d | %.0f |%n",
            MESSAGE.length(), FULL_SESSIONS * (EVENTS_PER_SESSION - 1), (events - sessions) / (double)(FULL_SESSIONS * (EVENTS_PER_SESSION - 1))));
        s.append(String.format(Locale.ROOT, "| MCP session with a full log (%d events) | %d | %.0f |%n", EVENTS_PER_SESSION, FULL_SESSIONS,
            (sessions - routes) / (double)SESSIONS + (events - sessions) / (double)FULL_SESSIONS));
        s.append(String.format(Locale.ROOT, "| sticky pin | %d | %.0f |%n", PINS, (pins - events) / (double)PINS));
        s.append(String.format(Locale.ROOT, "%nIn a replica's heap (the gateway's Redis route store, every route read once, heap after full GCs, in this JVM): "
            + "%.0f bytes per cached route.%n", cachedRoute));
        return s.toString();
    }
}
