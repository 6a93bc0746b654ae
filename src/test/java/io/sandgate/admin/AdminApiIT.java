package io.sandgate.admin;

import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The admin API against a running gateway: routes, MCP sessions, config; token and errors. */
class AdminApiIT
{
    private static final String TOKEN = "admin-it-token-0123456789";
    private static final String SECRET = "admin-it-cookie-secret-0123456789";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static SandboxBackend sandbox;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("admin.token", TOKEN)
        .set("ingress.cookie.secret", SECRET)
        .set("mcp.servers", List.of(Map.of("name", "x", "url", "http://127.0.0.1:1/mcp"))));

    @BeforeAll
    static void start()
    {
        sandbox = SandboxBackend.start("admin");
    }

    @AfterAll
    static void stop()
    {
        sandbox.close();
    }

    private static HttpResponse<String> admin(String method, String path, String body) throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin" + path)).header("Authorization", "Bearer " + TOKEN)
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void routes_putGetListDelete_andTheIngressFollows() throws Exception
    {
        HttpResponse<String> put = admin("PUT", "/routes/77", "{\"target\":\"" + sandbox.hostPort() + "\",\"generation\":\"pod-1\"}");
        assertEquals(200, put.statusCode(), put.body());
        assertEquals("pod-1", JSON.readTree(put.body()).get("generation").asText());
        assertEquals(200, HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/77/")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());

        admin("PUT", "/routes/78", "{\"target\":\"10.0.0.8:6080\"}");
        JsonNode page = JSON.readTree(admin("GET", "/routes?limit=1&offset=1", null).body());
        assertEquals(2, page.get("total").asInt());
        assertEquals(1, page.get("items").size());
        assertEquals("78", page.get("items").get(0).get("id").asText());
        assertEquals(sandbox.hostPort(), JSON.readTree(admin("GET", "/routes/77", null).body()).get("target").asText());

        assertEquals(204, admin("DELETE", "/routes/77", null).statusCode());
        assertEquals(404, admin("GET", "/routes/77", null).statusCode());
        assertEquals(404, admin("DELETE", "/routes/77", null).statusCode());
        assertEquals(404, HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/77/")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
        admin("DELETE", "/routes/78", null);
    }

    /** Without a wake backend, a paused sandbox answers 503 with Retry-After and its stale target is never used. */
    @Test
    void aRoutePausedThroughTheApi_isShownPaused_andTheIngressAnswers503UntilItRuns() throws Exception
    {
        int asked = sandbox.requestLog().size();
        HttpResponse<String> put = admin("PUT", "/routes/80", "{\"state\":\"paused\",\"target\":\"" + sandbox.hostPort() + "\"}");
        assertEquals(200, put.statusCode(), put.body());
        assertEquals("paused", JSON.readTree(admin("GET", "/routes/80", null).body()).get("state").asText());
        HttpResponse<String> paused = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/80/")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(503, paused.statusCode(), paused.body());
        assertTrue(paused.headers().firstValue("Retry-After").isPresent());
        assertEquals(asked, sandbox.requestLog().size(), "the paused route's target was not asked");

        assertEquals(400, admin("PUT", "/routes/80", "{\"state\":\"asleep\"}").statusCode());
        assertEquals(400, admin("PUT", "/routes/80", "{\"state\":\"running\"}").statusCode(), "running needs a target");
        assertEquals("paused", JSON.readTree(admin("GET", "/routes/80", null).body()).get("state").asText(), "bad input changed nothing");

        assertEquals(200, admin("PUT", "/routes/80", "{\"target\":\"" + sandbox.hostPort() + "\"}").statusCode());
        assertEquals("running", JSON.readTree(admin("GET", "/routes/80", null).body()).get("state").asText());
        assertEquals(200, HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/80/")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
        admin("DELETE", "/routes/80", null);
    }

    @Test
    void badInput_getsAClearErrorAndChangesNothing() throws Exception
    {
        assertEquals(400, admin("PUT", "/routes/abc", "{\"target\":\"10.0.0.1:1\"}").statusCode(), "id must match the pattern");
        HttpResponse<String> badTarget = admin("PUT", "/routes/79", "{\"target\":\"not a target\"}");
        assertEquals(400, badTarget.statusCode());
        assertTrue(badTarget.body().contains("expected"), badTarget.body());
        assertEquals(400, admin("PUT", "/routes/79", "not json").statusCode());
        assertEquals(400, admin("GET", "/routes?limit=-1", null).statusCode());
        assertEquals(404, admin("GET", "/routes/79", null).statusCode());
        assertEquals(405, admin("POST", "/routes/79", "{}").statusCode());
        assertEquals(404, admin("GET", "/nothing", null).statusCode());
        assertEquals(401, HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/routes")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
        assertEquals(403, HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/routes")).header("Authorization", "Bearer wrong").build(),
            HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    @Test
    void searchAndActions_refuseMalformedOrUnknownIds_andChangeNothing() throws Exception
    {
        admin("PUT", "/routes/4201", "{\"target\":\"10.0.0.1:6080\"}");
        HttpResponse<String> badPrefix = admin("GET", "/search/routes?prefix=4a", null);
        assertEquals(400, badPrefix.statusCode(), badPrefix.body());
        assertTrue(badPrefix.body().contains("ingress.id-pattern"), badPrefix.body());
        assertEquals(400, admin("GET", "/search/routes?prefix=42&cursor=77", null).statusCode(), "a cursor of another search");
        assertEquals(400, admin("GET", "/search/routes?prefix=42&limit=0", null).statusCode());
        assertEquals(400, admin("GET", "/search/routes?prefix=42&limit=1001", null).statusCode());
        JsonNode found = JSON.readTree(admin("GET", "/search/routes?prefix=42", null).body());
        assertEquals("4201", found.get("items").get(0).get("id").asText(), found.toString());
        assertFalse(found.has("next"), found.toString());

        assertEquals(400, admin("POST", "/revoke/4a", null).statusCode());
        assertEquals(404, admin("POST", "/revoke/4299", null).statusCode());
        assertEquals(400, admin("DELETE", "/routes/4a", null).statusCode());
        HttpResponse<String> badSession = admin("DELETE", "/mcp/sessions/not-a-session", null);
        assertEquals(400, badSession.statusCode(), badSession.body());
        assertEquals(404, admin("DELETE", "/mcp/sessions/0123456789abcdef0123456789abcdef", null).statusCode());
        JsonNode route = JSON.readTree(admin("GET", "/routes/4201", null).body());
        assertEquals("10.0.0.1:6080", route.get("target").asText());
        assertFalse(route.has("revokedBefore"), route.toString());
        admin("DELETE", "/routes/4201", null);
    }

    @Test
    void history_drawsTheFacesAndMcp() throws Exception
    {
        HttpResponse<String> response = admin("GET", "/history", null);
        assertEquals(200, response.statusCode(), response.body());
        JsonNode history = JSON.readTree(response.body());
        assertEquals(5000, history.get("intervalMillis").asLong());
        List<String> charts = new java.util.ArrayList<>();
        history.get("charts").forEach(chart -> charts.add(chart.get("id").asText()));
        assertEquals(List.of("requests", "latency", "egress", "mcp"), charts);
    }

    @Test
    void aForeignOrigin_cannotDriveTheApi_evenWithTheToken() throws Exception
    {
        for (String origin : new String[] {"http://evil.example", "http://7.sbx.localhost:" + gateway.port()})
        {
            HttpResponse<String> refused = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/routes/77")).header("Authorization", "Bearer " + TOKEN)
                .header("Origin", origin).DELETE().build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(403, refused.statusCode(), origin);
            assertTrue(refused.body().contains("server.public-origins"), refused.body());
        }
        HttpResponse<String> loopback = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/routes")).header("Authorization", "Bearer " + TOKEN)
            .header("Origin", "http://127.0.0.1:" + gateway.port()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, loopback.statusCode());
    }

    @Test
    void config_showsEffectiveValues_withSecretsRedacted() throws Exception
    {
        HttpResponse<String> response = admin("GET", "/config", null);
        assertEquals(200, response.statusCode());
        JsonNode config = JSON.readTree(response.body());
        assertEquals("/vnc/", config.get("ingress.prefix").asText());
        assertEquals("[REDACTED]", config.get("admin.token").asText());
        assertEquals("[REDACTED]", config.get("ingress.cookie.secret").asText());
        assertFalse(response.body().contains(TOKEN) || response.body().contains(SECRET), response.body());
    }

    @Test
    void mcpSessions_listAndEnd() throws Exception
    {
        HttpResponse<InputStream> stream = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/mcp/x/sse")).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, stream.statusCode());
        try (var lines = new java.io.BufferedReader(new java.io.InputStreamReader(stream.body())))
        {
            lines.readLine();
            String data = lines.readLine();
            String id = data.substring(data.indexOf("sessionId=") + "sessionId=".length());
            JsonNode listed = JSON.readTree(admin("GET", "/mcp/sessions", null).body()).get("items");
            boolean found = false;
            for (JsonNode item : listed)
                found |= item.get("id").asText().equals(id);
            assertTrue(found, listed.toString());

            assertEquals(204, admin("DELETE", "/mcp/sessions/" + id, null).statusCode());
            await().atMost(Duration.ofSeconds(5)).until(() ->
            {
                String line;
                while ((line = lines.readLine()) != null)
                {
                    // drain keepalives until the stream ends
                }
                return true;
            });
            assertEquals(404, admin("DELETE", "/mcp/sessions/" + id, null).statusCode());
        }
    }

    @Test
    void withoutAToken_theAdminApiIsOff() throws Exception
    {
        try (RunningGateway plain = RunningGateway.start(GatewayConfig.defaults()))
        {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(plain.uri().resolve("/admin/routes"))
                .header("Authorization", "Bearer anything").build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(404, response.statusCode());
            assertTrue(response.body().contains("admin API is off"), response.body());
        }
    }
}
