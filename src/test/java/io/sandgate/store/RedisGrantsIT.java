package io.sandgate.store;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.MutableClock;
import io.sandgate.testing.RedisReplicas;
import io.sandgate.testing.WebSocketBackend;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Signed access across two replicas sharing a real {@code redis-server}: the attacks on grants of
 * the trust-boundary review, each refused. A grant link replayed (on the replica that redeemed it
 * or another) is refused as used; the access a five-minute grant opens ends when the grant says,
 * and switching tabs does not extend it; a revocation through the admin API, or the sandbox's pod
 * replaced, refuses outstanding cookies on both replicas within a second. The grants are judged
 * alike behind either front end: each test runs on one, the class's tests alternating.
 */
@EachIngressFrontEnd(split = true)
class RedisGrantsIT extends RedisReplicas
{
    private static final Duration WITHIN_A_SECOND = Duration.ofMillis(1000);
    private static final String TOKEN = "grants-it-admin-token-0123456789";
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .followRedirects(HttpClient.Redirect.NEVER).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Both replicas' time, moved ahead where a test needs seconds to pass. */
    private final MutableClock clock = MutableClock.ticking();

    @Override
    protected void configure(GatewayConfig config)
    {
        config.clock(clock)
            .set("ingress.access", "signed")
            .set("ingress.session-max-age", "1h")
            .set("admin.token", TOKEN)
            .set("ingress.cookie.secret", "grants-it-secret-0123456789abcdef");
    }

    @Override
    protected void beforeReplicas() throws Exception
    {
        raw.hset("vnc_sandboxes", "7001", a.hostPort());
        raw.hset("vnc_sandboxes", "7002", b.hostPort());
    }

