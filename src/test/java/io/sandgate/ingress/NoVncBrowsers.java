package io.sandgate.ingress;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
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
import io.sandgate.core.Secret;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.HeaderSandbox;
import io.sandgate.testing.LocalResources;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.VncSandbox;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * What the browser tests of noVNC share ({@link NoVncBrowserIT}, {@link NoVncAttacksBrowserIT}: two
 * classes, so that they run side by side). Unmodified noVNC in a real headless Chromium, through the
 * gateway, to real VNC servers: a redis-server holding the routes, an embedded gateway with the Redis store, and two sandboxes
 * (Xvnc painted red or blue behind websockify). A tab passes only when noVNC is connected and its
 * canvas shows its own sandbox's colour, so a page, asset or WebSocket that reached the wrong
 * sandbox, or none, fails the test. Screenshots are kept in {@code target/screenshots/}.
 *
 * <p>Two generations of noVNC are covered because they address the WebSocket differently:
 * noVNC 1.3 (Debian's {@code novnc} package) opens it at a fixed path without the sandbox id, so
 * in path mode the gateway must route it by the session cookie; noVNC 1.6+ resolves it against the
 * page URL, so it carries the id in its path. In host mode ({@code 37579.sbx.localhost}, which
 * Chromium resolves to loopback by itself) both work as they would on any web server, each sandbox
 * on an origin of its own.</p>
 *
 * <p>The same browser then plays the attacks of the first round: a script on one sandbox's page
 * reading another sandbox or opening its WebSocket with the user's cookie (stopped by the
 * same-origin policy in host mode, by the gateway's policy in path mode), and a sandbox setting the
 * gateway's cookie (which never reaches the cookie jar). The browser side is
 * {@code src/test/browser/novnc-check.mjs} (playwright-core driving Debian's
 * {@code /usr/bin/chromium}; it never downloads a browser).</p>
 */
abstract class NoVncBrowsers
{
    /** The sandboxes the tests open: two desktops painted red and blue, and one that sets cookies. */
    static final String ID_A = "37579";
    static final String ID_B = "41000";
    static final String ID_COOKIES = "7";
    static final String RED = "ff0000";
    static final String BLUE = "0000ff";

    private static final String INSTALL_HINT =
        "install them with ./scripts/test.sh (apt-get install chromium tigervnc-standalone-server x11-xserver-utils"
            + " websockify novnc nodejs npm; npm ci --prefix src/test/browser)";
    private static final Path BROWSER_DIR = MavenPaths.projectBase().resolve("src/test/browser");
    private static final Path SCREENSHOTS = MavenPaths.projectBase().resolve("target/screenshots");
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path NOVNC_13 = Path.of("/usr/share/novnc");
    private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(60);
    private static final String ROUTES_KEY = "vnc_sandboxes";
    private static final String SECRET = "novnc-it-secret-0123456789abcdef";
    private static final String HOST_PATTERN = "{id}.sbx.localhost";

    private static Path work;
    private static Path webRoot;
    @AutoClose
    private static RedisServerProcess redis;
    @AutoClose
    private static VncSandbox sandboxA;
    @AutoClose
    private static VncSandbox sandboxB;
    @AutoClose
    private static HeaderSandbox cookieSandbox;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(NoVncBrowsers::configure);
    /** The same routes in {@code signed} access mode. */
    @RegisterExtension
    static final GatewayExtension signed = new GatewayExtension(config -> configure(config).set("ingress.access", "signed"));

    static GatewayConfig configure(GatewayConfig config)
    {
        return config.redisStore(redis)
            .set("ingress.cookie.secret", SECRET)
            .set("ingress.host-pattern", HOST_PATTERN);
    }

    @BeforeAll
    static void start(WorkDir workDir) throws Exception
    {
        requireTools();
        work = workDir.getEmptyPathDir();
        webRoot = buildWebRoot(work.resolve("web"));
        redis = RedisServerProcess.start();
        sandboxA = VncSandbox.start(RED, webRoot);
        sandboxB = VncSandbox.start(BLUE, webRoot);
        // A sandbox that tries to set the gateway's cookie, and one of its own for every sandbox's host.
        cookieSandbox = HeaderSandbox.start(
            "Set-Cookie", "vnc_session_id=EVIL; Path=/vnc/",
            "Set-Cookie", "lab=1; Domain=sbx.localhost; Path=/lab");
        // What the pod watcher writes: a plain HSET by a client that is not the gateway's.
        try (RawRedis raw = RawRedis.connect(redis.port()))
        {
            raw.hset(ROUTES_KEY, ID_A, sandboxA.hostPort());
            raw.hset(ROUTES_KEY, ID_B, sandboxB.hostPort());
            raw.hset(ROUTES_KEY, ID_COOKIES, cookieSandbox.hostPort());
        }
    }

    static String grant(String id)
    {
        return Grants.create(new Secret(SECRET), Clock.systemUTC()).issue(id, "alice", Duration.ofMinutes(5));
    }

    /** The sandbox's own host, as {@link #HOST_PATTERN} makes it. */
    static String host(String id)
    {
        return HOST_PATTERN.replace("{id}", id);
    }

    static String hostOrigin(Gateway gw, String id)
    {
        return "http://" + host(id) + ":" + gw.port();
    }

    static String ws(String httpOrigin)
    {
        return httpOrigin.replaceFirst("^http", "ws");
    }

    static Set<String> cookieDomains(JsonNode result, String name)
    {
        return result.path("cookies").findParents("name").stream().filter(c -> c.path("name").asText().equals(name))
            .map(c -> c.path("domain").asText()).collect(Collectors.toSet());
    }

    static String cookieValue(JsonNode result, String name, String domain)
    {
        for (JsonNode cookie : result.path("cookies"))
        {
            if (cookie.path("name").asText().equals(name) && cookie.path("domain").asText().equals(domain))
                return cookie.path("value").asText();
        }
        return fail("no cookie " + name + " for " + domain + " in " + result.path("cookies").toPrettyString());
    }

    record Tab(String url, String colour, String screenshot)
    {
    }

    /** One run of the browser: pages visited first, tabs side by side, then probes from a tab's page. */
    static final class Check
    {
        private final String name;
        private final List<String> visits = new ArrayList<>();
        private final List<Tab> tabs = new ArrayList<>();
        private final List<String> probes = new ArrayList<>();

        Check(String name)
        {
            this.name = name;
        }

        Check visit(String url)
        {
            visits.add(url);
            return this;
        }

        Check tab(Tab tab)
        {
            tabs.add(tab);
            return this;
        }

        /** @param kind {@code fetch} or {@code websocket}, run as the tab's page's own script */
        Check probe(int tab, String kind, String url)
        {
            probes.addAll(List.of(Integer.toString(tab), kind, url));
            return this;
        }
    }

    static JsonNode check(Tab... tabs) throws Exception
    {
        Check check = new Check(tabs[0].screenshot().replace(".png", ""));
        for (Tab tab : tabs)
            check.tab(tab);
        return check(check);
    }

    /**
     * Runs the browser check (one browser context, so one cookie jar) and returns its JSON result;
     * fails with the script's report and the sandboxes' logs unless every tab connected and showed
     * its colour.
     */
    static JsonNode check(Check check) throws Exception
    {
        List<String> command = new ArrayList<>(List.of(node().toString(), BROWSER_DIR.resolve("novnc-check.mjs").toString(),
            "--timeout-ms", Long.toString(CHECK_TIMEOUT.toMillis()), "--chromium", CHROMIUM.toString()));
        for (String visit : check.visits)
            command.addAll(List.of("--visit", visit));
        for (Tab tab : check.tabs)
        {
            Path screenshot = SCREENSHOTS.resolve(tab.screenshot());
            Files.deleteIfExists(screenshot);
            command.addAll(List.of("--tab", tab.url(), tab.colour(), screenshot.toString()));
        }
        for (int i = 0; i < check.probes.size(); i += 3)
            command.addAll(List.of("--probe", check.probes.get(i), check.probes.get(i + 1), check.probes.get(i + 2)));
        List<Tab> tabs = check.tabs;
        // Kept under target/tests for a look after a failure.
        String name = check.name;
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
        for (int i = 0; i < tabs.size(); i++)
        {
            Tab expected = tabs.get(i);
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
    static void assertWebSockets(JsonNode tab, String expected, JsonNode result)
    {
        JsonNode sockets = tab.path("websockets");
        assertEquals(1, sockets.size(), () -> "WebSockets opened by " + tab.path("url").asText() + ": " + result.toPrettyString());
        assertEquals(expected, sockets.get(0).path("url").asText(), () -> result.toPrettyString());
        assertEquals(false, sockets.get(0).path("closed").asBoolean(true), () -> "WebSocket closed: " + result.toPrettyString());
    }

    static String report(Path out, Path err)
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
    static Path buildWebRoot(Path root) throws IOException
    {
        copyTree(NOVNC_13, root);
        copyTree(BROWSER_DIR.resolve("viewer"), root);
        Path novnc = BROWSER_DIR.resolve("node_modules").resolve("@novnc").resolve("novnc");
        copyTree(novnc.resolve("core"), root.resolve("novnc").resolve("core"));
        copyTree(novnc.resolve("vendor"), root.resolve("novnc").resolve("vendor"));
        return root;
    }

    static void copyTree(Path from, Path to) throws IOException
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
    static void requireTools()
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

    static Path node()
    {
        Path node = LocalResources.executable("node");
        if (node == null)
            fail("node not found on PATH; " + INSTALL_HINT);
        return node;
    }

}
