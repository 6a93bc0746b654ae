package io.sandgate.ingress;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LocalResources;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.VncSandbox;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Unmodified noVNC in a real headless Chromium, through the gateway, to real VNC servers: a
 * redis-server holding the routes, an embedded gateway with the Redis store, and two sandboxes
 * (Xvnc painted red or blue behind websockify). A tab passes only when noVNC is connected and its
 * canvas shows its own sandbox's colour, so a page, asset or WebSocket that reached the wrong
 * sandbox, or none, fails the test. Screenshots are kept in {@code target/screenshots/}.
 *
 * <p>Two generations of noVNC are covered because they address the WebSocket differently:
 * noVNC 1.3 (Debian's {@code novnc} package) opens it at a fixed path without the sandbox id, so
 * the gateway must route it by the session cookie; noVNC 1.6+ resolves it against the page URL,
 * so it carries the id in its path. The browser side is {@code src/test/browser/novnc-check.mjs}
 * (playwright-core driving Debian's {@code /usr/bin/chromium}; it never downloads a browser).
 */
@ExtendWith(WorkDirExtension.class)
class NoVncBrowserIT
{
    private static final String INSTALL_HINT =
        "install them with ./scripts/test.sh (apt-get install chromium tigervnc-standalone-server x11-xserver-utils"
            + " websockify novnc nodejs npm; npm ci --prefix src/test/browser)";
    private static final Path BROWSER_DIR = MavenPaths.projectBase().resolve("src/test/browser");
    private static final Path SCREENSHOTS = MavenPaths.projectBase().resolve("target/screenshots");
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path NOVNC_13 = Path.of("/usr/share/novnc");
    private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(30);
    private static final String ROUTES_KEY = "vnc_sandboxes";
    private static final String ID_A = "37579";
    private static final String ID_B = "41000";
    private static final String RED = "ff0000";
    private static final String BLUE = "0000ff";

    private static Path work;
    private static Path webRoot;
    private static RedisServerProcess redis;
    private static VncSandbox sandboxA;
    private static VncSandbox sandboxB;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .redisStore(redis)
        .set("ingress.cookie.secret", "novnc-it-secret-0123456789abcdef"));

    @BeforeAll
    static void start(WorkDir workDir) throws Exception
    {
        requireTools();
        work = workDir.getEmptyPathDir();
        webRoot = buildWebRoot(work.resolve("web"));
        redis = RedisServerProcess.start();
        sandboxA = VncSandbox.start(RED, webRoot);
        sandboxB = VncSandbox.start(BLUE, webRoot);
        // What the pod watcher writes: a plain HSET by a client that is not the gateway's.
        try (RawRedis raw = RawRedis.connect(redis.port()))
        {
            raw.hset(ROUTES_KEY, ID_A, sandboxA.hostPort());
            raw.hset(ROUTES_KEY, ID_B, sandboxB.hostPort());
        }
    }

    @AfterAll
    static void stop() throws Exception
    {
        for (AutoCloseable c : new AutoCloseable[]{sandboxA, sandboxB, redis})
        {
            if (c != null)
                c.close();
        }
    }

    @Test
    void noVnc13_inOneTab_connectsThroughTheIdlessWebSocketPath_andShowsItsSandbox() throws Exception
    {
        String page = gateway.uri() + "/vnc/" + ID_A + "/vnc.html?autoconnect=true&path=vnc/websockify";

        JsonNode result = check(new Tab(page, RED, "novnc13-sandboxA-red.png"));

        // noVNC 1.3 asked for the fixed path: only the session cookie could have routed it.
        assertWebSockets(result.path("tabs").get(0), "ws://127.0.0.1:" + gateway.port() + "/vnc/websockify", result);
    }

    @Test
    void noVnc16Style_twoTabsInOneBrowser_eachShowsItsOwnSandbox() throws Exception
    {
        String pageA = gateway.uri() + "/vnc/" + ID_A + "/";
        String pageB = gateway.uri() + "/vnc/" + ID_B + "/";

        JsonNode result = check(
            new Tab(pageA, RED, "novnc17-tab1-sandboxA-red.png"),
            new Tab(pageB, BLUE, "novnc17-tab2-sandboxB-blue.png"));

        String ws = "ws://127.0.0.1:" + gateway.port() + "/vnc/";
        assertWebSockets(result.path("tabs").get(0), ws + ID_A + "/websockify", result);
        assertWebSockets(result.path("tabs").get(1), ws + ID_B + "/websockify", result);
    }

    private record Tab(String url, String colour, String screenshot)
    {
    }

    /**
     * Runs the browser check for all tabs at once (one browser context, so one cookie jar) and
     * returns its JSON result; fails with the script's report and the sandboxes' logs unless every
     * tab connected and showed its colour.
     */
    private static JsonNode check(Tab... tabs) throws Exception
    {
        List<String> command = new ArrayList<>(List.of(node().toString(), BROWSER_DIR.resolve("novnc-check.mjs").toString(),
            "--timeout-ms", Long.toString(CHECK_TIMEOUT.toMillis()), "--chromium", CHROMIUM.toString()));
        for (Tab tab : tabs)
        {
            Path screenshot = SCREENSHOTS.resolve(tab.screenshot());
            Files.deleteIfExists(screenshot);
            command.addAll(List.of("--tab", tab.url(), tab.colour(), screenshot.toString()));
        }
        // Kept under target/tests for a look after a failure.
        String name = tabs[0].screenshot().replace(".png", "");
        Path out = work.resolve(name + ".json");
        Path err = work.resolve(name + ".err");
        ProcessBuilder builder = new ProcessBuilder(command)
            .directory(BROWSER_DIR.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        // Headless needs no display; never let Chromium find one of the sandboxes' X servers.
        builder.environment().remove("DISPLAY");
        builder.environment().put("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1");
        Process process = builder.start();
        // The script stops itself after its timeout (+5 s hard deadline); this is the backstop.
        if (!process.waitFor(CHECK_TIMEOUT.toSeconds() + 15, TimeUnit.SECONDS))
        {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
            fail("novnc-check.mjs did not end within " + (CHECK_TIMEOUT.toSeconds() + 15) + " s\n" + report(out, err));
        }
        String stdout = Files.readString(out, StandardCharsets.UTF_8).trim();
        if (process.exitValue() != 0 || stdout.isEmpty())
            fail("the browser check failed (exit " + process.exitValue() + ")\n" + report(out, err));
        JsonNode result = new ObjectMapper().readTree(stdout.substring(stdout.lastIndexOf('\n') + 1));
        if (!result.path("ok").asBoolean(false))
            fail("the browser check reported failure\n" + report(out, err));
        // The script's verdict, checked again here so a change to it cannot quietly weaken the test.
        for (int i = 0; i < tabs.length; i++)
        {
            Tab expected = tabs[i];
            JsonNode tab = result.path("tabs").get(i);
            assertEquals(expected.url(), tab.path("url").asText(), "tab order");
            assertEquals("connected", tab.path("state").asText(), () -> "noVNC state of " + expected.url() + "\n" + report(out, err));
            assertEquals(Set.of(expected.colour()), tab.path("sampledColours").properties().stream().map(Map.Entry::getKey).collect(Collectors.toSet()),
                () -> "colours sampled from the canvas of " + expected.url() + "\n" + report(out, err));
            if (!Files.isRegularFile(SCREENSHOTS.resolve(expected.screenshot())))
                fail("no screenshot " + expected.screenshot() + "\n" + report(out, err));
        }
        return result;
    }

    /** The tab opened exactly one WebSocket, at {@code expected}, and it is still open. */
    private static void assertWebSockets(JsonNode tab, String expected, JsonNode result)
    {
        JsonNode sockets = tab.path("websockets");
        assertEquals(1, sockets.size(), () -> "WebSockets opened by " + tab.path("url").asText() + ": " + result.toPrettyString());
        assertEquals(expected, sockets.get(0).path("url").asText(), () -> result.toPrettyString());
        assertEquals(false, sockets.get(0).path("closed").asBoolean(true), () -> "WebSocket closed: " + result.toPrettyString());
    }

    private static String report(Path out, Path err)
    {
        StringBuilder report = new StringBuilder();
        try
        {
            report.append("--- novnc-check stderr\n").append(Files.readString(err, StandardCharsets.UTF_8));
            String stdout = Files.readString(out, StandardCharsets.UTF_8).trim();
            report.append("--- novnc-check result\n");
            try
            {
                report.append(new ObjectMapper().readTree(stdout).toPrettyString()).append('\n');
            }
            catch (IOException notJson)
            {
                report.append(stdout).append('\n');
            }
        }
        catch (IOException x)
        {
            report.append("(cannot read the script's output: ").append(x).append(")\n");
        }
        for (VncSandbox sandbox : new VncSandbox[]{sandboxA, sandboxB})
        {
            if (sandbox != null)
                report.append(sandbox.diagnostics());
        }
        report.append("screenshots: ").append(SCREENSHOTS).append('\n');
        return report.toString();
    }

    /**
     * One web root for both sandboxes, as a pod image with two noVNC front ends would have:
     * Debian's noVNC 1.3 app at the top ({@code vnc.html}, {@code app/}, {@code core/},
     * {@code vendor/}), the 1.6-style viewer as {@code index.html}, and the unmodified
     * {@code @novnc/novnc} package's {@code core/} and {@code vendor/} under {@code novnc/}.
     */
    private static Path buildWebRoot(Path root) throws IOException
    {
        copyTree(NOVNC_13, root);
        copyTree(BROWSER_DIR.resolve("viewer"), root);
        Path novnc = BROWSER_DIR.resolve("node_modules").resolve("@novnc").resolve("novnc");
        copyTree(novnc.resolve("core"), root.resolve("novnc").resolve("core"));
        copyTree(novnc.resolve("vendor"), root.resolve("novnc").resolve("vendor"));
        return root;
    }

    private static void copyTree(Path from, Path to) throws IOException
    {
        try (Stream<Path> walk = Files.walk(from, FileVisitOption.FOLLOW_LINKS))
        {
            for (Path source : (Iterable<Path>)walk::iterator)
            {
                Path target = to.resolve(from.relativize(source).toString());
                if (Files.isDirectory(source))
                    Files.createDirectories(target);
                else
                    Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /**
     * This test needs a browser, VNC tools and Node packages that a bare JDK machine lacks. It
     * fails, naming the install command, rather than skipping: a skipped browser test would look
     * green while proving nothing.
     */
    private static void requireTools()
    {
        List<String> missing = new ArrayList<>();
        if (!Files.isExecutable(CHROMIUM))
            missing.add(CHROMIUM + " (package chromium)");
        for (String[] tool : new String[][]{{"Xvnc", "tigervnc-standalone-server"}, {"xsetroot", "x11-xserver-utils"},
            {"websockify", "websockify"}, {"node", "nodejs"}, {"redis-server", "redis-server"}})
        {
            if (LocalResources.executable(tool[0]) == null)
                missing.add(tool[0] + " (package " + tool[1] + ")");
        }
        if (!Files.isRegularFile(NOVNC_13.resolve("vnc.html")))
            missing.add(NOVNC_13.resolve("vnc.html") + " (package novnc)");
        for (String module : new String[]{"playwright-core", "@novnc/novnc"})
        {
            if (!Files.isRegularFile(BROWSER_DIR.resolve("node_modules").resolve(module).resolve("package.json")))
                missing.add("node module " + module + " (npm ci in src/test/browser)");
        }
        if (!missing.isEmpty())
            fail("NoVncBrowserIT runs real noVNC in a real browser, but this machine lacks: " + String.join(", ", missing)
                + ";\n" + INSTALL_HINT);
    }

    private static Path node()
    {
        Path node = LocalResources.executable("node");
        if (node == null)
            fail("node not found on PATH; " + INSTALL_HINT);
        return node;
    }

}