    private static HttpResponse<String> get(Gateway gateway, String path, String cookie) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve(path)).timeout(Duration.ofSeconds(10));
        if (cookie != null)
            request.header("Cookie", "vnc_session_id=" + cookie);
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode admin(Gateway gateway, String method, String path, String body) throws Exception
    {
        HttpResponse<String> response = CLIENT.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin" + path))
            .header("Authorization", "Bearer " + TOKEN)
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }

    /** A grant link's path, made through the admin API. */
    private static String grantPath(Gateway gateway, String id, String body) throws Exception
    {
        return admin(gateway, "POST", "/grants/" + id, body).get("path").asText();
    }

    /** Follows a grant link: the 303 that strips it, and the session cookie's value it sets. */
    private static String redeem(Gateway gateway, String grantPath, String cookie) throws Exception
    {
        HttpResponse<String> response = get(gateway, grantPath, cookie);
        assertEquals(303, response.statusCode(), response.body());
        String value = sessionCookie(response);
        assertNotNull(value, response.headers().toString());
        return value;
    }

    /** The session cookie's new value in a response, or null when it sets none (sandboxes set cookies of their own). */
    private static String sessionCookie(HttpResponse<String> response)
    {
        for (String setCookie : response.headers().allValues("Set-Cookie"))
        {
            if (setCookie.startsWith("vnc_session_id="))
                return setCookie.substring(setCookie.indexOf('=') + 1, setCookie.indexOf(';'));
        }
        return null;
    }

    private static int status(Gateway gateway, String path, String cookie)
    {
        try
        {
            return get(gateway, path, cookie).statusCode();
        }
        catch (Exception x)
        {
            return -1;
        }
    }

    /** Expiry (epoch seconds) of the cookie entry for {@code id}, read from the value as the browser holds it. */
    private static long expiryOf(String cookie, String id)
    {
        for (String entry : cookie.split("~"))
        {
            String[] fields = entry.split("\\.");
            if (new String(java.util.Base64.getUrlDecoder().decode(fields[0])).equals(id))
                return Long.parseLong(fields[1]);
        }
        throw new AssertionError("no entry for " + id + " in " + cookie);
    }

    @Test
    void aGrantLinkReplayed_onTheSameReplicaOrAnother_isRefusedAsAlreadyUsed() throws Exception
    {
        String link = grantPath(replica1, "7001", "{\"subject\":\"alice\",\"ttl\":\"5m\"}");
        String cookie = redeem(replica1, link, null);
        assertEquals(200, status(replica1, "/vnc/7001/", cookie));
        assertEquals(200, status(replica2, "/vnc/7001/", cookie), "the cookie opens the sandbox on every replica");

        for (Gateway replica : List.of(replica1, replica2))
        {
            HttpResponse<String> replay = get(replica, link, null);
            assertEquals(403, replay.statusCode(), replica + ": " + replay.body());
            assertTrue(replay.body().contains("already used"), replay.body());
            assertTrue(replay.body().contains("grant_used"), replay.body());
        }

        String nonce = link.substring(link.indexOf('=') + 1).split("\\.")[4];
        long ttl = (Long)raw.command("PTTL", "sandgate:grant:" + nonce);
        assertTrue(ttl > Duration.ofMinutes(5).toMillis() && ttl <= Duration.ofMinutes(6).toMillis(),
            "remembered until the grant expires (plus a minute for clock skew): " + ttl);
    }

    @Test
    void aShortGrant_opensAccessEndingAtItsLimit_andSwitchingBetweenSandboxesDoesNotExtendIt() throws Exception
    {
        long before = clock.instant().getEpochSecond();
        String cookie = redeem(replica1, grantPath(replica1, "7001", "{\"subject\":\"alice\",\"ttl\":\"5m\",\"sessionLimit\":\"2m\"}"), null);
        long end7001 = expiryOf(cookie, "7001");
        assertTrue(end7001 >= before + 120 && end7001 <= clock.instant().getEpochSecond() + 120, "ends at redemption + the grant's 2m: " + cookie);

        clock.advance(Duration.ofSeconds(2));
        cookie = redeem(replica2, grantPath(replica2, "7002", "{\"subject\":\"alice\",\"ttl\":\"5m\"}"), cookie);
        long end7002 = expiryOf(cookie, "7002");
        assertTrue(end7002 <= clock.instant().getEpochSecond() + 3600, "at most ingress.session-max-age: " + cookie);

        // Back and forth between the two tabs, on both replicas: each switch reorders, nothing is re-signed longer.
        clock.advance(Duration.ofSeconds(2));
        for (Gateway replica : List.of(replica1, replica2, replica1))
        {
            for (String id : List.of("7001", "7002"))
            {
                HttpResponse<String> page = get(replica, "/vnc/" + id + "/", cookie);
                assertEquals(200, page.statusCode(), page.body());
                String moved = sessionCookie(page);
                if (moved != null)
                    cookie = moved;
            }
        }
        assertEquals(end7001, expiryOf(cookie, "7001"));
        assertEquals(end7002, expiryOf(cookie, "7002"));
    }

    @Test
    void anAdminRevocation_refusesOutstandingCookiesOnBothReplicasWithinASecond() throws Exception
    {
        String cookie = redeem(replica1, grantPath(replica1, "7001", "{\"subject\":\"alice\"}"), null);
        cookie = redeem(replica2, grantPath(replica1, "7002", "{\"subject\":\"alice\"}"), cookie);
        String held = cookie;
        for (Gateway replica : List.of(replica1, replica2))
        {
            assertEquals(200, status(replica, "/vnc/7001/", held), "route now cached on " + replica);
            assertEquals(200, status(replica, "/vnc/7002/", held));
        }

        JsonNode revoked = admin(replica1, "POST", "/revoke/7001", null);
        assertNotNull(revoked.get("revokedBefore"), revoked.toString());
        await().atMost(WITHIN_A_SECOND).pollInterval(Duration.ofMillis(20)).until(() ->
            status(replica1, "/vnc/7001/", held) == 403 && status(replica2, "/vnc/7001/", held) == 403);
        HttpResponse<String> refused = get(replica2, "/vnc/7001/", held);
        assertTrue(refused.body().contains("revoked"), refused.body());
        assertEquals(200, status(replica2, "/vnc/7002/", held), "the other sandbox's access stands");

        // Writing the sandbox a new route keeps the stamp; a new grant opens it again.
        admin(replica2, "PUT", "/routes/7001", "{\"target\":\"" + b.hostPort() + "\"}");
        assertTrue(raw.hget("vnc_sandboxes", "7001").contains("revokedBefore"), raw.hget("vnc_sandboxes", "7001"));
        await().atMost(WITHIN_A_SECOND).until(() -> status(replica1, "/vnc/7001/x", held) == 403);
        String fresh = redeem(replica2, grantPath(replica2, "7001", "{\"subject\":\"alice\"}"), held);
        assertEquals(200, status(replica1, "/vnc/7001/", fresh));
    }

    @Test
    void anAdminRevocation_closesTheSandboxsOpenWebSocketsOnBothReplicas() throws Exception
    {
        try (WebSocketBackend desktop = WebSocketBackend.start("desktop"))
        {
            raw.hset("vnc_sandboxes", "7003", desktop.hostPort());
            String cookie = redeem(replica1, grantPath(replica1, "7003", "{\"subject\":\"alice\"}"), null);
            List<CompletableFuture<Integer>> closes = new ArrayList<>();
            for (Gateway replica : List.of(replica1, replica2))
            {
                CompletableFuture<Integer> closed = new CompletableFuture<>();
                HttpClient.newHttpClient().newWebSocketBuilder().header("Cookie", "vnc_session_id=" + cookie)
                    .buildAsync(URI.create("ws://127.0.0.1:" + replica.port() + "/vnc/7003/websockify"), new WebSocket.Listener()
                    {
                        @Override
                        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason)
                        {
                            closed.complete(statusCode);
                            return null;
                        }
                    }).get(10, TimeUnit.SECONDS);
                closes.add(closed);
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> desktop.connections.get() == 2);

            admin(replica1, "POST", "/revoke/7003", null);
            // The replica that took the call closes at once; the other follows its route cache.
            for (CompletableFuture<Integer> closed : closes)
                assertEquals(1008, closed.get(3, TimeUnit.SECONDS));
        }
    }

    @Test
    void theSandboxsPodReplaced_refusesTheOldPodsCookiesOnBothReplicasWithinASecond() throws Exception
    {
        // As the pod watcher writes routes: JSON with the pod's uid as the generation.
        raw.hset("vnc_sandboxes", "7001", "{\"target\":\"" + a.hostPort() + "\",\"generation\":\"uid-1\"}");
        String cookie = redeem(replica1, grantPath(replica1, "7001", "{\"subject\":\"alice\"}"), null);
        assertEquals(200, status(replica1, "/vnc/7001/", cookie));
        assertEquals(200, status(replica2, "/vnc/7001/", cookie));

        raw.hset("vnc_sandboxes", "7001", "{\"target\":\"" + b.hostPort() + "\",\"generation\":\"uid-2\"}");
        await().atMost(WITHIN_A_SECOND).pollInterval(Duration.ofMillis(20)).until(() ->
            status(replica1, "/vnc/7001/", cookie) == 403 && status(replica2, "/vnc/7001/", cookie) == 403);
        b.clearRequests();
        for (Gateway replica : List.of(replica1, replica2))
        {
            assertEquals(403, status(replica, "/vnc/7001/app/ui.js", cookie));
            assertEquals(403, status(replica, "/vnc/websockify", cookie));
        }
        assertEquals(0, b.requestCount(), "the new pod sees nothing of the old session");
        assertEquals(200, status(replica2, "/vnc/7001/", redeem(replica2, grantPath(replica1, "7001", "{\"subject\":\"alice\"}"), null)));
    }

    @Test
    void whileRedisIsDown_aGrantIsRefusedWith503_andLeftUnusedForLater() throws Exception
    {
        // The route is cached by a first redemption, so only the redemption itself needs Redis.
        redeem(replica1, grantPath(replica1, "7001", "{\"subject\":\"alice\"}"), null);
        String link = grantPath(replica1, "7001", "{\"subject\":\"bob\"}");
        raw.close();
        raw = null;
        redis.kill();

        HttpResponse<String> refused = get(replica1, link, null);
        assertEquals(503, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("not used"), refused.body());

        redis.restart();
        await().atMost(Duration.ofSeconds(10)).until(() -> status(replica1, link, null) == 303);
        assertFalse(get(replica2, link, null).statusCode() == 303, "and once only");
    }
}
