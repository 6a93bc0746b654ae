package io.sandgate.bench;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.TargetServer;
import io.sandgate.testing.Tinyproxy;

/**
 * Agent workflows through a pool of real tinyproxy nodes with the route settings a new user gets
 * (no {@code retry}, no {@code egress.health.*}), while a node crashes and a target flaps: at least
 * N workflows (and as many more as start in the first 20 s) of 15 steps, 16 at a time, a step being an HTTPS GET through the gateway's base-URL
 * mode; a workflow succeeds only if all its steps do. Steps 5, 10 and 15 of every workflow go to
 * the flapping target, a second {@link TargetServer} behind a {@link FlappingPort} that refuses
 * connections for 1 s out of every 3; a failed step to it while it was down is the target's
 * failure and is counted apart, every other failed step is the gateway's or a node's. One node is
 * killed hard (SIGKILL) 3 s into the run and started again 5 s later on the same port. The same
 * schedule runs against a single-node pool, the baseline, in the same process.
 *
 * <p>Run: {@code mvn -q test-compile}, then {@code java -cp "$CP" io.sandgate.bench.EgressSoakBenchmark [WORKFLOWS [OUT.md]]}
 * with the test classpath (bench/README.md, "Running single parts"); needs Debian's tinyproxy.
 * About a minute and a half per run: most of it waits for the killed node's recovery ramp.</p>
 */
public final class EgressSoakBenchmark
{
    private static final String HEADING = "## Egress soak through real nodes";
    private static final int STEPS = 15;
    private static final int CONCURRENCY = 16;
    /** Every FLAP_EVERY-th step goes to the flapping target. */
    private static final int FLAP_EVERY = 5;
    private static final Duration FLAP_UP = Duration.ofSeconds(2);
    private static final Duration FLAP_DOWN = Duration.ofSeconds(1);
    private static final Duration KILL_AT = Duration.ofSeconds(3);
    private static final Duration DEAD_FOR = Duration.ofSeconds(5);
    /** How long after the restart the admin API is watched for the node's return, traffic or not. */
    private static final Duration RECOVERY_WATCH = Duration.ofSeconds(45);
    /** Workflows keep starting until this much of the run has passed, so traffic runs on well past the restart. */
    private static final Duration MIN_RUN = Duration.ofSeconds(20);
    private static final String ADMIN = "soak-admin-token";
    private static final String POOL = "soak";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern REQUESTS = Pattern.compile("(?m)^sandgate_egress_requests_total\\{([^}]*)} ([0-9.E+]+)$");
    private static final Pattern RETRIES = Pattern.compile("(?m)^sandgate_egress_retries_total(?:\\{[^}]*})? ([0-9.E+]+)$");

    private EgressSoakBenchmark()
    {
    }

