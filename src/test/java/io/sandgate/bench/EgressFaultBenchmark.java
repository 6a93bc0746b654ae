package io.sandgate.bench;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.TargetServer;

/**
 * Agent workflows through egress nodes while faults are injected, in the spirit of the reference
 * table (5 % loss, 80 ms jitter): N workflows of 15 steps each, a step being an HTTPS call through
 * the gateway; a workflow succeeds only if all 15 steps do. Faults: every node adds 0 to 160 ms of
 * delay (80 ms mean jitter); a chaos loop drops a node's connections (refuse) for a second with a
 * 5 % chance per node every half second; one node is killed hard for 8 s mid-run. The same
 * schedule runs against a single-node pool, the baseline, in the same process.
 *
 * <p>Run: {@code mvn -q test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.sandgate.bench.EgressFaultBenchmark [-Dexec.args="WORKFLOWS OUT.md"]}</p>
 */
public final class EgressFaultBenchmark
{
    private static final int STEPS = 15;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private EgressFaultBenchmark()
    {
    }

    record Result(String name, int workflows, int succeeded, List<Long> latencies, long recoveryMillis, double retryShare, int requests)
    {
    }

    public static void main(String[] args) throws Exception
    {
        int workflows = args.length > 0 ? Integer.parseInt(args[0]) : 60;
        Path out = Path.of(args.length > 1 ? args[1] : "docs/BENCHMARKS.md");
        List<Result> results = new ArrayList<>();
        try (TargetServer target = TargetServer.start())
        {
            results.add(run("single egress node", 1, workflows, target));
            results.add(run("5 nodes, health-checked (Sandgate)", 5, workflows, target));
        }
        StringBuilder table = new StringBuilder("## Egress under faults\n\n")
            .append(workflows).append(" agent workflows of ").append(STEPS).append(" HTTPS steps each, 8 at a time, through the gateway's base-URL mode. ")
            .append("Faults on every node: 0-160 ms added delay (80 ms mean jitter) when it opens a connection or tunnel (tunnels are pooled, so most steps do not pay it); each node refuses connections for 1 s with a 5 % chance every 0.5 s; ")
            .append("one node is killed for 8 s mid-run. Retries: 2 per step (idempotent GETs), budget 20 %.\n")
            .append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, Java ").append(System.getProperty("java.version")).append(".\n")
            .append("Command: `mvn -q test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.sandgate.bench.EgressFaultBenchmark`\n\n")
            .append("| setup | task success | step p50 ms | step p99 ms | last failed step after the kill | retries / requests |\n|---|---|---|---|---|---|\n");
        for (Result r : results)
        {
            List<Long> sorted = new ArrayList<>(r.latencies());
            Collections.sort(sorted);
            table.append("| ").append(r.name()).append(" | ")
                .append(String.format("%.1f %% (%d/%d)", 100.0 * r.succeeded() / r.workflows(), r.succeeded(), r.workflows())).append(" | ")
                .append(ms(sorted, 0.5)).append(" | ").append(ms(sorted, 0.99)).append(" | ")
                .append(r.recoveryMillis() <= 0 ? "none failed" : r.recoveryMillis() + " ms after").append(" | ")
                .append(String.format("%.1f %%", 100 * r.retryShare())).append(" |\n");
        }
        String existing = Files.exists(out) ? Files.readString(out) : "# Benchmarks\n\n";
        int start = existing.indexOf("## Egress under faults");
        if (start >= 0)
        {
            int end = existing.indexOf("\n## ", start + 3);
            existing = existing.substring(0, start) + (end < 0 ? "" : existing.substring(end + 1));
        }
        Files.writeString(out, existing.stripTrailing() + "\n\n" + table);
        System.out.println(table);
        System.exit(0);
    }

