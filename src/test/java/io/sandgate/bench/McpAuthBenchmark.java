package io.sandgate.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.nimbusds.jose.JWSAlgorithm;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.McpConfig;
import io.sandgate.mcp.identity.Authenticator;
import io.sandgate.testing.AuthorizationServerDouble;
import io.sandgate.testing.ReferenceMcpServer;
import io.sandgate.testing.RunningGateway;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;

/**
 * What checking the caller's bearer token ({@code mcp.auth}, JWTs against a cached JWK set) adds to
 * an MCP call through the gateway: 2026-07-28 {@code tools/call} requests of the reference server's
 * {@code test_simple_text}, as {@link McpStatelessBenchmark} sends them, at a fixed total rate
 * ({@link OpenLoopLoad}, open loop), request {@code i} going to target {@code i % 6}: the server
 * directly, a gateway without auth (no token, and an RS256 token it ignores), and a gateway with
 * auth (RS256, ES256 and EdDSA tokens). Interleaved request by request, every target shares every
 * second of the run and so the machine's noise; the added latency is read as "auth on" minus
 * "auth off, the same token sent", which leaves only the check. The key set is fetched when the
 * gateway starts and stays cached; the run counts the fetches made while it measured.
 *
 * <p>After the load, the check alone, on this thread: {@link Authenticator#authenticate} as the
 * gateway calls it per request, the same tokens, in batches; the median batch's CPU and wall-clock
 * time per call.
 *
 * <p>Run: {@code java -cp target/test-classes:target/classes:$(cat CLASSPATH_FILE) io.sandgate.bench.McpAuthBenchmark
 * [RATE SECONDS WARMUP_SECONDS OUT.md]}, the class path from {@code mvn -o -q dependency:build-classpath
 * -Dmdep.outputFile=CLASSPATH_FILE -Dmdep.includeScope=test}.
 */
public final class McpAuthBenchmark
{
    private static final String HEADING = "## MCP token validation: latency added per call";

    private static final String SERVER_NAME = "reference";
    /**
     * The gateway's resource URL: a name the tokens' audience is made from, which this run needs
     * no client to reach (nothing here discovers the metadata).
     */
    private static final String RESOURCE_URL = "http://gateway.bench";
    private static final int CONNECTIONS = 8;
    /** Unrecorded seconds at the start of the measured run, after the warm-up run: connections idle since are opened again. */
    private static final int SETTLE_SECONDS = 2;
    private static final int CHECK_WARMUP_CALLS = 2_000;
    private static final int CHECK_BATCHES = 7;
    private static final int CHECK_BATCH_CALLS = 1_000;
    /** Calls per batch of the first check of each token: each needs a token of its own, signed beforehand. */
    private static final int FIRST_CHECK_BATCH_CALLS = 200;

    /** One of the interleaved targets: where its requests go and the token they carry, if any. */
    private record Target(String name, URI endpoint, String token)
    {
    }

    private McpAuthBenchmark()
    {
    }