    /**
     * What one setup measured.
     *
     * @param tasksNotLostByGateway workflows whose failed steps, if any, were all the flapping target's
     * @param gatewayFailures failed steps that were not the target's, by cause ("stable target 502", ...)
     * @param ejectMillis from the kill to the admin API showing the node ejected; -1 if never seen
     * @param recoverMillis from the restart to the admin API showing the node in service; -1 if never seen
     * @param fullWeightMillis from the restart to the node back at its configured weight; -1 if never seen
     * @param deadNodeAttempts attempts the gateway sent to the killed node while it was dead
     * @param ejections how often each node was ejected over the run, as the admin API counts them
     * @param timeline every node's ejections and returns as the admin API showed them, in seconds from the start
     */
    record Result(String setup, int workflows, int succeeded, int tasksNotLostByGateway, long[] steps, int targetFailures,
                  Map<String, Integer> gatewayFailures, long ejectMillis, long recoverMillis, long fullWeightMillis, long deadNodeAttempts,
                  double retries, double attempts, String ejections, String timeline, long seconds)
    {
        int gatewayFailureCount()
        {
            return gatewayFailures.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    public static void main(String[] args) throws Exception
    {
        int workflows = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        Path out = Path.of(args.length > 1 ? args[1] : "docs/BENCHMARKS.md");
        double loadAtStart = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        List<Result> results = new ArrayList<>();
        try (TargetServer target = TargetServer.start(); TargetServer flappingTarget = TargetServer.start();
             FlappingPort flapping = FlappingPort.start(flappingTarget.httpsPort()))
        {
            results.add(run("single tinyproxy node (baseline)", 1, workflows, target, flapping));
            results.add(run("3 tinyproxy nodes", 3, workflows, target, flapping));
        }
        String section = section(workflows, loadAtStart, results);
        BenchmarksDocument.writeSection(out, HEADING, section);
        System.out.println(section);
        System.exit(0);
    }

    private static Result run(String setup, int nodeCount, int workflows, TargetServer target, FlappingPort flapping) throws Exception
    {
        List<Tinyproxy> nodes = new ArrayList<>();
        ScheduledExecutorService schedule = Executors.newScheduledThreadPool(2);
        ExecutorService agents = Executors.newFixedThreadPool(CONCURRENCY);
        try
        {
            for (int i = 0; i < nodeCount; i++)
                nodes.add(Tinyproxy.start("tp" + i, target.httpsPort(), flapping.port()));
            try (RunningGateway gateway = RunningGateway.start(config -> configure(config, nodes, target, flapping));
                 TinyproxyCrash crash = new TinyproxyCrash(nodes.get(0)))
            {
                String victim = nodes.get(0).name();
                String stable = "/egress/127.0.0.1:" + target.httpsPort() + "/echo";
                String flappy = "/egress/127.0.0.1:" + flapping.port() + "/echo";
                flapping.up();
                flapping.resetOutages();

                AtomicLong killedAt = new AtomicLong();
                AtomicLong restartedAt = new AtomicLong();
                AtomicLong ejectedAt = new AtomicLong();
                AtomicLong inServiceAt = new AtomicLong();
                AtomicLong fullWeightAt = new AtomicLong();
                double[] attemptsAtKill = new double[1];
                double[] attemptsAtRestart = new double[1];

                long begin = System.nanoTime();
                schedule.scheduleAtFixedRate(flapping::down, FLAP_UP.toMillis(), FLAP_UP.plus(FLAP_DOWN).toMillis(), TimeUnit.MILLISECONDS);
                schedule.scheduleAtFixedRate(flapping::up, FLAP_UP.plus(FLAP_DOWN).toMillis(), FLAP_UP.plus(FLAP_DOWN).toMillis(), TimeUnit.MILLISECONDS);
                schedule.schedule(() ->
                {
                    attemptsAtKill[0] = attempts(gateway, victim);
                    // The node is dead from the SIGKILL on, not from when its port is seen refusing.
                    killedAt.set(System.nanoTime());
                    crash.kill();
                    return null;
                }, KILL_AT.toMillis(), TimeUnit.MILLISECONDS);
                schedule.schedule(() ->
                {
                    crash.restart();
                    restartedAt.set(System.nanoTime());
                    attemptsAtRestart[0] = attempts(gateway, victim);
                    return null;
                }, KILL_AT.plus(DEAD_FOR).toMillis(), TimeUnit.MILLISECONDS);
                List<String> timeline = Collections.synchronizedList(new ArrayList<>());
                Thread watcher = new Thread(() -> watch(gateway, victim, begin, killedAt, restartedAt, ejectedAt, inServiceAt, fullWeightAt, timeline),
                    "pool-watcher");
                watcher.setDaemon(true);
                watcher.start();

                Samples steps = new Samples();
                AtomicInteger targetFailures = new AtomicInteger();
                Map<String, Integer> gatewayFailures = new ConcurrentHashMap<>();
                List<Future<int[]>> runs = new ArrayList<>();
                AtomicInteger started = new AtomicInteger();
                for (int a = 0; a < CONCURRENCY; a++)
                {
                    runs.add(agents.submit(() ->
                    {
                        int[] total = new int[3];
                        while (started.getAndIncrement() < workflows || System.nanoTime() - begin < MIN_RUN.toNanos())
                        {
                            int[] outcome = workflow(gateway, stable, flappy, flapping, steps, targetFailures, gatewayFailures);
                            total[0]++;
                            total[1] += outcome[0];
                            total[2] += outcome[1];
                        }
                        return total;
                    }));
                }
                int ran = 0;
                int succeeded = 0;
                int notLost = 0;
                for (Future<int[]> run : runs)
                {
                    int[] outcome = run.get();
                    ran += outcome[0];
                    succeeded += outcome[1];
                    notLost += outcome[2];
                }
                long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - begin);
                schedule.shutdownNow();
                flapping.up();
                // The node's return is watched on, traffic or not: a short run may end before it.
                watcher.join(Math.max(0, KILL_AT.plus(DEAD_FOR).plus(RECOVERY_WATCH).toMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)));
                watcher.interrupt();
                String metrics = metrics(gateway);
                double attempts = 0;
                Matcher requests = REQUESTS.matcher(metrics);
                while (requests.find())
                    attempts += Double.parseDouble(requests.group(2));
                Matcher retries = RETRIES.matcher(metrics);
                return new Result(setup, ran, succeeded, notLost, steps.sorted(), targetFailures.get(), new TreeMap<>(gatewayFailures),
                    since(killedAt, ejectedAt), since(restartedAt, inServiceAt), since(restartedAt, fullWeightAt),
                    restartedAt.get() == 0 ? -1 : Math.round(attemptsAtRestart[0] - attemptsAtKill[0]), retries.find() ? Double.parseDouble(retries.group(1)) : 0, attempts, ejections(gateway), String.join("; ", timeline), seconds);
            }
        }
        finally
        {
            schedule.shutdownNow();
            agents.shutdownNow();
            nodes.forEach(Tinyproxy::close);
        }
    }

