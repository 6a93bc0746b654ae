package io.sandgate.admin;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RouteStore;
import io.sandgate.testing.BrowserCheck;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LogCapture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dashboard's actions in a real headless Chromium, with 100 000 routes in the store: the
 * operator finds sandboxes by typing the start of an id, a dismissed confirmation changes nothing,
 * and each confirmed action (revoke a sandbox's access, delete a route, end an MCP session, reload
 * egress) has its effect and leaves its line in the audit log.
 */
class DashboardActionsIT
{
    private static final String TOKEN = "dash-actions-token-0123456789";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("admin.token", TOKEN)
        .set("mcp.servers", List.of(Map.of("name", "x", "url", "http://127.0.0.1:1/mcp"))));

    @Test
    void operator_findsASandboxAmong100000_andActsOnIt_eachActionConfirmedAndAudited() throws Exception
    {
        RouteStore routes = gateway.sandgate().store().routes();
        for (int i = 0; i < 100_000; i++)
            routes.put(Integer.toString(i), Route.parse("10.0." + (i / 256 % 256) + "." + (i % 256) + ":6080"));
        List<String> expected = new ArrayList<>(List.of("4242"));
        for (int i = 0; i < 10; i++)
            expected.add("4242" + i);

        HttpResponse<InputStream> stream = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/mcp/x/sse")).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, stream.statusCode());
        try (BufferedReader events = new BufferedReader(new InputStreamReader(stream.body()));
             LogCapture audit = LogCapture.auditLog())
        {
            events.readLine();
            String endpoint = events.readLine();
            String session = endpoint.substring(endpoint.indexOf("sessionId=") + "sessionId=".length());
            Path screenshot = BrowserCheck.screenshot("dashboard-actions.png");
            BrowserCheck.run("dashboard-actions-check.mjs", List.of(gateway.uri() + "/admin/ui/", TOKEN, "4242", String.join(",", expected),
                "42421", "42427", session, screenshot.toString()), Duration.ofSeconds(90), line ->
                {
                });
            assertTrue(Files.size(screenshot) > 0);

            assertTrue(routes.find("42421").orElseThrow().revokedBefore().isPresent(), "revoked");
            assertTrue(routes.find("42427").isEmpty(), "deleted");
            assertTrue(routes.find("42426").isPresent(), "its neighbour untouched");
            assertTrue(gateway.sandgate().store().sessions().find(session).isEmpty(), "ended");

            List<JsonNode> lines = new ArrayList<>();
            for (String line : audit.lines())
                lines.add(JSON.readTree(line));
            assertEquals(1, calls(lines, "DELETE", "/admin/routes/42427", 204), "the dismissed click sent nothing: " + lines);
            assertEquals(1, calls(lines, "POST", "/admin/revoke/42421", 200), lines.toString());
            assertEquals(1, calls(lines, "DELETE", "/admin/mcp/sessions/" + session, 204), lines.toString());
            assertEquals(1, calls(lines, "POST", "/admin/egress/reload", 200), lines.toString());
            assertTrue(lines.stream().anyMatch(l -> l.get("event").asText().equals("access.revoked") && l.get("sandbox").asText().equals("42421")),
                lines.toString());
            assertFalse(lines.toString().contains(TOKEN), "the token is never audited");
        }
    }

    /** How many admin calls of this method and path the audit log has, all with that status. */
    private static long calls(List<JsonNode> lines, String method, String path, int status)
    {
        List<JsonNode> calls = lines.stream().filter(l -> l.get("event").asText().equals("admin.call")
            && l.get("method").asText().equals(method) && l.get("path").asText().equals(path)).toList();
        calls.forEach(call -> assertEquals(status, call.get("status").asInt(), call.toString()));
        return calls.size();
    }
}
