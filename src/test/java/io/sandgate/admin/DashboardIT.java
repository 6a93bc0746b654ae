package io.sandgate.admin;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.BrowserCheck;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dashboard in a real headless Chromium: sign in once, see routes (with their desktop links)
 * and a healthy egress node, in the table and in the weight chart; then a route added through the
 * admin API appears, paused, and the node, once broken, shows as ejected, in the table and in the chart (its
 * line down to zero, red marks on the ejected samples), without reloading the page. The
 * screenshots stay in target/screenshots.
 */
class DashboardIT
{
    private static final String TOKEN = "dash-token-0123456789";

    private ForwardProxy node;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("admin.token", TOKEN)
        .set("admin.history.interval", "200ms")
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
        Path screenshot = BrowserCheck.screenshot("dashboard.png");
        BrowserCheck.run("dashboard-check.mjs", List.of(gateway.uri() + "/admin/ui/", TOKEN, "37579", "dl-1", "41000", screenshot.toString()),
            Duration.ofSeconds(60), line ->
            {
                if (!line.equals("READY"))
                    return;
                HttpResponse<String> put = HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/routes/41000"))
                    .header("Authorization", "Bearer " + TOKEN).PUT(HttpRequest.BodyPublishers.ofString("{\"target\":\"10.0.0.8:6080\",\"state\":\"paused\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
                assertEquals(200, put.statusCode(), put.body());
                node.refuse();
            });
        assertTrue(Files.size(screenshot) > 0);
        assertTrue(Files.size(screenshot.resolveSibling("dashboard-egress-chart.png")) > 0);
    }
}
