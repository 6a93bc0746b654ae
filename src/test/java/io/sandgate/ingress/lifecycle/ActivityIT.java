package io.sandgate.ingress.lifecycle;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.ingress.websocket.WebSocketBridgeIT;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RedisReplicas;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What each replica records of the sandboxes' traffic, on both ingress front-ends, over two
 * replicas sharing a real {@code redis-server}: {@code GET /admin/sandboxes/{id}} shows a sandbox's
 * state, its latest traffic on any replica and the WebSockets each holds open; only a sandbox
 * actually forwarded to is recorded, so that neither made-up ids nor a sandbox named without the
 * access to reach it leave a trace.
 */
@EachIngressFrontEnd
class ActivityIT extends RedisReplicas
{
    private static final String ROUTES = "vnc_sandboxes";
    private static final String TOKEN = "activity-it-admin-token-0123456789";
    private static final String SECRET = "activity-it-cookie-secret-0123456789";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .followRedirects(HttpClient.Redirect.NEVER).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private WebSocketBackend desktops;
    private WebSocketClient browsers;

    @Override
    protected void configure(GatewayConfig config)
    {
        config.set("log.access", "false")
            .set("admin.token", TOKEN)
            .set("ingress.cookie.secret", SECRET)
            .set("ingress.activity.flush", "200ms");
    }

    @Override
    protected void beforeReplicas() throws Exception
    {
        desktops = WebSocketBackend.start("desktop");
        raw.hset(ROUTES, "7001", a.hostPort());
        raw.hset(ROUTES, "7002", b.hostPort());
        raw.hset(ROUTES, "7003", desktops.hostPort());
        browsers = new WebSocketClient();
        browsers.start();
    }

    @AfterEach
    void stopOwnFixtures() throws Exception
    {
        browsers.stop();
        desktops.close();
    }

    @Test
    void adminView_showsStateLatestActivityAndWebSocketsPerReplica() throws Exception
    {
        Instant before = Instant.now().minusSeconds(2);
        assertEquals(200, get(replica1, "/vnc/7001/echo", null).statusCode());
        await().atMost(Duration.ofSeconds(5)).until(() -> !sandbox(replica2, "7001").path("lastActivity").isNull());
        JsonNode once = sandbox(replica2, "7001");
        assertEquals("running", once.get("state").asText());
        assertEquals(1, once.get("replicas").size(), once.toString());
        Instant first = Instant.parse(once.get("lastActivity").asText());
        assertTrue(first.isAfter(before), first + " after " + before);

        // Traffic on the other replica too: the latest of both, and each replica's own.
        assertEquals(200, get(replica2, "/vnc/7001/echo", null).statusCode());
        await().atMost(Duration.ofSeconds(5)).until(() -> sandbox(replica1, "7001").get("replicas").size() == 2);
        JsonNode twice = sandbox(replica1, "7001");
        assertTrue(Instant.parse(twice.get("lastActivity").asText()).isAfter(first), twice.toString());
        for (JsonNode replica : twice.get("replicas"))
        {
            assertTrue(!Instant.parse(replica.get("lastActivity").asText()).isAfter(Instant.parse(twice.get("lastActivity").asText())), twice.toString());
            assertEquals(0, replica.get("webSockets").asInt());
        }

        // WebSockets per replica: one on each, then one closed.
        Session one = openDesktop(replica1, "7003", null);
        openDesktop(replica2, "7003", null);
        openDesktop(replica2, "7003", null);
        await().atMost(Duration.ofSeconds(5)).until(() -> sandbox(replica1, "7003").get("webSockets").asInt() == 3);
        JsonNode open = sandbox(replica1, "7003");
        List<Integer> perReplica = new ArrayList<>();
        open.get("replicas").forEach(r -> perReplica.add(r.get("webSockets").asInt()));
        perReplica.sort(null);
        assertEquals(List.of(1, 2), perReplica, open.toString());
        one.close();
        await().atMost(Duration.ofSeconds(5)).until(() -> sandbox(replica2, "7003").get("webSockets").asInt() == 2);

        // The state is the route's: paused, and none once the route is gone while the record remains.
        raw.hset(ROUTES, "7002", "{\"state\":\"paused\"}");
        await().atMost(Duration.ofSeconds(3)).until(() -> "paused".equals(sandbox(replica1, "7002").get("state").asText()));
        assertTrue(sandbox(replica1, "7002").get("lastActivity").isNull());
        raw.hdel(ROUTES, "7001");
        await().atMost(Duration.ofSeconds(3)).until(() -> "none".equals(sandbox(replica2, "7001").get("state").asText()));
        assertTrue(!sandbox(replica2, "7001").get("lastActivity").isNull());
    }

