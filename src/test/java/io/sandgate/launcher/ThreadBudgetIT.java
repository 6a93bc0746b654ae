package io.sandgate.launcher;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.config.ConfigException;
import io.sandgate.testing.GatewayConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The embedded runner's threads: its pool holds its selectors, so the runner starts on a machine
 * with many cores and every listener, and refuses, clearly and without keeping a port, a pool its
 * selectors would leave too little of to run requests; idle, its own clients keep few threads.
 */
class ThreadBudgetIT
{
    private static final Pattern DEFAULT_POOL_THREAD = Pattern.compile(".*HttpClient@[0-9a-f]+-[0-9]+");
    private static final Pattern LISTENING = Pattern.compile("Sandgate listening on http://127\\.0\\.0\\.1:(\\d+)/");

    /**
     * A pool of 12: the selectors, acceptors and reserved threads take 7 on 2 cores (more on more),
     * which left 5 threads for every servlet request; with the internal and proxy listeners, 1.
     */
    @Test
    void aPoolTheSelectorsWouldMostlyTake_isRefusedNamingTheSetting_andFreesThePort() throws Exception
    {
        int port = freePort();
        GatewayConfig config = new GatewayConfig().set("server.port", String.valueOf(port)).set("server.max-threads", "12");

        ConfigException refused = assertThrows(ConfigException.class, () -> EmbeddedServer.start(config.build()).close());

        assertTrue(refused.getMessage().contains("server.max-threads = 12 is too few"), refused.getMessage());
        assertTrue(refused.getMessage().matches("(?s).*set it to at least \\d+.*"), refused.getMessage());
        try (ServerSocket again = new ServerSocket(port))
        {
            assertEquals(port, again.getLocalPort(), "the refused runner let its port go");
        }
    }

    /**
     * The runner as a JVM that sees 64 cores, with the public, internal and forward-proxy listeners
     * and the default pool of 200: one selector per core on each used to lease more threads than
     * that, and the runner did not start ("Insufficient configured threads").
     */
    @Test
    void runnerOnSixtyFourCores_withEveryListener_startsWithTheDefaultPool(@TempDir Path directory) throws Exception
    {
        assertRunnerStarts(directory, 64, Map.of());
    }

    /** And with the pool of 40 that the tests of hung peers give it, on any machine they run on. */
    @Test
    void runnerOnSixtyFourCores_withEveryListener_startsWithAPoolOfForty(@TempDir Path directory) throws Exception
    {
        assertRunnerStarts(directory, 64, Map.of("SANDGATE_SERVER_MAX_THREADS", "40"));
    }

    /**
     * The clients the gateway starts for itself (the WebSocket tunnels' and the MCP face's) have
     * pools of their own, which kept Jetty's eight threads each while idle, on every replica, MCP
     * servers configured or not: a third of an idle runner's threads. They keep their selector's
     * thread and one more.
     *
     * <p>Each egress node has three clients (traffic, probes, one-shot requests), and each client was
     * on a pool of Jetty's default that kept eight threads while idle: four nodes, 108 threads doing
     * nothing. Each keeps its selector's thread and one more. (One runner for both: each costs a JVM
     * start and a thread dump.)</p>
     */
    @Test
    void idleRunner_itsOwnClientsAndEachEgressNodesClients_keepTwoThreadsEach(@TempDir Path directory) throws Exception
    {
        String pools = """
            egress:
              routes:
                - match: {domains: ["*"]}
                  upstream: near
              pools:
                near:
                  nodes:
                    - {id: n1, address: 127.0.0.1:9, weight: 100}
                    - {id: n2, address: 127.0.0.1:10, weight: 100}
                    - {id: n3, address: 127.0.0.1:11, weight: 100}
                far:
                  nodes:
                    - {id: f1, address: 127.0.0.1:12, weight: 100}
            """;
        assertRunnerStarts(directory, Runtime.getRuntime().availableProcessors(), Map.of(), pools, runner ->
        {
            List<String> threads = threadNames(runner, directory);
            assertTrue(count(threads, "sandgate-ws-") <= 2, () -> "the tunnels' client: " + threads);
            assertTrue(count(threads, "sandgate-mcp-client-") <= 2, () -> "the MCP face's client: " + threads);
            long egress = count(threads, "sandgate-egress-");
            assertTrue(egress >= 12, () -> "a selector for each of the 12 clients: " + threads);
            assertTrue(egress <= 2 * 12, () -> "two threads for each of the 12 clients: " + threads);
            assertEquals(0, onJettysDefaultPool(threads), () -> "a client on a pool of Jetty's default: " + threads);
        });
    }

    private static void assertRunnerStarts(Path directory, int cores, Map<String, String> settings) throws Exception
    {
        assertRunnerStarts(directory, cores, settings, "{}\n", runner -> { });
    }