    /** The defaults a new user gets: no retry key on the route, no egress.health key at all. */
    private static void configure(io.sandgate.testing.GatewayConfig config, List<Tinyproxy> nodes, TargetServer target, FlappingPort flapping)
    {
        List<Map<String, Object>> pool = new ArrayList<>();
        for (Tinyproxy node : nodes)
            pool.add(Map.of("id", node.name(), "address", node.address(), "region", "eu", "weight", 100));
        config.set("log.access", "false")
            .set("admin.token", ADMIN)
            .trustStoreOf(target)
            // The targets run on loopback, which the SSRF guard refuses unless allowed, and on ports other than 443.
            .set("egress.ssrf.allow", "127.0.0.0/8")
            .set("egress.connect-ports", "443," + target.httpsPort() + "," + flapping.port())
            .set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", POOL)))
            .set("egress.pools", Map.of(POOL, Map.of("region", "eu", "nodes", pool)));
    }

    /** One workflow of STEPS steps; {succeeded, not lost by the gateway} as 1 or 0. */
    private static int[] workflow(RunningGateway gateway, String stable, String flappy, FlappingPort flapping, Samples steps,
                                  AtomicInteger targetFailures, Map<String, Integer> gatewayFailures)
    {
        boolean ok = true;
        boolean lostByGateway = false;
        for (int step = 1; step <= STEPS; step++)
        {
            boolean toFlapping = step % FLAP_EVERY == 0;
            long start = System.nanoTime();
            String failure = step(gateway, toFlapping ? flappy : stable);
            long end = System.nanoTime();
            steps.add(end - start);
            if (failure == null)
                continue;
            ok = false;
            if (toFlapping && flapping.downDuring(start, end))
            {
                targetFailures.incrementAndGet();
            }
            else
            {
                lostByGateway = true;
                gatewayFailures.merge((toFlapping ? "flapping target (up), " : "stable target, ") + failure, 1, Integer::sum);
            }
        }
        return new int[]{ok ? 1 : 0, lostByGateway ? 0 : 1};
    }

    /** One step; null when it succeeded, otherwise what the agent saw. */
    private static String step(RunningGateway gateway, String path)
    {
        try
        {
            HttpResponse<Void> response = HTTP.send(HttpRequest.newBuilder(gateway.uri(path)).timeout(Duration.ofSeconds(15)).build(),
                HttpResponse.BodyHandlers.discarding());
            return response.statusCode() == 200 ? null : String.valueOf(response.statusCode());
        }
        catch (Exception e)
        {
            return e.getClass().getSimpleName();
        }
    }

