package io.sandgate.bench;

import java.lang.management.ManagementFactory;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
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
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.ProxyProcess;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.Squid;
import io.sandgate.testing.TargetServer;
import io.sandgate.testing.Tinyproxy;

/**
 * Agent workflows through pools of real tinyproxy and squid nodes with the route settings a new
 * user gets (no {@code retry}, no {@code egress.health.*}), while a node crashes and a target
 * flaps: at least N workflows (and as many more as start in the first 20 s, none after 90 s) of 15
 * steps, 16 at a time, a step being an HTTPS GET through the gateway's base-URL mode made as the
 * OpenAI and Anthropic SDKs make it, retries included ({@link SdkRetries}); a workflow succeeds
 * only if all its steps do. The first try of every step is also counted alone, as an agent without
 * retries would see it. Steps 5, 10 and 15 of every workflow go to the flapping target, a second
 * {@link TargetServer} behind a {@link FlappingPort} that refuses connections for 1 s out of every
 * 3; a failed step to it while it was down is the target's failure and is counted apart, every
 * other failed step is the gateway's or a node's. The pool's first node is killed hard (SIGKILL)
 * 3 s into the run and started again 5 s later on the same port. Every setup runs the same
 * schedule in the same process, the single-node pool being the baseline.
 *
 * <p>Run: {@code mvn -q test-compile}, then {@code java -cp "$CP" io.sandgate.bench.EgressSoakBenchmark [WORKFLOWS [OUT.md]]}
 * with the test classpath (bench/README.md, "Running single parts"); needs Debian's tinyproxy and
 * squid. About a minute per setup: most of it waits for the killed node's recovery ramp.</p>
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
    /**
     * No workflow starts after this, whatever N: with the agents' back-off a step that keeps failing
     * takes about 1.5 s, and a pool that never came back would hold the run for hours.
     */
    private static final Duration MAX_RUN = Duration.ofSeconds(90);
    private static final String ADMIN = "soak-admin-token";
    private static final String POOL = "soak";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern REQUESTS = Pattern.compile("(?m)^sandgate_egress_requests_total\\{([^}]*)} ([0-9.E+]+)$");
    private static final Pattern RETRIES = Pattern.compile("(?m)^sandgate_egress_retries_total(?:\\{[^}]*})? ([0-9.E+]+)$");

    private EgressSoakBenchmark()
    {
    }

    /** A pool of fresh nodes of these kinds, "tinyproxy" or "squid", in order; the first is the one killed. */
    private record Setup(String name, List<String> kinds)
    {
    }

    /**
     * What one setup measured.
     *
     * @param ejectMillis from the kill to the admin API showing the node ejected; -1 if never seen
     * @param recoverMillis from the restart to the admin API showing the node in service; -1 if never seen
     * @param fullWeightMillis from the restart to the node back at its configured weight; -1 if never seen
     * @param deadNodeAttempts attempts the gateway sent to the killed node while it was dead
     * @param ejections how often each node was ejected over the run, as the admin API counts them
     * @param timeline every node's ejections and returns as the admin API showed them, in seconds from the start
     */
    record Result(String setup, String victim, Tally tally, long ejectMillis, long recoverMillis, long fullWeightMillis, long deadNodeAttempts,
                  double retries, double attempts, String ejections, String outcomes, String timeline, long seconds)
    {
    }

    /** What the agents counted, shared by all of them. */
    static final class Tally
    {
        final AtomicInteger workflows = new AtomicInteger();
        /** Workflows all of whose steps succeeded, the SDK's retries included. */
        final AtomicInteger succeeded = new AtomicInteger();
        /** Workflows all of whose steps succeeded at the first try. */
        final AtomicInteger firstTrySucceeded = new AtomicInteger();
        /** Workflows whose failed first tries, if any, were all the flapping target's. */
        final AtomicInteger notLostByGateway = new AtomicInteger();
        final AtomicInteger steps = new AtomicInteger();
        /** Steps whose first try failed in a way the SDKs retry. */
        final AtomicInteger retriedSteps = new AtomicInteger();
        final AtomicInteger agentRetries = new AtomicInteger();
        /** Every step's time, from its first request to the end of its last, back-off included. */
        final Samples stepTimes = new Samples();
        final Failures firstTries = new Failures();
        final Failures afterRetries = new Failures();
    }

    /** Failed requests: the flapping target's while it was down, and the others by what the agent saw. */
    static final class Failures
    {
        final AtomicInteger target = new AtomicInteger();
        final Map<String, Integer> gateway = new ConcurrentHashMap<>();

        /** Counts a failure; true if it was the gateway's or a node's. */
        boolean add(boolean toFlapping, boolean targetDown, String failure)
        {
            if (targetDown)
            {
                target.incrementAndGet();
                return false;
            }
            gateway.merge((toFlapping ? "flapping target (up), " : "stable target, ") + failure, 1, Integer::sum);
            return true;
        }

        int gatewayCount()
        {
            return gateway.values().stream().mapToInt(Integer::intValue).sum();
        }

        @Override
        public String toString()
        {
            return gateway.isEmpty() ? "none" : new TreeMap<>(gateway).toString();
        }
    }

    /** One request's answer: its status, or 0 and the exception's name when none came. */
    private record Answer(int status, String exception, OptionalDouble retryAfterSeconds)
    {
        boolean ok()
        {
            return status == 200;
        }

        String failure()
        {
            return exception != null ? exception : String.valueOf(status);
        }
    }

    public static void main(String[] args) throws Exception
    {
        int workflows = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        Path out = Path.of(args.length > 1 ? args[1] : "docs/BENCHMARKS.md");
        double loadAtStart = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        List<Setup> setups = List.of(
            new Setup("single tinyproxy node (baseline)", List.of("tinyproxy")),
            new Setup("3 tinyproxy nodes", List.of("tinyproxy", "tinyproxy", "tinyproxy")),
            new Setup("3 squid nodes", List.of("squid", "squid", "squid")),
            new Setup("mixed: tinyproxy, squid, tinyproxy", List.of("tinyproxy", "squid", "tinyproxy")));
        List<Result> results = new ArrayList<>();
        long begin = System.nanoTime();
        try (TargetServer target = TargetServer.start(); TargetServer flappingTarget = TargetServer.start();
             FlappingPort flapping = FlappingPort.start(flappingTarget.httpsPort()))
        {
            for (Setup setup : setups)
            {
                results.add(run(setup, workflows, target, flapping));
                System.out.printf(Locale.ROOT, "%s done after %d s%n", setup.name(), TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - begin));
            }
        }
        // The load at both ends: on a shared machine, other work during the run moves eject times and tail latencies.
        double[] load = {loadAtStart, ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()};
        String section = section(workflows, load, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - begin), results);
        BenchmarksDocument.writeSection(out, HEADING, section);
        System.out.println(section);
        System.exit(0);
    }

    /** Node i of a pool: tinyproxy as {@code tp<i>}, squid as {@code sq<i>}, each allowed to CONNECT to both targets. */
    private static ProxyProcess node(String kind, int i, TargetServer target, FlappingPort flapping)
    {
        return switch (kind)
        {
            case "tinyproxy" -> Tinyproxy.start("tp" + i, target.httpsPort(), flapping.port());
            case "squid" -> Squid.start("sq" + i, target.httpsPort(), flapping.port());
            default -> throw new IllegalArgumentException(kind);
        };
    }

    private static Result run(Setup setup, int workflows, TargetServer target, FlappingPort flapping) throws Exception
    {
        List<ProxyProcess> nodes = new ArrayList<>();
        ScheduledExecutorService schedule = Executors.newScheduledThreadPool(2);
        ExecutorService agents = Executors.newFixedThreadPool(CONCURRENCY);
        try
        {
            for (int i = 0; i < setup.kinds().size(); i++)
                nodes.add(node(setup.kinds().get(i), i, target, flapping));
            try (RunningGateway gateway = RunningGateway.start(config -> configure(config, nodes, target, flapping)))
            {
                ProxyProcess victim = nodes.get(0);
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

                List<String> timeline = Collections.synchronizedList(new ArrayList<>());
                long begin = System.nanoTime();
                schedule.scheduleAtFixedRate(flapping::down, FLAP_UP.toMillis(), FLAP_UP.plus(FLAP_DOWN).toMillis(), TimeUnit.MILLISECONDS);
                schedule.scheduleAtFixedRate(flapping::up, FLAP_UP.plus(FLAP_DOWN).toMillis(), FLAP_UP.plus(FLAP_DOWN).toMillis(), TimeUnit.MILLISECONDS);
                schedule.schedule(() ->
                {
                    attemptsAtKill[0] = attempts(gateway, victim.name());
                    // The node is dead from the SIGKILL on, not from when its port is seen refusing.
                    killedAt.set(System.nanoTime());
                    victim.kill();
                    // When it happened: a loaded machine runs the schedule late.
                    timeline.add(String.format(Locale.ROOT, "%s SIGKILL at %.1f s", victim.name(), (killedAt.get() - begin) / 1e9));
                    return null;
                }, KILL_AT.toMillis(), TimeUnit.MILLISECONDS);
                schedule.schedule(() ->
                {
                    victim.restart();
                    restartedAt.set(System.nanoTime());
                    timeline.add(String.format(Locale.ROOT, "%s restarted at %.1f s", victim.name(), (restartedAt.get() - begin) / 1e9));
                    attemptsAtRestart[0] = attempts(gateway, victim.name());
                    return null;
                }, KILL_AT.plus(DEAD_FOR).toMillis(), TimeUnit.MILLISECONDS);
                Thread watcher = new Thread(() -> watch(gateway, victim.name(), begin, killedAt, restartedAt, ejectedAt, inServiceAt, fullWeightAt, timeline),
                    "pool-watcher");
                watcher.setDaemon(true);
                watcher.start();

                Tally tally = new Tally();
                List<Future<?>> runs = new ArrayList<>();
                AtomicInteger started = new AtomicInteger();
                for (int a = 0; a < CONCURRENCY; a++)
                {
                    runs.add(agents.submit(() ->
                    {
                        while ((started.getAndIncrement() < workflows || System.nanoTime() - begin < MIN_RUN.toNanos())
                            && System.nanoTime() - begin < MAX_RUN.toNanos())
                            workflow(gateway, stable, flappy, flapping, tally);
                        return null;
                    }));
                }
                for (Future<?> run : runs)
                    run.get();
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
                return new Result(setup.name(), victim.name(), tally, since(killedAt, ejectedAt), since(restartedAt, inServiceAt), since(restartedAt, fullWeightAt),
                    restartedAt.get() == 0 ? -1 : Math.round(attemptsAtRestart[0] - attemptsAtKill[0]), retries.find() ? Double.parseDouble(retries.group(1)) : 0,
                    attempts, ejections(gateway), outcomes(metrics), String.join("; ", timeline), seconds);
            }
        }
        finally
        {
            schedule.shutdownNow();
            agents.shutdownNow();
            nodes.forEach(ProxyProcess::close);
        }
    }

    /** The defaults a new user gets: no retry key on the route, no egress.health key at all. */
    private static void configure(GatewayConfig config, List<ProxyProcess> nodes, TargetServer target, FlappingPort flapping)
    {
        List<Map<String, Object>> pool = new ArrayList<>();
        for (ProxyProcess node : nodes)
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

    /** One workflow of STEPS steps, each retried as the SDKs retry it, counted into the tally. */
    private static void workflow(RunningGateway gateway, String stable, String flappy, FlappingPort flapping, Tally tally) throws InterruptedException
    {
        boolean ok = true;
        boolean firstTryOk = true;
        boolean lostByGateway = false;
        for (int step = 1; step <= STEPS; step++)
        {
            boolean toFlapping = step % FLAP_EVERY == 0;
            String path = toFlapping ? flappy : stable;
            long start = System.nanoTime();
            long attemptStart = start;
            Answer answer = send(gateway, path);
            long attemptEnd = System.nanoTime();
            if (!answer.ok())
            {
                firstTryOk = false;
                lostByGateway |= tally.firstTries.add(toFlapping, toFlapping && flapping.downDuring(attemptStart, attemptEnd), answer.failure());
            }
            int retries = 0;
            while (!answer.ok() && retries < SdkRetries.MAX_RETRIES && SdkRetries.retries(answer.status()))
            {
                TimeUnit.NANOSECONDS.sleep(SdkRetries.delay(retries, answer.retryAfterSeconds()).toNanos());
                retries++;
                attemptStart = System.nanoTime();
                answer = send(gateway, path);
                attemptEnd = System.nanoTime();
            }
            tally.stepTimes.add(attemptEnd - start);
            tally.steps.incrementAndGet();
            if (retries > 0)
            {
                tally.retriedSteps.incrementAndGet();
                tally.agentRetries.addAndGet(retries);
            }
            if (!answer.ok())
            {
                ok = false;
                tally.afterRetries.add(toFlapping, toFlapping && flapping.downDuring(attemptStart, attemptEnd), answer.failure());
            }
        }
        tally.workflows.incrementAndGet();
        if (ok)
            tally.succeeded.incrementAndGet();
        if (firstTryOk)
            tally.firstTrySucceeded.incrementAndGet();
        if (!lostByGateway)
            tally.notLostByGateway.incrementAndGet();
    }

    /** One request, as the SDK's HTTP client sends it. */
    private static Answer send(RunningGateway gateway, String path)
    {
        try
        {
            HttpResponse<Void> response = HTTP.send(HttpRequest.newBuilder(gateway.uri(path)).timeout(Duration.ofSeconds(15)).build(),
                HttpResponse.BodyHandlers.discarding());
            OptionalDouble retryAfter = response.headers().firstValue("Retry-After")
                .filter(v -> v.matches("[0-9]+(\\.[0-9]+)?"))
                .map(v -> OptionalDouble.of(Double.parseDouble(v)))
                .orElse(OptionalDouble.empty());
            return new Answer(response.statusCode(), null, retryAfter);
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
            return new Answer(0, e.getClass().getSimpleName(), OptionalDouble.empty());
        }
        catch (Exception e)
        {
            return new Answer(0, e.getClass().getSimpleName(), OptionalDouble.empty());
        }
    }

    /**
     * Polls the admin API every 20 ms: when the killed node first shows as ejected, when it is back
     * in service after the restart, and when it is back at its configured weight.
     */
    private static void watch(RunningGateway gateway, String victim, long begin, AtomicLong killedAt, AtomicLong restartedAt, AtomicLong ejectedAt,
                              AtomicLong inServiceAt, AtomicLong fullWeightAt, List<String> timeline)
    {
        Map<String, Boolean> out = new HashMap<>();
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

    /** {@code tp0: node_failure 3, refused 40; ...}: every attempt that did not end ok, by node and outcome. */
    private static String outcomes(String metrics)
    {
        Map<String, Map<String, Long>> byNode = new TreeMap<>();
        Matcher m = REQUESTS.matcher(metrics);
        while (m.find())
        {
            Matcher node = Pattern.compile("node=\"([^\"]*)\"").matcher(m.group(1));
            Matcher outcome = Pattern.compile("outcome=\"([^\"]*)\"").matcher(m.group(1));
            if (node.find() && outcome.find() && !outcome.group(1).equals("ok"))
                byNode.computeIfAbsent(node.group(1), n -> new TreeMap<>()).merge(outcome.group(1), Math.round(Double.parseDouble(m.group(2))), Long::sum);
        }
        List<String> parts = new ArrayList<>();
        byNode.forEach((node, counts) -> parts.add(node + ": " + counts.toString().replaceAll("[{}]", "").replace('=', ' ')));
        return parts.isEmpty() ? "none" : String.join("; ", parts);
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

    private static String section(int workflows, double[] load, long totalSeconds, List<Result> results)
    {
        StringBuilder s = new StringBuilder(HEADING).append("\n\n")
            .append("Agent workflows of ").append(STEPS).append(" HTTPS steps each (idempotent GETs of `/echo`), ")
            .append(CONCURRENCY).append(" at a time, at least ").append(workflows).append(" per setup, new ones started until ")
            .append(MIN_RUN.toSeconds()).append(" s have passed and none after ").append(MAX_RUN.toSeconds()).append(" s, ")
            .append("through the gateway's base-URL mode and a pool of real Debian nodes, started fresh for each setup: ")
            .append("tinyproxy (`io.sandgate.testing.Tinyproxy`, named `tp<i>`) and squid (`io.sandgate.testing.Squid`, named `sq<i>`: the package's own `/etc/squid/squid.conf` with only its port, a loopback ACL, the CONNECT ports and where its logs and pid file go changed). ")
            .append("Setups: one tinyproxy node (the baseline), three tinyproxy nodes, three squid nodes, and a mixed pool of tinyproxy, squid and tinyproxy. ")
            .append("The route has no `retry` and no `egress.health.*` key is set: what a new user gets (one retry on another node, passive ejection after 3 failures, TCP probes every 3 s). ")
            .append("Faults, on the same schedule for every setup: the pool's first node is killed with SIGKILL ").append(KILL_AT.toSeconds())
            .append(" s into the run (squid runs with `-N`, one process without a master that would start a new one; it and its pinger are killed) and started again on its port with its configuration ")
            .append(DEAD_FOR.toSeconds()).append(" s later, after removing the pid file the crash left, which squid would take for a running instance; ")
            .append("steps 5, 10 and 15 of every workflow go to a flapping target, a second `TargetServer` behind a loopback port that refuses connections (and cuts the open ones) for ")
            .append(FLAP_DOWN.toSeconds()).append(" s out of every ").append(FLAP_UP.plus(FLAP_DOWN).toSeconds()).append(" s.\n\n")
            .append("Agents retry as the official OpenAI and Anthropic Python SDKs do when nothing is set (both clients come from one generator: ")
            .append("`DEFAULT_MAX_RETRIES = 2`, `INITIAL_RETRY_DELAY = 0.5`, `MAX_RETRY_DELAY = 8.0` in their `_constants.py`; their `_base_client.py` retries connection errors and timeouts, 408, 409, 429 and every status from 500 up, ")
            .append("and sleeps min(0.5 s × 2^n, 8 s) × (1 − 0.25 × random) before retry n, so 0.375 to 0.5 s and then 0.75 to 1 s, unless a Retry-After of at most 60 s says otherwise; `io.sandgate.bench.SdkRetries`). ")
            .append("A step is then up to three requests, and its latency runs from the first request to the end of the last, back-off included. ")
            .append("\"Task success\" counts the workflows all of whose steps succeeded, those retries included: what the agent sees (goal: 99.9 %). ")
            .append("The first-try columns count each step's first request alone, as an agent without retries would see it: a failed first try to the flapping target while it was down is the target's failure, every other failed first try is counted against the gateway and its nodes, ")
            .append("and \"not lost by the gateway\" counts the workflows whose failed first tries, if any, were all the target's. ")
            .append("Eject and recovery times come from polling `GET /admin/egress/pools` every 20 ms: kill to `ejected: true`, restart to `ejected: false` (and to the configured weight again, after the recovery ramp); ")
            .append("attempts to the dead node are the growth of `sandgate_egress_requests_total{node=...}` for the killed node between kill and restart; retries / attempts are the gateway's own retries on another node.\n")
            .append(String.format(Locale.ROOT, "Machine: %d cores, %s %s, Java %s, tinyproxy 1.11.1, squid 5.7, load average %.1f at start and %.1f at the end.%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("os.name"), System.getProperty("os.arch"), System.getProperty("java.version"), load[0], load[1]))
            .append("Command: `mvn -q test-compile` then `java -cp \"$CP\" io.sandgate.bench.EgressSoakBenchmark` (CP as in bench/README.md, \"Running single parts\"; needs `tinyproxy` and `squid`); ")
            .append("the four setups took ").append(totalSeconds).append(" s, each node's recovery watched to its end.\n\n")
            .append("What the agent sees, with its SDK's retries:\n\n")
            .append("| setup | task success | steps retried by the agent | failed steps after retries: gateway or node | failed steps after retries: target down | step p50 ms | step p99 ms | run s |\n")
            .append("|---|---|---|---|---|---|---|---|\n");
        for (Result r : results)
        {
            Tally t = r.tally();
            long[] steps = t.stepTimes.sorted();
            s.append(String.format(Locale.ROOT, "| %s | %s | %d of %d (%.1f %%), %d retries | %d | %d | %.0f | %.0f | %d |%n",
                r.setup(), share(t.succeeded.get(), t.workflows.get()), t.retriedSteps.get(), t.steps.get(), 100.0 * t.retriedSteps.get() / Math.max(1, t.steps.get()),
                t.agentRetries.get(), t.afterRetries.gatewayCount(), t.afterRetries.target.get(), Samples.millis(steps, 0.5), Samples.millis(steps, 0.99), r.seconds()));
        }
        s.append("\nFirst tries, and the pool under the faults:\n\n")
            .append("| setup | first-try task success | not lost by the gateway | failed first tries: gateway or node | failed first tries: target down | killed node | kill -> ejected | restart -> in service | restart -> full weight | attempts to the dead node | retries / attempts | ejections per node |\n")
            .append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Result r : results)
        {
            Tally t = r.tally();
            s.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %d | `%s` | %s | %s | %s | %d | %.1f %% | %s |%n",
                r.setup(), share(t.firstTrySucceeded.get(), t.workflows.get()), share(t.notLostByGateway.get(), t.workflows.get()),
                t.firstTries.gatewayCount(), t.firstTries.target.get(), r.victim(), millis(r.ejectMillis()), millis(r.recoverMillis()), millis(r.fullWeightMillis()),
                r.deadNodeAttempts(), r.attempts() == 0 ? 0 : 100 * r.retries() / r.attempts(), r.ejections()));
        }
        s.append("\nAttempts that did not end `ok`, by node and outcome (`sandgate_egress_requests_total`; `node_failure` is what counts towards ejecting a node):\n\n");
        for (Result r : results)
            s.append("- ").append(r.setup()).append(": ").append(r.outcomes()).append('\n');
        s.append("\nFailed first tries counted against the gateway or a node, by what the agent saw:\n\n");
        for (Result r : results)
            s.append("- ").append(r.setup()).append(": ").append(r.tally().firstTries).append('\n');
        s.append("\nSteps that still failed after the agent's retries, other than the target's, by what the agent saw last:\n\n");
        for (Result r : results)
            s.append("- ").append(r.setup()).append(": ").append(r.tally().afterRetries).append('\n');
        s.append(String.format(Locale.ROOT, "%nThe first node's kill and restart, and every ejection and return as the admin API showed them (the target went down at %d s and every %d s after, for %d s; the kill was due at %d s and the restart at %d s):%n%n",
            FLAP_UP.toSeconds(), FLAP_UP.plus(FLAP_DOWN).toSeconds(), FLAP_DOWN.toSeconds(), KILL_AT.toSeconds(), KILL_AT.plus(DEAD_FOR).toSeconds()));
        for (Result r : results)
            s.append("- ").append(r.setup()).append(": ").append(r.timeline().isEmpty() ? "none" : r.timeline()).append('\n');
        return s.toString();
    }

    /** {@code 99.90 % (999/1000)}: two decimals, as the goal is 99.9 %. */
    private static String share(int part, int whole)
    {
        return String.format(Locale.ROOT, "%.2f %% (%d/%d)", 100.0 * part / Math.max(1, whole), part, whole);
    }

    private static String millis(long ms)
    {
        return ms < 0 ? "not seen" : ms + " ms";
    }
}