    public static void main(String[] args) throws Exception
    {
        int rate = args.length > 0 ? Integer.parseInt(args[0]) : 150;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 75;
        int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        Path out = Path.of(args.length > 3 ? args[3] : "docs/BENCHMARKS.md");
        double loadAtStart = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        HttpClient client = OpenLoopLoad.client(CONNECTIONS);
        // The reference server (Node) closes connections idle for 5 s; close ours first, never mid-request.
        client.setIdleTimeout(4000);
        String section;
        try (AuthorizationServerDouble as = AuthorizationServerDouble.start().tokenLifetime(Duration.ofHours(2));
            ReferenceMcpServer reference = ReferenceMcpServer.start();
            RunningGateway off = McpBenchGateway.start(SERVER_NAME, reference.url(), null);
            RunningGateway on = McpBenchGateway.start(SERVER_NAME, reference.url(), null, config -> config.set("mcp.auth",
                Map.of("issuers", List.of(as.issuer()), "jwks-url", as.jwksUri(), "resource-url", RESOURCE_URL))))
        {
            String audience = RESOURCE_URL + "/mcp/" + SERVER_NAME + "/mcp";
            String rs256 = as.token().audience(audience).sign();
            String es256 = as.token().audience(audience).algorithm(JWSAlgorithm.ES256).sign();
            String eddsa = as.token().audience(audience).algorithm(JWSAlgorithm.EdDSA).sign();
            List<Target> targets = List.of(
                new Target("direct (reference server), no token", URI.create(reference.url()), null),
                new Target("gateway, auth off, no token", endpoint(off), null),
                new Target("gateway, auth off, RS256 token sent (ignored)", endpoint(off), rs256),
                new Target("gateway, auth on, RS256 token", endpoint(on), rs256),
                new Target("gateway, auth on, ES256 token", endpoint(on), es256),
                new Target("gateway, auth on, EdDSA (Ed25519) token", endpoint(on), eddsa));
            // One call each first: a refusal (a token the gateway does not take) ends the run before it is measured.
            for (Target target : targets)
                check(call(client, target, 0).send().getContentAsString(), target);
            int jwksFetches = as.jwksFetches();
            // The warm-up is a run of its own, whose every answer is awaited: while the JIT is still
            // at work the gateways fall behind, and what queues then must not be counted as the
            // measured run's latency.
            OpenLoopLoad.measureInterleaved(client, rate, 0, warmup, targets.size(), i -> call(client, targets.get((int)(i % targets.size())), i),
                OpenLoopLoad.ANY_BODY);
            List<OpenLoopLoad.Outcome> outcomes = OpenLoopLoad.measureInterleaved(client, rate, seconds, SETTLE_SECONDS, targets.size(),
                i -> call(client, targets.get((int)(i % targets.size())), i), body -> body.contains("\"result\""));
            int fetchesDuringLoad = as.jwksFetches() - jwksFetches;
            McpConfig mcp = on.sandgate().config().mcp();
            Map<String, CheckCost> checkCosts = new HashMap<>();
            for (JWSAlgorithm algorithm : List.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256, JWSAlgorithm.EdDSA))
            {
                String token = algorithm.equals(JWSAlgorithm.RS256) ? rs256 : algorithm.equals(JWSAlgorithm.ES256) ? es256 : eddsa;
                List<String> fresh = new ArrayList<>();
                for (int i = 0; i < FIRST_CHECK_BATCH_CALLS * (CHECK_BATCHES + 1); i++)
                    fresh.add(as.token().audience(audience).algorithm(algorithm).subject("agent-" + i).sign());
                CheckCost again = checkCost(mcp, List.of(token), CHECK_WARMUP_CALLS, CHECK_BATCH_CALLS);
                CheckCost first = checkCost(mcp, fresh, FIRST_CHECK_BATCH_CALLS, FIRST_CHECK_BATCH_CALLS);
                checkCosts.put(algorithm.getName().equals("EdDSA") ? "EdDSA" : algorithm.getName(), new CheckCost(again.wallMicros(), again.cpuMicros(), first.cpuMicros()));
            }
            section = section(rate, seconds, warmup, loadAtStart, targets, outcomes, fetchesDuringLoad, checkCosts);
        }
        client.stop();
        BenchmarksDocument.writeSection(out, HEADING, section);
        System.out.println(section);
        // The gateways' and the client's threads are not daemons.
        System.exit(0);
    }

    private static URI endpoint(RunningGateway gateway)
    {
        return gateway.uri().resolve("/mcp/" + SERVER_NAME + "/mcp");
    }

    private static void check(String body, Target target)
    {
        if (!body.contains("\"result\""))
            throw new IllegalStateException(target.name() + " does not answer the call: " + body);
    }

    private static Request call(HttpClient client, Target target, long id)
    {
        Request request = McpStatelessBenchmark.call(client, target.endpoint(), id);
        if (target.token() != null)
            request.headers(headers -> headers.put("Authorization", "Bearer " + target.token()));
        return request;
    }

    /**
     * The check alone, per call, in microseconds: wall-clock and this thread's CPU time for a token
     * checked already (taken on its digest), and CPU time for a token's first check (its signature).
     */
    private record CheckCost(double wallMicros, double cpuMicros, double firstCpuMicros)
    {
    }

    /**
     * The check alone: {@link Authenticator#authenticate} of one token, as the gateway calls it per
     * request (signature, claims, scopes, principal), its key set cached; the median of
     * {@value #CHECK_BATCHES} batches after a warm-up. CPU time says what the check costs on a
     * machine whose other processes lengthen the wall-clock time.
     */
    private static CheckCost checkCost(McpConfig mcp, List<String> tokens, int warmupCalls, int batchCalls) throws Exception
    {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        McpConfig.Server server = mcp.server(SERVER_NAME);
        int next = 0;
        // The key set is fetched on this thread before the first check, not in a batch.
        try (Authenticator authenticator = new Authenticator(mcp, name -> null, Clock.systemUTC(), new SimpleMeterRegistry(), Runnable::run))
        {
            for (int i = 0; i < warmupCalls; i++)
                authenticator.authenticate(server, "mcp", "Bearer " + tokens.get(next++ % tokens.size())).orElseThrow();
            double[] wall = new double[CHECK_BATCHES];
            double[] cpu = new double[CHECK_BATCHES];
            for (int b = 0; b < CHECK_BATCHES; b++)
            {
                long cpuStart = threads.getCurrentThreadCpuTime();
                long start = System.nanoTime();
                for (int i = 0; i < batchCalls; i++)
                    authenticator.authenticate(server, "mcp", "Bearer " + tokens.get(next++ % tokens.size())).orElseThrow();
                wall[b] = (System.nanoTime() - start) / 1e3 / batchCalls;
                cpu[b] = (threads.getCurrentThreadCpuTime() - cpuStart) / 1e3 / batchCalls;
            }
            Arrays.sort(wall);
            Arrays.sort(cpu);
            return new CheckCost(wall[CHECK_BATCHES / 2], cpu[CHECK_BATCHES / 2], cpu[CHECK_BATCHES / 2]);
        }
    }

    private static String section(int rate, int seconds, int warmup, double loadAtStart, List<Target> targets, List<OpenLoopLoad.Outcome> outcomes,
                                  int fetchesDuringLoad, Map<String, CheckCost> checkCosts)
    {
        long[] direct = outcomes.get(0).sorted();
        long[] offNoToken = outcomes.get(1).sorted();
        long[] offWithToken = outcomes.get(2).sorted();
        StringBuilder s = new StringBuilder(HEADING).append("\n\n");
        s.append("POST `tools/call` (`test_simple_text`) as a 2026-07-28 request, as in the stateless section above, ").append(rate)
            .append(" requests/s in all for ").append(seconds).append(" s, after a warm-up run of ").append(warmup)
            .append(" s whose answers were all awaited and ").append(SETTLE_SECONDS).append(" s unrecorded, open loop (`OpenLoopLoad`), ")
            .append("request i going to target i mod ").append(targets.size()).append(" (").append(rate / targets.size())
            .append(" requests/s each), so that every target shares every second of the run. ")
            .append("Two gateways in this JVM in front of the same reference server: one without `mcp.auth`, one with it ")
            .append("(JWTs of the authorization server double, `src/test/java/io/sandgate/testing/AuthorizationServerDouble.java`: RSA 2048, P-256, Ed25519 keys; ")
            .append("audience the server's endpoint; each target sends the same token on every call). The key set is fetched when the gateway starts; ")
            .append(fetchesDuringLoad).append(" fetches while the load ran.\n");
        s.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, ").append(System.getProperty("os.name")).append(' ')
            .append(System.getProperty("os.arch")).append(", Java ").append(System.getProperty("java.version"))
            .append(String.format(Locale.ROOT, ", load average %.1f at start (the machine is shared: other builds ran).%n", loadAtStart));
        s.append("Command: `mvn -o -q dependency:build-classpath -Dmdep.outputFile=cp.txt -Dmdep.includeScope=test`, then ")
            .append("`java -cp target/test-classes:target/classes:$(cat cp.txt) io.sandgate.bench.McpAuthBenchmark ").append(rate).append(' ').append(seconds)
            .append(' ').append(warmup).append("`\n\n");
        s.append("| target | samples | errors | p50 ms | p99 ms | max ms | p50 vs direct | p99 vs direct |\n|---|---|---|---|---|---|---|---|\n");
        for (int t = 0; t < targets.size(); t++)
        {
            long[] sorted = outcomes.get(t).sorted();
            s.append(String.format(Locale.ROOT, "| %s | %d | %d | %.2f | %.2f | %.2f | %.2fx | %.2fx |%n", targets.get(t).name(), sorted.length,
                outcomes.get(t).errors(), Samples.millis(sorted, 0.50), Samples.millis(sorted, 0.99), Samples.millis(sorted, 1.0),
                Samples.millis(sorted, 0.50) / Samples.millis(direct, 0.50), Samples.millis(sorted, 0.99) / Samples.millis(direct, 0.99)));
        }
        s.append("\nAdded by the check: auth on minus auth off with the same token sent (the header's own cost is in both), ")
            .append("and minus auth off without a token (what a client that now sends one sees); the check alone is `Authenticator.authenticate` ")
            .append("called in a loop on one thread (").append(CHECK_BATCHES).append(" batches of ").append(CHECK_BATCH_CALLS)
            .append(" after ").append(CHECK_WARMUP_CALLS).append(", the median batch): a token checked already, taken on its digest for a minute, ")
            .append("and a token's first check, its signature (").append(CHECK_BATCHES).append(" batches of ").append(FIRST_CHECK_BATCH_CALLS)
            .append(" distinct tokens).\n\n");
        s.append("| token | added p50 ms | added p99 ms | added p50 ms vs no token | added p99 ms vs no token | the check alone, µs CPU per call | the check alone, µs wall per call | a token's first check, µs CPU |\n")
            .append("|---|---|---|---|---|---|---|---|\n");
        String[] algorithms = {"RS256", "ES256", "EdDSA"};
        for (int a = 0; a < algorithms.length; a++)
        {
            long[] sorted = outcomes.get(3 + a).sorted();
            s.append(String.format(Locale.ROOT, "| %s | %+.2f | %+.2f | %+.2f | %+.2f | %.0f | %.0f | %.0f |%n", algorithms[a],
                Samples.millis(sorted, 0.50) - Samples.millis(offWithToken, 0.50), Samples.millis(sorted, 0.99) - Samples.millis(offWithToken, 0.99),
                Samples.millis(sorted, 0.50) - Samples.millis(offNoToken, 0.50), Samples.millis(sorted, 0.99) - Samples.millis(offNoToken, 0.99),
                checkCosts.get(algorithms[a]).cpuMicros(), checkCosts.get(algorithms[a]).wallMicros(), checkCosts.get(algorithms[a]).firstCpuMicros()));
        }
        s.append(String.format(Locale.ROOT, "%nHow to read it: the two auth-off rows differ only by a header the gateway ignores; here by %.2f ms at p50 "
                + "and %.2f ms at p99, which is this run's noise: an added figure within it is no measured cost. The check's own cost is the CPU column: "
                + "time on the request's thread, the key set in memory; the end-to-end rows add to it the larger header and what a loaded machine "
                + "does to a request that takes longer. A token checked already costs a digest and a lookup, whatever its algorithm; its first "
                + "check each minute pays the signature, which costs its verifier unlike its signer: an RSA check is cheap (small public "
                + "exponent), an ECDSA P-256 one is the dearest of the three on Java 17.%n",
            Math.abs(Samples.millis(offWithToken, 0.50) - Samples.millis(offNoToken, 0.50)),
            Math.abs(Samples.millis(offWithToken, 0.99) - Samples.millis(offNoToken, 0.99))));
        List<String> firstErrors = new ArrayList<>();
        for (int t = 0; t < targets.size(); t++)
        {
            if (outcomes.get(t).firstError() != null)
                firstErrors.add(targets.get(t).name() + ": " + outcomes.get(t).firstError());
        }
        if (!firstErrors.isEmpty())
            s.append("\nFirst errors: ").append(String.join("; ", firstErrors)).append('\n');
        return s.toString();
    }
}