    /**
     * Polls the admin API every 20 ms: when the killed node first shows as ejected, when it is back
     * in service after the restart, and when it is back at its configured weight.
     */
    private static void watch(RunningGateway gateway, String victim, long begin, AtomicLong killedAt, AtomicLong restartedAt, AtomicLong ejectedAt,
                              AtomicLong inServiceAt, AtomicLong fullWeightAt, List<String> timeline)
    {
        Map<String, Boolean> out = new java.util.HashMap<>();
        while (!Thread.currentThread().isInterrupted() && fullWeightAt.get() == 0)
        {
            try
            {
                JsonNode node = null;
                long now = System.nanoTime();
                for (JsonNode n : pool(gateway).get("nodes"))
                {
                    String id = n.get("id").asText();
                    boolean ejected = n.get("ejected").asBoolean();
                    if (!Boolean.valueOf(ejected).equals(out.getOrDefault(id, false)))
                        timeline.add(String.format(Locale.ROOT, "%s %s at %.1f s%s", id, ejected ? "ejected" : "back", (now - begin) / 1e9,
                            ejected ? " (" + n.get("ejection").asText() + ")" : ""));
                    out.put(id, ejected);
                    if (id.equals(victim))
                        node = n;
                }
                boolean ejected = node.get("ejected").asBoolean();
                if (killedAt.get() != 0 && ejectedAt.get() == 0 && ejected)
                    ejectedAt.set(now);
                if (restartedAt.get() != 0 && inServiceAt.get() == 0 && !ejected)
                    inServiceAt.set(now);
                if (inServiceAt.get() != 0 && node.get("weight").asDouble() >= node.get("configuredWeight").asDouble())
                    fullWeightAt.set(now);
                Thread.sleep(20);
            }
            catch (InterruptedException e)
            {
                return;
            }
            catch (Exception e)
            {
                // The admin API answers again on the next poll.
            }
        }
    }

