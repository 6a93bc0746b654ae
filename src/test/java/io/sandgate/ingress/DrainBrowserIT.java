package io.sandgate.ingress;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayProcess;
import io.sandgate.testing.Haproxy;
import io.sandgate.testing.LocalResources;
import io.sandgate.testing.ProcessFixture;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.VncSandbox;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A rolling update as a user sees it: real Chromium showing a desktop through two gateway replicas
 * behind Debian's HAProxy (round robin, {@code /readyz} checks), and the replica that carries the
 * desktop's WebSocket gets SIGTERM. The replicas are processes of their own ({@code Main}, Redis
 * store, one cookie secret), so the signal is a real one and the process really ends.
 *
 * <p>Two tabs show the same sandbox (Xvnc painted red behind websockify): Debian's unmodified
 * noVNC 1.3 app with {@code reconnect=true}, and noVNC 1.7 (the unmodified {@code @novnc/novnc}
 * package, which ships no app) in a page that follows the app's reconnect rule. Both reconnect
 * after 1 s ({@code reconnect_delay=1000}; the app's default is 5 s). The browser side is
 * {@code src/test/browser/drain-reconnect-check.mjs}, which records each socket's close code from
 * inside the page.</p>
 *
 * <p>Passes when every socket the drained replica held was closed with 1012, not before the grace
 * let HAProxy take the replica out, each such tab showed its desktop again within 10 s of its close,
 * and a concurrent HTTP load on the balancer saw no error from before the signal until the tabs were
 * back.</p>
 */
@ExtendWith(WorkDirExtension.class)
class DrainBrowserIT
{
    private static final Path BROWSER_DIR = MavenPaths.projectBase().resolve("src/test/browser");
    private static final Path SCREENSHOTS = MavenPaths.projectBase().resolve("target/screenshots");
    private static final String ID = "37579";
    private static final String RED = "ff0000";
    private static final String SECRET = "drain-browser-it-secret-0123456789";
    private static final Duration GRACE = Duration.ofSeconds(2);
    private static final Duration RESTORED_WITHIN = Duration.ofSeconds(10);
    private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(90);
    private static final Pattern SESSIONS = Pattern.compile("(?m)^sandgate_ingress_websocket_sessions(?:\\{[^}]*})? ([0-9.]+)");
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void sigtermToTheReplicaHoldingTheDesktop_theBrowserReconnectsThroughTheBalancer_andTheLoadSeesNoError(WorkDir workDir) throws Exception
    {
        NoVncBrowsers.requireTools();
        if (LocalResources.executable("haproxy", "/usr/sbin") == null)
            fail("DrainBrowserIT runs Debian's HAProxy: apt-get install haproxy (scripts/test.sh does this)");
        Path work = workDir.getEmptyPathDir();
        Path web = NoVncBrowsers.buildWebRoot(work.resolve("web"));
        Map<String, GatewayProcess> replicas = new LinkedHashMap<>();
        List<ProcessFixture> fixtures = new ArrayList<>();
        try
        {
            RedisServerProcess redis = RedisServerProcess.start();
            fixtures.add(redis);
            VncSandbox sandbox = VncSandbox.start(RED, web);
            fixtures.add(sandbox);
            try (RawRedis raw = RawRedis.connect(redis.port()))
            {
                raw.hset("vnc_sandboxes", ID, sandbox.hostPort());
            }
            Map<String, String> settings = replicaSettings(redis);
            CompletableFuture<GatewayProcess> startingB = CompletableFuture.supplyAsync(() -> GatewayProcess.start("b", settings));
            replicas.put("a", GatewayProcess.start("a", settings));
            replicas.put("b", startingB.join());
            fixtures.addAll(replicas.values());
            Haproxy balancer = Haproxy.roundRobin(Map.of("a", replicas.get("a").port(), "b", replicas.get("b").port()));
            fixtures.add(balancer);

            try (Browser browser = Browser.start(work,
                    balancer.baseUrl() + "/vnc/" + ID + "/vnc.html?autoconnect=true&reconnect=true&reconnect_delay=1000&path=vnc/websockify",
                    balancer.baseUrl() + "/vnc/" + ID + "/?reconnect=true&reconnect_delay=1000");
                 Load load = Load.start(balancer.baseUrl(), List.of("/vnc/" + ID + "/vnc.html", "/healthz")))
            {
                browser.awaitConnected();
                load.awaitServedBy(0, "a", "b");
                // The replica holding the desktops' sockets is drained. Round robin may have put the two
                // tabs' sockets on different replicas: then the first round moves one of them, a new
                // replica takes the drained one's place, and the second round drains the other, as a
                // rolling update goes on, so that each noVNC has come back at least once.
                List<Round> rounds = new ArrayList<>();
                String drained = holder(replicas);
                rounds.add(Round.drain(drained, replicas.get(drained), sessions(replicas.get(drained))));
                if (rounds.get(0).held() < 2)
                {
                    GatewayProcess replacement = GatewayProcess.startOn(replicas.get(drained).port(), drained, settings);
                    fixtures.add(replacement);
                    replicas.put(drained, replacement);
                    load.awaitServedBy(System.currentTimeMillis(), drained);
                    String other = drained.equals("a") ? "b" : "a";
                    await().atMost(Duration.ofSeconds(20)).until(() -> sessions(replicas.get(other)) == 2);
                    rounds.add(Round.drain(other, replicas.get(other), 2));
                }
                JsonNode result = browser.check();
                load.stop();

                List<JsonNode> closed = new ArrayList<>();
                for (JsonNode tab : result.path("tabs"))
                {
                    int closes = 0;
                    for (JsonNode socket : tab.path("sockets"))
                    {
                        if (socket.path("closedAt").isNull())
                            continue;
                        closes++;
                        closed.add(socket);
                        assertEquals(1012, socket.path("code").asInt(), () -> "closed for a service restart: " + socket.toPrettyString());
                        assertTrue(rounds.stream().anyMatch(round -> round.closedInTime(socket.path("closedAt").asLong())),
                            () -> "closed after a drain's grace and before its replica exited " + rounds + ": " + socket);
                        long restoredIn = socket.path("restoredAt").asLong() - socket.path("closedAt").asLong();
                        assertTrue(!socket.path("restoredAt").isNull() && restoredIn <= RESTORED_WITHIN.toMillis(),
                            () -> "the tab showed its desktop again within " + RESTORED_WITHIN + " of the close: " + tab.toPrettyString());
                    }
                    assertTrue(closes > 0, () -> "each tab's socket was moved by a drain: " + tab.toPrettyString());
                }
                assertEquals(rounds.stream().mapToInt(Round::held).sum(), closed.size(),
                    () -> "the sockets the drained replicas held, and only those, closed: " + result.toPrettyString());
                for (Round round : rounds)
                {
                    String log = round.replica().log();
                    assertTrue(log.contains("Draining (signal)") && log.contains("Drained in"), () -> "the drain's log lines\n" + log);
                    assertTrue(load.servedBetween(round.signalled(), round.exited()) > 0, "the load ran during the drain");
                }
                System.out.printf("[drain] %s; desktops shown again %s ms after their close; load: %d requests answered, %d errors%n",
                    rounds, closed.stream().map(c -> c.path("restoredAt").asLong() - c.path("closedAt").asLong()).toList(),
                    load.served(), load.errors().size());
                assertEquals(List.of(), load.errors(), "the load on the balancer saw no error");
            }
        }
        catch (AssertionError | RuntimeException x)
        {
            StringBuilder diagnostics = new StringBuilder();
            for (ProcessFixture fixture : fixtures)
                diagnostics.append(fixture.diagnostics()).append('\n');
            x.addSuppressed(new AssertionError("diagnostics\n" + diagnostics));
            throw x;
        }
        finally
        {
            List<ProcessFixture> newestFirst = new ArrayList<>(fixtures);
            Collections.reverse(newestFirst);
            Fixtures.closeInOrder(newestFirst.toArray(AutoCloseable[]::new));
        }
    }

    /**
     * One replica's drain: SIGTERM, and the process's end.
     *
     * @param held the desktop sockets it held
     */
    private record Round(String name, GatewayProcess replica, int held, long signalled, long exited)
    {
        static Round drain(String name, GatewayProcess replica, int held) throws InterruptedException
        {
            long signalled = System.currentTimeMillis();
            replica.terminate();
            assertTrue(replica.awaitExit(Duration.ofSeconds(30)), () -> "the replica did not exit\n" + replica.diagnostics());
            return new Round(name, replica, held, signalled, System.currentTimeMillis());
        }

        /** After the grace, in which the balancer took the replica out, and before the process ended. */
        boolean closedInTime(long at)
        {
            return at >= signalled + GRACE.toMillis() * 9 / 10 && at <= exited;
        }

        @Override
        public String toString()
        {
            return "SIGTERM to " + name + " holding " + held + " of 2 desktop sockets, exited after " + (exited - signalled) + " ms";
        }
    }

    /** The replica that holds the most desktop sockets. */
    private static String holder(Map<String, GatewayProcess> replicas) throws Exception
    {
        int onA = sessions(replicas.get("a"));
        int onB = sessions(replicas.get("b"));
        assertEquals(2, onA + onB, "both tabs' sockets are bridged: " + onA + " on a, " + onB + " on b");
        return onA >= onB ? "a" : "b";
    }

    /** Each replica as deployed: the Redis store, one cookie secret, short drain settings for the test. */
    private static Map<String, String> replicaSettings(RedisServerProcess redis)
    {
        return Map.of(
            "SANDGATE_STORE_TYPE", "redis",
            "SANDGATE_STORE_REDIS_ADDRESS", redis.address(),
            "SANDGATE_INGRESS_COOKIE_SECRET", SECRET,
            "SANDGATE_SERVER_DRAIN_GRACE", GRACE.toMillis() + "ms",
            "SANDGATE_SERVER_DRAIN_SPREAD", "2s",
            "SANDGATE_SERVER_DRAIN_TIMEOUT", "20s",
            "SANDGATE_SERVER_STOP_TIMEOUT", "2s");
    }

    /** Bridged WebSockets the replica holds, from its metrics. */
    private static int sessions(GatewayProcess replica) throws Exception
    {
        String metrics = HTTP.send(HttpRequest.newBuilder(replica.uri("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        Matcher matcher = SESSIONS.matcher(metrics);
        assertTrue(matcher.find(), () -> "no sessions gauge in\n" + metrics);
        return (int)Double.parseDouble(matcher.group(1));
    }

    /** The browser script, run as a process: it says when the tabs show their desktops, then waits for "check". */
    private static final class Browser implements AutoCloseable
    {
        private final Process process;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final Path err;

        private Browser(Process process, Path err)
        {
            this.process = process;
            this.err = err;
            Thread reader = new Thread(() ->
            {
                try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
                {
                    for (String line = out.readLine(); line != null; line = out.readLine())
                        lines.add(line);
                }
                catch (IOException x)
                {
                    // The process ended.
                }
                lines.add("");
            }, "drain-check-output");
            reader.setDaemon(true);
            reader.start();
        }

        static Browser start(Path work, String... pages) throws IOException
        {
            List<String> command = new ArrayList<>(List.of(NoVncBrowsers.node().toString(), BROWSER_DIR.resolve("drain-reconnect-check.mjs").toString(),
                "--timeout-ms", Long.toString(CHECK_TIMEOUT.toMillis())));
            for (int i = 0; i < pages.length; i++)
                command.addAll(List.of("--tab", pages[i], RED, SCREENSHOTS.resolve("drain-tab" + (i + 1) + "-red.png").toString()));
            Path err = work.resolve("drain-reconnect-check.err");
            ProcessBuilder builder = new ProcessBuilder(command).directory(BROWSER_DIR.toFile()).redirectError(err.toFile());
            // Headless needs no display; never let Chromium find the sandbox's X server.
            builder.environment().remove("DISPLAY");
            builder.environment().put("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1");
            return new Browser(builder.start(), err);
        }

        void awaitConnected() throws Exception
        {
            String line = lines.poll(CHECK_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            if (line == null || !line.contains("\"connected\""))
                fail("the tabs did not show their desktop: " + line + "\n" + report());
        }

        /** Tells the script the drain is over, and returns its verdict once every tab shows its desktop again. */
        JsonNode check() throws Exception
        {
            OutputStream in = process.getOutputStream();
            in.write("check\n".getBytes(StandardCharsets.US_ASCII));
            in.flush();
            String line = lines.poll(CHECK_TIMEOUT.toSeconds() + 10, TimeUnit.SECONDS);
            if (line == null || line.isEmpty())
                fail("no verdict from the browser\n" + report());
            JsonNode result = new ObjectMapper().readTree(line);
            if (!result.path("ok").asBoolean())
                fail("a tab did not show its desktop again\n" + result.toPrettyString() + "\n" + report());
            return result;
        }

        private String report() throws IOException
        {
            return "--- drain-reconnect-check stderr\n" + (Files.exists(err) ? Files.readString(err) : "") + "screenshots: " + SCREENSHOTS;
        }

        @Override
        public void close() throws Exception
        {
            if (!process.waitFor(10, TimeUnit.SECONDS))
            {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * A small concurrent HTTP load on the balancer: two clients, each sending its next request as
     * soon as the last one was answered, taking turns at the paths. Records every answer that was
     * not a 200, and every request that failed.
     */
    private static final class Load implements AutoCloseable
    {
        private record Served(long at, String replica)
        {
        }

        private final AtomicBoolean running = new AtomicBoolean(true);
        private final ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<Served> served = new ConcurrentLinkedQueue<>();
        private final List<Thread> clients = new ArrayList<>();

        static Load start(String base, List<String> paths)
        {
            Load load = new Load();
            for (int c = 0; c < 2; c++)
            {
                Thread client = new Thread(() -> load.run(base, paths), "drain-load-" + c);
                client.setDaemon(true);
                load.clients.add(client);
                client.start();
            }
            return load;
        }

        private void run(String base, List<String> paths)
        {
            for (int i = 0; running.get(); i++)
            {
                String path = paths.get(i % paths.size());
                try
                {
                    HttpResponse<byte[]> response = HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                    if (response.statusCode() != 200)
                        errors.add(System.currentTimeMillis() + " " + path + " " + response.statusCode() + " from " + response.headers().firstValue(Haproxy.REPLICA_HEADER));
                    else
                        served.add(new Served(System.currentTimeMillis(), response.headers().firstValue(Haproxy.REPLICA_HEADER).orElse("?")));
                }
                catch (IOException x)
                {
                    errors.add(System.currentTimeMillis() + " " + path + " " + x);
                }
                catch (InterruptedException x)
                {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }

        /** Returns once each of the replicas has answered some of the load since {@code since} (epoch ms). */
        void awaitServedBy(long since, String... replicas)
        {
            await().alias("the balancer sends the load to " + List.of(replicas)).atMost(Duration.ofSeconds(20))
                .until(() -> List.of(replicas).stream().allMatch(r -> served.stream().anyMatch(s -> s.at() >= since && s.replica().equals(r))));
        }

        long served()
        {
            return served.size();
        }

        long servedBetween(long from, long to)
        {
            return served.stream().filter(s -> s.at() >= from && s.at() <= to).count();
        }

        List<String> errors()
        {
            return List.copyOf(errors);
        }

        void stop() throws InterruptedException
        {
            running.set(false);
            for (Thread client : clients)
                client.join(15_000);
        }

        @Override
        public void close() throws InterruptedException
        {
            stop();
        }
    }
}