    private static Result run(String name, int nodeCount, int workflows, TargetServer target) throws Exception
    {
        List<ForwardProxy> nodes = new ArrayList<>();
        for (int i = 0; i < nodeCount; i++)
            nodes.add(ForwardProxy.start("n" + i).delay(Duration.ZERO, Duration.ofMillis(160)));
        List<Map<String, Object>> nodeConfig = new ArrayList<>();
        for (ForwardProxy node : nodes)
            nodeConfig.add(Map.of("id", node.name(), "address", node.address(), "region", "eu", "weight", 100));
        ScheduledExecutorService chaos = Executors.newScheduledThreadPool(1);
        Random random = new Random(42);
        AtomicLong killedAt = new AtomicLong();
        AtomicLong recoveredAt = new AtomicLong();
        try (RunningGateway gateway = RunningGateway.start(config -> config
            .set("log.access", "false")
            .trustStoreOf(target)
            // The target runs on loopback, which the SSRF guard refuses unless allowed.
            .set("egress.ssrf.allow", "127.0.0.0/8")
            // and on a port other than 443, which a tunnel may reach only when listed.
            .set("egress.connect-ports", "443," + target.httpsPort())
            .set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "pool", "retry", 2, "timeout", "10s")))
            .set("egress.pools", Map.of("pool", Map.of("region", "eu", "nodes", nodeConfig)))))
        {
            ForwardProxy victim = nodes.get(0);
            chaos.scheduleAtFixedRate(() ->
            {
                for (ForwardProxy node : nodes)
                {
                    if (node != victim || killedAt.get() == 0 || recoveredAt.get() != 0)
                    {
                        if (random.nextDouble() < 0.05)
                        {
                            node.refuse();
                            chaos.schedule(() -> node.delay(Duration.ZERO, Duration.ofMillis(160)), 1, TimeUnit.SECONDS);
                        }
                    }
                }
            }, 500, 500, TimeUnit.MILLISECONDS);
            String url = gateway.uri() + "/egress/127.0.0.1:" + target.httpsPort() + "/echo";
            List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
            List<long[]> failures = Collections.synchronizedList(new ArrayList<>());
            ExecutorService agents = Executors.newFixedThreadPool(8);
            List<Future<Boolean>> runs = new ArrayList<>();
            long begin = System.nanoTime();
            for (int w = 0; w < workflows; w++)
            {
                int workflow = w;
                runs.add(agents.submit(() ->
                {
                    boolean ok = true;
                    for (int step = 0; step < STEPS; step++)
                    {
                        if (workflow == workflows / 3 && step == 0 && killedAt.compareAndSet(0, System.nanoTime()))
                        {
                            victim.refuse();
                            chaos.schedule(() ->
                            {
                                victim.delay(Duration.ZERO, Duration.ofMillis(160));
                                recoveredAt.set(System.nanoTime());
                            }, 8, TimeUnit.SECONDS);
                        }
                        long start = System.nanoTime();
                        int status;
                        try
                        {
                            status = HTTP.send(HttpRequest.newBuilder(java.net.URI.create(url)).timeout(Duration.ofSeconds(15)).build(),
                                HttpResponse.BodyHandlers.discarding()).statusCode();
                        }
                        catch (Exception x)
                        {
                            status = 0;
                        }
                        long now = System.nanoTime();
                        latencies.add(now - start);
                        if (status != 200)
                        {
                            failures.add(new long[]{now});
                            ok = false;
                        }
                    }
                    return ok;
                }));
            }
            int succeeded = 0;
            for (Future<Boolean> run : runs)
                succeeded += run.get() ? 1 : 0;
            agents.shutdown();
            long kill = killedAt.get();
            long lastFailureAfterKill = -1;
            for (long[] failure : failures)
            {
                if (kill > 0 && failure[0] >= kill && failure[0] - kill < TimeUnit.SECONDS.toNanos(8))
                    lastFailureAfterKill = Math.max(lastFailureAfterKill, TimeUnit.NANOSECONDS.toMillis(failure[0] - kill));
            }
            String metrics = HTTP.send(HttpRequest.newBuilder(java.net.URI.create(gateway.uri() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            double retries = counter(metrics, "sandgate_egress_retries_total");
            int requests = workflows * STEPS;
            return new Result(name, workflows, succeeded, latencies, lastFailureAfterKill < 0 ? 0 : lastFailureAfterKill, retries / requests, requests);
        }
        finally
        {
            chaos.shutdownNow();
            for (ForwardProxy node : nodes)
                node.close();
        }
    }

    private static double counter(String metrics, String name)
    {
        Matcher m = Pattern.compile("(?m)^" + name + " ([0-9.E]+)").matcher(metrics);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    private static String ms(List<Long> sorted, double q)
    {
        if (sorted.isEmpty())
            return "n/a";
        int i = (int)Math.min(sorted.size() - 1, Math.max(0, Math.ceil(q * sorted.size()) - 1));
        return String.format("%.0f", sorted.get(i) / 1e6);
    }
}
