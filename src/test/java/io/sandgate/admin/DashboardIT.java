package io.sandgate.admin;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayExtension;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dashboard in a real headless Chromium: sign in once, see routes (with their desktop links)
 * and a healthy egress node; then a route added through the admin API appears and the node, once
 * broken, shows as ejected, without reloading the page.
 */
class DashboardIT
{
    private static final String TOKEN = "dash-token-0123456789";

    private ForwardProxy node;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("admin.token", TOKEN)
        .set("ingress.static-routes", Map.of("37579", "10.0.0.7:6080"))
        .set("egress.health.tcp-interval", "200ms")
        .set("egress.health.tcp-timeout", "200ms")
        .set("egress.pools", Map.of("p", Map.of("nodes", List.of(Map.of("id", "dl-1", "address", node.address()))))));

    @BeforeEach
    void start()
    {
        node = ForwardProxy.start("dl-1");
    }

    @AfterEach
    void stop()
    {
        node.close();
    }

    @Test
    void dashboard_followsRoutesAndNodeHealthLive() throws Exception
    {
        Path browser = MavenPaths.projectBase().resolve("src/test/browser");
        assertTrue(Files.isDirectory(browser.resolve("node_modules/playwright-core")), "run ./scripts/test.sh to install the browser test packages");
        Path screenshot = MavenPaths.targetDir().resolve("screenshots/dashboard.png");
        Process check = new ProcessBuilder("node", browser.resolve("dashboard-check.mjs").toString(), gateway.uri() + "/admin/ui/",
            TOKEN, "37579", "dl-1", "41000", screenshot.toString()).redirectErrorStream(true).start();
        StringBuilder output = new StringBuilder();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(check.getInputStream())))
        {
            String line;
            while ((line = lines.readLine()) != null)
            {
                output.append(line).append('\n');
                if (line.equals("READY"))
                {
                    HttpResponse<String> put = HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/routes/41000"))
                        .header("Authorization", "Bearer " + TOKEN).PUT(HttpRequest.BodyPublishers.ofString("{\"target\":\"10.0.0.8:6080\"}")).build(),
                        HttpResponse.BodyHandlers.ofString());
                    assertEquals(200, put.statusCode(), put.body());
                    node.refuse();
                }
            }
        }
        assertTrue(check.waitFor(60, TimeUnit.SECONDS), output.toString());
        assertEquals(0, check.exitValue(), output.toString());
        assertTrue(Files.size(screenshot) > 0);
    }
}
