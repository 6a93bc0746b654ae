package io.sandgate.ingress.lifecycle;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.sandgate.ingress.websocket.WebSocketBridgeIT;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisReplicas;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxManagerDouble;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Paused sandboxes woken by their traffic, across two replicas sharing a real {@code redis-server}:
 * the sandbox manager (a test double on a real HTTP server, as the platform's would be) is asked
 * once per sandbox whichever replica the requests reach, no request holds a thread while it waits
 * (16 server threads for 25 waiting requests per replica), and every request is answered once the
 * route turns running. A manager that never resumes, refuses, or does not know the sandbox gets
 * the clients a prompt, clear answer, and a flood beyond the bounds is refused at once.
 */
@EachIngressFrontEnd
class WakeIT extends RedisReplicas
{
    private static final String ROUTES = "vnc_sandboxes";
    private static final String PAUSED = "{\"state\":\"paused\"}";
    private static final String TOKEN = "wake-it-manager-token-0123456789";
    private static final int MAX_WAITING = 32;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .followRedirects(HttpClient.Redirect.NEVER).build();

    private final SandboxManagerDouble manager = SandboxManagerDouble.start();
    private WebSocketBackend webSockets;
    private WebSocketClient browsers;

    @Override
    protected void configure(GatewayConfig config)
    {
        config.set("server.max-threads", "16")
            .set("log.access", "false")
            .set("ingress.wake.url", manager.url().toString())
            .set("ingress.wake.token", TOKEN)
            .set("ingress.wake.timeout", "6s")
            .set("ingress.wake.max-waiting", Integer.toString(MAX_WAITING));
    }

    @Override
    protected void beforeReplicas() throws Exception
    {
        webSockets = WebSocketBackend.start("desktop");
        raw.hset(ROUTES, "9001", PAUSED);
        raw.hset(ROUTES, "9002", "{\"state\":\"paused\",\"target\":\"127.0.0.1:1\"}");
        raw.hset(ROUTES, "9003", b.hostPort());
        org.eclipse.jetty.client.HttpClient http = new org.eclipse.jetty.client.HttpClient();
        http.setMaxConnectionsPerDestination(64);
        browsers = new WebSocketClient(http);
        browsers.start();
    }

    @AfterEach
    void stopOwnFixtures() throws Exception
    {
        browsers.stop();
        webSockets.close();
        manager.close();
    }

    /** What the platform does once the sandbox runs: its pod watcher writes the route, from a client of its own. */
    private void markRunning(String sandboxId, String target)
    {
        try (RawRedis watcher = RawRedis.connect(redis.port()))
        {
            watcher.hset(ROUTES, sandboxId, target);
        }
        catch (Exception x)
        {
            throw new IllegalStateException(x);
        }
    }

    private static CompletableFuture<HttpResponse<String>> send(Gateway gateway, String path, String accept)
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve(path)).timeout(Duration.ofSeconds(20));
        if (accept != null)
            request.header("Accept", accept);
        return HTTP.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(Gateway gateway, String path) throws Exception
    {
        return send(gateway, path, null).get(20, TimeUnit.SECONDS);
    }

    @Test
    void fiftyRequestsOverTwoReplicas_wakeEachSandboxOnce_holdNoThread_andAllSucceed() throws Exception
    {
        manager.resumingOnRelease(id -> markRunning(id, id.equals("9001") ? a.hostPort() : webSockets.hostPort()));
        List<CompletableFuture<HttpResponse<String>>> requests = new ArrayList<>();
        List<CompletableFuture<Session>> upgrades = new ArrayList<>();
        List<WebSocketBridgeIT.Browser> desktops = new ArrayList<>();
        // The first request on each replica reads the paused routes into its cache: the WAR path reads
        // a route it does not have on the request's thread, at most half the pool at once (503 beyond).
        for (RunningGateway replica : List.of(replica1, replica2))
        {
            requests.add(send(replica, "/vnc/9001/echo?first", null));
            await().atMost(Duration.ofSeconds(5)).until(() -> waiting(replica) == 1);
        }
        for (RunningGateway replica : List.of(replica1, replica2))
        {
            for (int i = 1; i < 20; i++)
                requests.add(send(replica, "/vnc/9001/echo?n=" + i, null));
            for (int i = 0; i < 5; i++)
            {
                WebSocketBridgeIT.Browser desktop = new WebSocketBridgeIT.Browser();
                desktops.add(desktop);
                upgrades.add(browsers.connect(desktop, URI.create("ws://127.0.0.1:" + replica.port() + "/vnc/9002/websockify")));
            }
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> manager.calls() == 2);

        // While the sandboxes start, 25 requests wait on each replica of 16 threads, and it serves the rest at once.
        for (RunningGateway replica : List.of(replica1, replica2))
        {
            assertEquals(200, send(replica, "/healthz", null).get(1, TimeUnit.SECONDS).statusCode());
            HttpResponse<String> running = send(replica, "/vnc/9003/echo", null).get(1, TimeUnit.SECONDS);
            assertEquals(200, running.statusCode());
            assertTrue(running.body().startsWith("backend=b"), running.body());
        }
        assertTrue(requests.stream().noneMatch(CompletableFuture::isDone), () -> "answered before its sandbox ran: "
            + requests.stream().filter(CompletableFuture::isDone).map(r -> r.join().statusCode() + " " + r.join().body()).toList());
        // The platform resumes the sandboxes only now, however long the checks above took.
        manager.release();

        for (CompletableFuture<HttpResponse<String>> request : requests)
        {
            HttpResponse<String> answer = request.get(10, TimeUnit.SECONDS);
            assertEquals(200, answer.statusCode(), answer.body());
            assertTrue(answer.body().startsWith("backend=a"), answer.body());
        }
        for (int i = 0; i < upgrades.size(); i++)
        {
            Session session = upgrades.get(i).get(10, TimeUnit.SECONDS);
            session.sendText("hello " + i, org.eclipse.jetty.websocket.api.Callback.NOOP);
            WebSocketBridgeIT.Browser desktop = desktops.get(i);
            String expected = "echo:hello " + i;
            await().atMost(Duration.ofSeconds(5)).until(() -> desktop.texts.contains(expected));
            session.close();
        }
        assertEquals(1, manager.calls("9001"), "the manager was asked once for the HTTP sandbox");
        assertEquals(1, manager.calls("9002"), "the manager was asked once for the desktop");
        assertTrue(manager.reasons.stream().allMatch("traffic"::equals), manager.reasons.toString());
        assertTrue(manager.authorizations.stream().allMatch(("Bearer " + TOKEN)::equals), "the token went with every call");
        double woken = wakes(replica1, "ok") + wakes(replica2, "ok");
        assertTrue(woken >= 2, "wakes counted: " + woken);
    }

    @Test
    void aManagerThatNeverResumes_requestsGet503WithRetryAfterAtTheTimeout_aBrowserTheStartingPage() throws Exception
    {
        manager.answering(202);
        // Replicas of their own with a shorter timeout than the others' (whose checks must never race
        // it): this test waits it out, twice over in a class run once per ingress front-end.
        RunningGateway first = gateways.startAnother(config -> config.set("ingress.wake.timeout", "3s"));
        RunningGateway second = gateways.startAnother(config -> config.set("ingress.wake.timeout", "3s"));
        long start = System.nanoTime();
        CompletableFuture<HttpResponse<String>> api = send(first, "/vnc/9001/data.json", "application/json");
        CompletableFuture<HttpResponse<String>> page = send(second, "/vnc/9001/vnc.html", "text/html,application/xhtml+xml");

        HttpResponse<String> json = api.get(15, TimeUnit.SECONDS);
        assertTrue(Duration.ofNanos(System.nanoTime() - start).compareTo(Duration.ofSeconds(2)) > 0, "answered before the timeout");
        assertEquals(503, json.statusCode());
        assertTrue(json.headers().firstValue("Retry-After").isPresent());
        assertTrue(json.body().contains("\"error\":\"starting\""), json.body());

        HttpResponse<String> html = page.get(15, TimeUnit.SECONDS);
        assertEquals(503, html.statusCode());
        String refresh = html.headers().firstValue("Retry-After").orElseThrow();
        assertTrue(html.headers().firstValue("Content-Type").orElse("").startsWith("text/html"));
        assertTrue(html.body().contains("<meta http-equiv=\"refresh\" content=\"" + refresh + "\">"), html.body());
        // Nothing about this or another sandbox's whereabouts.
        for (String leak : List.of("127.0.0.1", "9003", b.hostPort(), "redis"))
            assertFalse(html.body().contains(leak), leak + " in " + html.body());
        assertEquals(1, manager.calls("9001"));
        assertEquals(2, wakes(first, "timed_out") + wakes(second, "timed_out"), "each replica's wait timed out");
    }

    @Test
    void aFloodBeyondTheBound_isRefusedAtOnce_whileThoseWithinItWait() throws Exception
    {
        manager.answering(202);
        List<CompletableFuture<HttpResponse<String>>> within = new ArrayList<>();
        // The first reads the paused route into the replica's cache, as in the test above.
        within.add(send(replica1, "/vnc/9001/echo?n=0", null));
        await().atMost(Duration.ofSeconds(5)).until(() -> waiting(replica1) == 1);
        for (int i = 1; i < MAX_WAITING; i++)
            within.add(send(replica1, "/vnc/9001/echo?n=" + i, null));
        await().atMost(Duration.ofSeconds(5)).until(() -> waiting(replica1) == MAX_WAITING);
        for (int i = 0; i < 8; i++)
        {
            HttpResponse<String> refused = send(replica1, "/vnc/9001/echo?flood=" + i, null).get(2, TimeUnit.SECONDS);
            assertEquals(503, refused.statusCode(), refused.body());
            assertTrue(refused.headers().firstValue("Retry-After").isPresent());
        }
        assertTrue(within.stream().noneMatch(CompletableFuture::isDone), "the flood ended the requests within the bound");
        markRunning("9001", a.hostPort());
        for (CompletableFuture<HttpResponse<String>> request : within)
            assertEquals(200, request.get(10, TimeUnit.SECONDS).statusCode());
        assertEquals(1, manager.calls("9001"));
    }

    @Test
    void aManagerThatRefuses_getsA503AtOnce_andTheNextRequestAsksAgain() throws Exception
    {
        manager.answering(409);
        HttpResponse<String> refused = send(replica1, "/vnc/9001/echo", null).get(3, TimeUnit.SECONDS);
        assertEquals(503, refused.statusCode());
        assertTrue(refused.headers().firstValue("Retry-After").isPresent());
        assertFalse(refused.body().contains("409"), "the manager's answer stays between it and the gateway: " + refused.body());
        assertEquals(1, manager.calls("9001"));
        assertEquals(1, wakes(replica1, "failed"));

        manager.resumingAfter(Duration.ZERO, id -> markRunning(id, a.hostPort()));
        assertEquals(200, get(replica2, "/vnc/9001/echo").statusCode(), "the claim was given back");
        assertEquals(2, manager.calls("9001"));
    }

    @Test
    void onMiss_aSandboxWithoutARouteIsWoken_oneTheManagerDoesNotKnowIs404() throws Exception
    {
        try (RunningGateway onMiss = gateways.startAnother(config -> config.set("ingress.wake.on-miss", "true")))
        {
            manager.resumingAfter(Duration.ofMillis(500), id -> markRunning(id, a.hostPort()));
            HttpResponse<String> woken = get(onMiss, "/vnc/9100/echo");
            assertEquals(200, woken.statusCode(), woken.body());
            assertEquals(1, manager.calls("9100"));

            manager.answering(404);
            HttpResponse<String> unknown = get(onMiss, "/vnc/9101/echo");
            assertEquals(404, unknown.statusCode(), unknown.body());
            assertEquals(1, manager.calls("9101"));
        }
        // Off (the default), an id without a route is 404 and the manager is not asked.
        assertEquals(404, get(replica1, "/vnc/9102/echo").statusCode());
        assertEquals(0, manager.calls("9102"));
    }

    /** In host mode the sandbox's own host wakes it the same way, and its request goes on to the new target. */
    @Test
    void hostMode_aPausedSandboxsOwnHost_wakesIt() throws Exception
    {
        manager.resumingAfter(Duration.ofMillis(300), id -> markRunning(id, a.hostPort()));
        try (RunningGateway hosts = gateways.startAnother(config -> config.set("ingress.host-pattern", "{id}.sbx.localhost")))
        {
            RawHttp.Response answer = RawHttp.get(hosts.port(), "9001.sbx.localhost:" + hosts.port(), "/echo");
            assertEquals(200, answer.status(), answer.body());
            assertTrue(answer.body().startsWith("backend=a"), answer.body());
        }
        assertEquals(1, manager.calls("9001"));
    }

    /** In signed access, only a client that may reach the sandbox can make the platform resume it. */
    @Test
    void signedAccess_aClientWithoutAccess_cannotWakeAPausedSandbox() throws Exception
    {
        manager.resumingAfter(Duration.ZERO, id -> markRunning(id, a.hostPort()));
        try (RunningGateway signed = gateways.startAnother(config -> config.set("ingress.access", "signed")
            .set("ingress.cookie.secret", "wake-it-secret-0123456789abcdef0")))
        {
            for (String path : List.of("/vnc/9001/", "/vnc/9001/echo", "/vnc/9001/?grant=forged.token"))
                assertEquals(403, get(signed, path).statusCode(), path);
            HttpRequest forged = HttpRequest.newBuilder(signed.uri().resolve("/vnc/9001/echo"))
                .header("Cookie", "vnc_session_id=9001.forged").timeout(Duration.ofSeconds(10)).build();
            assertEquals(403, HTTP.send(forged, HttpResponse.BodyHandlers.ofString()).statusCode());
        }
        assertEquals(0, manager.calls(), "nobody was asked to resume anything");
    }

    private static double wakes(RunningGateway replica, String outcome)
    {
        return replica.sandgate().metrics().get("sandgate.sandbox.wakes").tag("outcome", outcome).counter().count();
    }

    private static double waiting(RunningGateway replica)
    {
        return replica.sandgate().metrics().get("sandgate.sandbox.wake.waiting").gauge().value();
    }
}