    @Test
    void adminView_refusesWithoutTheToken_orWithAWrongOne_aMalformedId_andAnUnknownSandbox() throws Exception
    {
        HttpResponse<String> anonymous = HTTP.send(HttpRequest.newBuilder(replica1.uri("/admin/sandboxes/7001")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(401, anonymous.statusCode());
        HttpResponse<String> wrong = HTTP.send(HttpRequest.newBuilder(replica1.uri("/admin/sandboxes/7001"))
            .header("Authorization", "Bearer not-the-token").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(403, wrong.statusCode());
        for (String malformed : List.of("abc", "7001x", "-1", "1".repeat(65)))
            assertEquals(400, admin(replica1, "/sandboxes/" + malformed).statusCode(), malformed);
        HttpResponse<String> unknown = admin(replica1, "/sandboxes/7999");
        assertEquals(404, unknown.statusCode());
        assertTrue(!unknown.body().contains("127.0.0.1"), unknown.body());
    }

    @Test
    void onlyTheSandboxForwardedTo_isRecorded_neverOneAClientNamesBeside_norMadeUpIds() throws Exception
    {
        // A flood of ids nobody routes: all 404, none recorded.
        for (int i = 0; i < 300; i++)
            assertEquals(404, get(replica1, "/vnc/" + (80_000 + i) + "/", null).statusCode());
        // The path names 7001; the header and the Referer name 7002, which gets nothing.
        HttpResponse<String> named = HTTP.send(HttpRequest.newBuilder(replica1.uri("/vnc/7001/echo"))
            .header("X-Sandbox-Id", "7002").header("Referer", replica1.uri("/vnc/7002/").toString()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, named.statusCode());
        assertTrue(named.body().startsWith("backend=a"), named.body());
        HttpResponse<String> asset = HTTP.send(HttpRequest.newBuilder(replica1.uri("/vnc/app/ui.js"))
            .header("X-Sandbox-Id", "7002").header("Referer", replica1.uri("/vnc/7001/").toString()).build(), HttpResponse.BodyHandlers.ofString());
        assertTrue(asset.body().startsWith("backend=a"), asset.body());

        await().atMost(Duration.ofSeconds(5)).until(() -> !sandbox(replica1, "7001").path("lastActivity").isNull());
        assertEquals(1.0, tracked(replica1), "sandboxes recorded on the replica");
        assertEquals(List.of("7001"), recordedInRedis(), "sandboxes recorded in Redis");
        assertTrue(sandbox(replica1, "7002").get("lastActivity").isNull());
        assertEquals(404, admin(replica1, "/sandboxes/80000").statusCode());
    }

    @Test
    void signedAccess_aClientWithoutAccessToASandbox_cannotMakeItLookActive() throws Exception
    {
        try (RunningGateway signed = gateways.startAnother(config -> config.set("ingress.access", "signed")))
        {
            String grant = signed.sandgate().ingress().grants().issue("7001", "mallory", Duration.ofMinutes(5));
            HttpResponse<String> redeemed = get(signed, "/vnc/7001/?" + signed.sandgate().config().ingress().grantParam() + "=" + grant, null);
            assertEquals(303, redeemed.statusCode(), redeemed.body());
            String cookie = redeemed.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("vnc_session_id="))
                .map(c -> c.substring(0, c.indexOf(';'))).findFirst().orElseThrow();

            // Mallory's session is for 7001: every way of naming 7002 is refused, and 7002 stays quiet.
            assertEquals(403, get(signed, "/vnc/7002/echo", cookie).statusCode());
            assertEquals(403, HTTP.send(HttpRequest.newBuilder(signed.uri("/vnc/app/ui.js")).header("Cookie", cookie)
                .header("Referer", signed.uri("/vnc/7002/").toString()).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
            assertEquals(403, get(signed, "/vnc/7002/echo", null).statusCode());
            assertTrue(upgradeRefused(signed, "7002", cookie), "the WebSocket to 7002 opened");
            assertEquals(200, get(signed, "/vnc/7001/echo", cookie).statusCode());

            await().atMost(Duration.ofSeconds(5)).until(() -> !sandbox(replica1, "7001").path("lastActivity").isNull());
            assertTrue(sandbox(replica1, "7002").get("lastActivity").isNull(), "7002 looks active");
            assertEquals(1.0, tracked(signed));
        }
    }

    private Session openDesktop(Gateway replica, String sandboxId, String cookie) throws Exception
    {
        ClientUpgradeRequest upgrade = new ClientUpgradeRequest();
        if (cookie != null)
            upgrade.setHeader("Cookie", cookie);
        WebSocketBridgeIT.Browser desktop = new WebSocketBridgeIT.Browser();
        return browsers.connect(desktop, URI.create("ws://127.0.0.1:" + replica.port() + "/vnc/" + sandboxId + "/websockify"), upgrade)
            .get(5, TimeUnit.SECONDS);
    }

    private boolean upgradeRefused(Gateway replica, String sandboxId, String cookie)
    {
        try
        {
            openDesktop(replica, sandboxId, cookie).close();
            return false;
        }
        catch (Exception x)
        {
            return true;
        }
    }

    /** The sandboxes every replica's activity hash holds in Redis, read with a client of the test's own. */
    private List<String> recordedInRedis()
    {
        List<String> ids = new ArrayList<>();
        for (Object replica : (List<?>)raw.command("ZRANGE", "sandgate:activity:replicas", "0", "-1"))
        {
            for (Object id : (List<?>)raw.command("HKEYS", "sandgate:activity:{" + replica + "}"))
                ids.add((String)id);
        }
        ids.sort(null);
        return ids;
    }

    private static double tracked(Gateway replica)
    {
        return replica.sandgate().metrics().get("sandgate.sandbox.activity.tracked").gauge().value();
    }

    private static HttpResponse<String> get(Gateway gateway, String path, String cookie) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri(path)).timeout(Duration.ofSeconds(10));
        if (cookie != null)
            request.header("Cookie", cookie);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> admin(Gateway gateway, String path) throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(gateway.internalUri("/admin" + path)).header("Authorization", "Bearer " + TOKEN).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode sandbox(Gateway gateway, String id) throws Exception
    {
        HttpResponse<String> response = admin(gateway, "/sandboxes/" + id);
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }
}