    /** The pool as {@code GET /admin/egress/pools} shows it. */
    private static JsonNode pool(RunningGateway gateway) throws Exception
    {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.uri("/admin/egress/pools"))
            .header("Authorization", "Bearer " + ADMIN).build(), HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(response.body()).get(0);
    }

    /** {@code tp0 1, tp1 0, ...}: a node ejected more than once was ejected for something besides the kill. */
    private static String ejections(RunningGateway gateway) throws Exception
    {
        List<String> counts = new ArrayList<>();
        for (JsonNode node : pool(gateway).get("nodes"))
            counts.add(node.get("id").asText() + " " + node.get("ejections").asText());
        return String.join(", ", counts);
    }

    private static String metrics(RunningGateway gateway) throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(gateway.uri("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    /** Attempts the gateway sent through the node so far, whatever their outcome. */
    private static double attempts(RunningGateway gateway, String node) throws Exception
    {
        double total = 0;
        Matcher m = REQUESTS.matcher(metrics(gateway));
        while (m.find())
        {
            if (m.group(1).contains("node=\"" + node + "\""))
                total += Double.parseDouble(m.group(2));
        }
        return total;
    }

    private static long since(AtomicLong from, AtomicLong to)
    {
        return from.get() == 0 || to.get() == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(Math.max(0, to.get() - from.get()));
    }

    private static String section(int workflows, double loadAtStart, List<Result> results)
    {
        StringBuilder s = new StringBuilder(HEADING).append("\n\n")
            .append("Agent workflows of ").append(STEPS).append(" HTTPS steps each (idempotent GETs of `/echo`), ")
            .append(CONCURRENCY).append(" at a time, at least ").append(workflows).append(" per setup and new ones started until ")
            .append(MIN_RUN.toSeconds()).append(" s have passed, through the gateway's base-URL mode and a pool of real Debian tinyproxy nodes (`io.sandgate.testing.Tinyproxy`); ")
            .append("a workflow succeeds only if all its steps do. The route has no `retry` and no `egress.health.*` key is set: what a new user gets (one retry on another node, passive ejection after 3 failures, TCP probes every 3 s). ")
            .append("Faults, on the same schedule for both setups: node `tp0` is killed with SIGKILL ").append(KILL_AT.toSeconds())
            .append(" s into the run and started again on its port ").append(DEAD_FOR.toSeconds()).append(" s later; ")
            .append("steps 5, 10 and 15 of every workflow go to a flapping target, a second `TargetServer` behind a loopback port that refuses connections (and cuts the open ones) for ")
            .append(FLAP_DOWN.toSeconds()).append(" s out of every ").append(FLAP_UP.plus(FLAP_DOWN).toSeconds()).append(" s. ")
            .append("A failed step to the flapping target while it was down is the target's failure; every other failed step is counted against the gateway and its nodes. ")
            .append("\"Not lost by the gateway\" counts the workflows whose failed steps, if any, were all the target's (goal: 99.9 %). ")
            .append("Eject and recovery times come from polling `GET /admin/egress/pools` every 20 ms: kill to `ejected: true`, restart to `ejected: false` (and to the configured weight again, after the recovery ramp); ")
            .append("attempts to the dead node are the growth of `sandgate_egress_requests_total{node=\"tp0\"}` between kill and restart. Step latencies include failed steps. ")
            .append("Squid nodes are not in this run yet.\n")
            .append(String.format(Locale.ROOT, "Machine: %d cores, %s %s, Java %s, tinyproxy 1.11.1, load average %.1f at start.%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("os.name"), System.getProperty("os.arch"), System.getProperty("java.version"), loadAtStart))
            .append("Command: `mvn -q test-compile` then `java -cp \"$CP\" io.sandgate.bench.EgressSoakBenchmark` (CP as in bench/README.md, \"Running single parts\"; needs `tinyproxy`)\n\n")
            .append("| setup | task success | not lost by the gateway | failed steps: gateway or node | failed steps: target down | step p50 ms | step p99 ms | kill -> ejected | restart -> in service | restart -> full weight | attempts to the dead node | retries / attempts | ejections per node | run s |\n")
            .append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Result r : results)
        {
            s.append(String.format(Locale.ROOT, "| %s | %.1f %% (%d/%d) | %.1f %% (%d/%d) | %d | %d | %.0f | %.0f | %s | %s | %s | %d | %.1f %% | %s | %d |%n",
                r.setup(), 100.0 * r.succeeded() / r.workflows(), r.succeeded(), r.workflows(),
                100.0 * r.tasksNotLostByGateway() / r.workflows(), r.tasksNotLostByGateway(), r.workflows(),
                r.gatewayFailureCount(), r.targetFailures(), Samples.millis(r.steps(), 0.5), Samples.millis(r.steps(), 0.99),
                millis(r.ejectMillis()), millis(r.recoverMillis()), millis(r.fullWeightMillis()), r.deadNodeAttempts(),
                r.attempts() == 0 ? 0 : 100 * r.retries() / r.attempts(), r.ejections(), r.seconds()));
        }
        s.append("\nFailed steps counted against the gateway or a node, by what the agent saw:\n\n");
        for (Result r : results)
            s.append("- ").append(r.setup()).append(": ").append(r.gatewayFailures().isEmpty() ? "none" : r.gatewayFailures().toString()).append('\n');
        s.append(String.format(Locale.ROOT, "%nEjections and returns as the admin API showed them (the target went down at %d s and every %d s after, for %d s; `tp0` was killed at %d s and restarted at %d s):%n%n",
            FLAP_UP.toSeconds(), FLAP_UP.plus(FLAP_DOWN).toSeconds(), FLAP_DOWN.toSeconds(), KILL_AT.toSeconds(), KILL_AT.plus(DEAD_FOR).toSeconds()));
        for (Result r : results)
            s.append("- ").append(r.setup()).append(": ").append(r.timeline().isEmpty() ? "none" : r.timeline()).append('\n');
        return s.toString();
    }

    private static String millis(long ms)
    {
        return ms < 0 ? "not seen" : ms + " ms";
    }
}