    /** What to check of a started runner, before it is stopped. */
    private interface WhileRunning
    {
        void check(Process runner) throws Exception;
    }

    /**
     * The names of a running JVM's threads, from a thread dump ({@code jcmd Thread.print}), written
     * to a file so that a jcmd that never ends fails the test after 30 s instead of hanging it.
     */
    private static List<String> threadNames(Process runner, Path directory) throws Exception
    {
        Path out = directory.resolve("threads.txt");
        Process dump = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), String.valueOf(runner.pid()),
            "Thread.print").redirectErrorStream(true).redirectOutput(out.toFile()).start();
        boolean ended = dump.waitFor(30, TimeUnit.SECONDS);
        if (!ended)
            dump.destroyForcibly();
        String text = Files.readString(out);
        assertTrue(ended && dump.exitValue() == 0, () -> "jcmd Thread.print " + (ended ? "failed" : "did not end in 30 s") + ":\n" + text);
        List<String> names = new ArrayList<>();
        Matcher matcher = Pattern.compile("(?m)^\"([^\"]+)\"").matcher(text);
        while (matcher.find())
            names.add(matcher.group(1));
        assertTrue(names.size() > 10, text);
        return names;
    }

    /** The pool threads named {@code prefix...}; not the client's timeout scheduler, which bears its name too and is not in its pool. */
    private static long count(List<String> names, String prefix)
    {
        return names.stream().filter(name -> name.startsWith(prefix) && !name.contains("-scheduler-")).count();
    }

    /**
     * Threads of a pool Jetty made for a client that was given none: named after the client, such
     * as {@code HttpClient@1b2c3d-41}, and kept eight at a time while idle. Its scheduler's thread
     * ({@code HttpClient@1b2c3d-scheduler-1}) is the client's own either way.
     */
    private static long onJettysDefaultPool(List<String> names)
    {
        return names.stream().filter(name -> DEFAULT_POOL_THREAD.matcher(name).matches()).count();
    }

    private static void assertRunnerStarts(Path directory, int cores, Map<String, String> settings, String yaml, WhileRunning whileRunning) throws Exception
    {
        Path file = Files.writeString(directory.resolve("sandgate.yaml"), yaml);
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:ActiveProcessorCount=" + cores, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", classPath, Main.class.getName())
            .redirectErrorStream(true);
        Map<String, String> environment = builder.environment();
        environment.keySet().removeIf(name -> name.startsWith("SANDGATE_"));
        environment.putAll(Map.of("SANDGATE_CONFIG", file.toString(), "SANDGATE_SERVER_HOST", "127.0.0.1", "SANDGATE_SERVER_PORT", "0",
            "SANDGATE_SERVER_INTERNAL_PORT", "0", "SANDGATE_EGRESS_FORWARD_PROXY_PORT", "0",
            // SIGTERM ends each runner: with no balancer to wait for, at once rather than after the drain's grace.
            "SANDGATE_SERVER_DRAIN_GRACE", "0s"));
        environment.putAll(settings);
        Process runner = builder.start();
        try
        {
            List<String> output = new ArrayList<>();
            CompletableFuture<Integer> port = CompletableFuture.supplyAsync(() -> listeningPort(runner, output));
            int listening = port.get(60, TimeUnit.SECONDS);
            assertTrue(listening > 0, () -> "the runner did not start:\n" + String.join("\n", output));

            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> health = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + listening + "/healthz"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode(), health.body());
            whileRunning.check(runner);
        }
        finally
        {
            runner.destroy();
            if (!runner.waitFor(20, TimeUnit.SECONDS))
                runner.destroyForcibly().waitFor();
        }
    }

    /** The public port the runner says it listens on; -1 if it ends first. Keeps every line for the failure message. */
    private static int listeningPort(Process runner, List<String> output)
    {
        // Not closed here: once the port is known, a thread keeps reading, so that the runner never
        // blocks on a full pipe; the stream closes with the process.
        BufferedReader lines = new BufferedReader(new InputStreamReader(runner.getInputStream(), StandardCharsets.UTF_8));
        try
        {
            for (String line = lines.readLine(); line != null; line = lines.readLine())
            {
                synchronized (output)
                {
                    output.add(line);
                }
                Matcher matcher = LISTENING.matcher(line);
                if (matcher.find())
                {
                    Thread drain = new Thread(() -> lines.lines().forEach(rest -> { }), "runner-output");
                    drain.setDaemon(true);
                    drain.start();
                    return Integer.parseInt(matcher.group(1));
                }
            }
            return -1;
        }
        catch (IOException x)
        {
            return -1;
        }
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket probe = new ServerSocket(0))
        {
            return probe.getLocalPort();
        }
    }
}
