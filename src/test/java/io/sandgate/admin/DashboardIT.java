package io.sandgate.admin;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.sandgate.config.ConfigLoader;
import io.sandgate.launcher.EmbeddedServer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The dashboard in a real headless Chromium: sign in once, see routes (with their desktop links) and egress nodes. */
class DashboardIT
{
    @Test
    void dashboard_showsRoutesAndPools_withTheTokenInSessionStorage() throws Exception
    {
        Path browser = Path.of("src/test/browser");
        assertTrue(Files.isDirectory(browser.resolve("node_modules/playwright-core")), "run ./scripts/test.sh to install the browser test packages");
        Map<String, Object> values = Map.of("server.host", "127.0.0.1", "server.port", "0", "admin.token", "dash-token-0123456789",
            "ingress.static-routes", Map.of("37579", "10.0.0.7:6080"),
            "egress.pools", Map.of("p", Map.of("nodes", List.of(Map.of("id", "dl-1", "address", "127.0.0.1:1")))));
        try (EmbeddedServer gateway = EmbeddedServer.start(ConfigLoader.fromValues(values)))
        {
            Path screenshot = Path.of("target/screenshots/dashboard.png").toAbsolutePath();
            Process check = new ProcessBuilder("node", browser.resolve("dashboard-check.mjs").toString(), gateway.uri() + "/admin/ui/",
                "dash-token-0123456789", "37579", "dl-1", screenshot.toString())
                .redirectErrorStream(true).start();
            boolean done = check.waitFor(60, TimeUnit.SECONDS);
            String output = new String(check.getInputStream().readAllBytes());
            if (!done)
                check.destroyForcibly();
            assertTrue(done, "dashboard check timed out: " + output);
            assertEquals(0, check.exitValue(), output);
            assertTrue(Files.size(screenshot) > 0);
        }
    }
}
