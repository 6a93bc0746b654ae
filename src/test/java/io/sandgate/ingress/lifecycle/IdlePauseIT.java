package io.sandgate.ingress.lifecycle;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.sandgate.ingress.websocket.WebSocketBridgeIT;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisReplicas;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxManagerDouble;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Idle sandboxes paused by the lifecycle leader, over two replicas sharing a real
 * {@code redis-server} and a sandbox manager (a test double on a real HTTP server): idle is judged
 * by the latest traffic on any replica, a sandbox is asked once per idle spell whichever replica
 * leads, and an open WebSocket keeps its sandbox running unless
 * {@code ingress.idle.count-open-websockets} is off, when only its data counts: the gateway's own
 * pings (every 200 ms here) and their pongs never do.
 */
class IdlePauseIT extends RedisReplicas
{
    private static final String ROUTES = "vnc_sandboxes";
    /**
     * Short for a test, not so short that a loaded machine makes busy sandboxes look idle: the
     * replicas, their traffic and the test share one JVM here, and a stall of it longer than this
     * (CI runs saw every sandbox paused, the busy ones included, at 3 s and at 5 s) reads as
     * silence on every sandbox at once.
     */
    private static final Duration IDLE_AFTER = Duration.ofSeconds(8);
    private static final String IDLE = "9001";
    private static final String ACTIVE_DESKTOP = "9002";
    private static final String BUSY_ELSEWHERE = "9003";
    private static final String SILENT_DESKTOP = "9004";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** Marks a test run with {@code ingress.idle.count-open-websockets: false}. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    private @interface OpenWebSocketsNotCounted
    {
    }

    private final boolean countOpenWebSockets;
    private final SandboxManagerDouble manager = SandboxManagerDouble.start();
    /** Threads enough that one slow request on a loaded machine holds up no other traffic (which would make its sandbox look idle). */
    private final ScheduledExecutorService traffic = Executors.newScheduledThreadPool(4);
    private WebSocketBackend desktops;
    private WebSocketClient browsers;

    IdlePauseIT(TestInfo test)
    {
        this.countOpenWebSockets = test.getTestMethod().map(m -> !m.isAnnotationPresent(OpenWebSocketsNotCounted.class)).orElse(true);
    }

    @Override
    protected void configure(GatewayConfig config)
    {
        config.set("log.access", "false")
            .set("ingress.idle.after", IDLE_AFTER.toMillis() + "ms")
            .set("ingress.idle.url", manager.url().toString())
            .set("ingress.idle.count-open-websockets", Boolean.toString(countOpenWebSockets))
            .set("ingress.activity.flush", "250ms")
            .set("ingress.websocket.ping-interval", "200ms");
    }

    @Override
    protected void beforeReplicas() throws Exception
    {
        desktops = WebSocketBackend.start("desktop");
        raw.hset(ROUTES, IDLE, a.hostPort());
        raw.hset(ROUTES, ACTIVE_DESKTOP, desktops.hostPort());
        raw.hset(ROUTES, BUSY_ELSEWHERE, b.hostPort());
        raw.hset(ROUTES, SILENT_DESKTOP, desktops.hostPort());
        browsers = new WebSocketClient();
        browsers.start();
    }

    @AfterEach
    void stopOwnFixtures() throws Exception
    {
        traffic.shutdownNow();
        browsers.stop();
        desktops.close();
        manager.close();
    }

    @Test
    void anIdleSandboxIsPausedOnce_oneWithAnOpenWebSocketNever_evenWhenTheManagerLeavesItsRouteRunning() throws Exception
    {
        // The manager accepts and leaves the route running, as a platform that pauses without marking routes would.
        manager.answering(202);
        traffic.scheduleAtFixedRate(() -> get(replica1, "/vnc/" + BUSY_ELSEWHERE + "/echo", new AtomicInteger()), 0, 300, TimeUnit.MILLISECONDS);
        openActiveDesktop(replica2);
        openDesktop(replica1, SILENT_DESKTOP);

        await().atMost(IDLE_AFTER.multipliedBy(3)).until(() -> manager.calls(IDLE) == 1);
        // Every pass (each flush here) finds it idle and its route running: the claim alone keeps it from being asked again.
        await().during(IDLE_AFTER).atMost(IDLE_AFTER.multipliedBy(2)).untilAsserted(() -> assertEquals(Map.of(IDLE, 1), manager.callsBySandbox()));
        assertEquals(List.of("idle"), manager.reasons);
        assertEquals(1, pauses(replica1, "ok") + pauses(replica2, "ok"));
        assertEquals(0, manager.calls(ACTIVE_DESKTOP), "the desktop passing data was paused");
        assertEquals(0, manager.calls(SILENT_DESKTOP), "the desktop with an open WebSocket was paused");

        // One replica counts the sandboxes by state; the other says it does not know.
        double running1 = sandboxes(replica1, "running");
        double running2 = sandboxes(replica2, "running");
        assertTrue(Double.isNaN(running1) != Double.isNaN(running2), running1 + " and " + running2);
        assertEquals(4.0, Double.isNaN(running1) ? running2 : running1);
    }

    @Test
    @OpenWebSocketsNotCounted
    void notCountingOpenWebSockets_aSilentOneIsPaused_whileDataAndRequestsOnEitherReplicaKeepTheirSandboxesRunning() throws Exception
    {
        // As the platform does: the pause done, the route reads paused.
        manager.resumingAfter(Duration.ZERO, id -> markPaused(id));
        RunningGateway leader = await().atMost(Duration.ofSeconds(5))
            .until(() -> List.of(replica1, replica2).stream().filter(r -> !Double.isNaN(sandboxes(r, "running"))).findFirst().orElse(null), r -> r != null);
        RunningGateway other = leader == replica1 ? replica2 : replica1;
        // Requests reach only the replica that does not lead: the leader learns of them through the store.
        AtomicInteger answered = new AtomicInteger();
        traffic.scheduleAtFixedRate(() -> get(other, "/vnc/" + BUSY_ELSEWHERE + "/echo", answered), 0, 300, TimeUnit.MILLISECONDS);
        openActiveDesktop(leader);
        openDesktop(other, SILENT_DESKTOP);

        await().atMost(IDLE_AFTER.multipliedBy(3)).until(() -> manager.calls(IDLE) == 1 && manager.calls(SILENT_DESKTOP) == 1);
        await().during(IDLE_AFTER).atMost(IDLE_AFTER.multipliedBy(2))
            .untilAsserted(() -> assertEquals(Map.of(IDLE, 1, SILENT_DESKTOP, 1), manager.callsBySandbox()));
        assertEquals(0, manager.calls(ACTIVE_DESKTOP), "the desktop passing data was paused");
        assertEquals(0, manager.calls(BUSY_ELSEWHERE), "the sandbox busy on the other replica was paused");
        assertTrue(answered.get() > 10, answered + " requests answered");
        assertEquals(List.of("idle", "idle"), manager.reasons);
        await().atMost(Duration.ofSeconds(3)).until(() -> sandboxes(leader, "paused") == 2.0 && sandboxes(leader, "running") == 2.0);
    }

    /** A desktop whose browser sends a message every 200 ms, which the sandbox echoes: data both ways. */
    private void openActiveDesktop(RunningGateway replica) throws Exception
    {
        WebSocketBridgeIT.Browser desktop = openDesktop(replica, ACTIVE_DESKTOP);
        AtomicInteger sent = new AtomicInteger();
        traffic.scheduleAtFixedRate(() -> desktop.session.sendText("frame " + sent.incrementAndGet(), Callback.NOOP), 0, 200, TimeUnit.MILLISECONDS);
        await().atMost(Duration.ofSeconds(5)).until(() -> desktop.texts.contains("echo:frame 1"));
    }

    private WebSocketBridgeIT.Browser openDesktop(RunningGateway replica, String sandboxId) throws Exception
    {
        WebSocketBridgeIT.Browser desktop = new WebSocketBridgeIT.Browser();
        browsers.connect(desktop, URI.create("ws://127.0.0.1:" + replica.port() + "/vnc/" + sandboxId + "/websockify")).get(5, TimeUnit.SECONDS);
        return desktop;
    }

    private static void get(RunningGateway replica, String path, AtomicInteger answered)
    {
        try
        {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(replica.uri(path)).timeout(Duration.ofSeconds(2)).build(),
                HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() == 200)
                answered.incrementAndGet();
        }
        catch (Exception x)
        {
            // Counted as not answered.
        }
    }

    private void markPaused(String sandboxId)
    {
        try (RawRedis watcher = RawRedis.connect(redis.port()))
        {
            watcher.hset(ROUTES, sandboxId, "{\"state\":\"paused\"}");
        }
        catch (Exception x)
        {
            throw new IllegalStateException(x);
        }
    }

    private static double pauses(RunningGateway replica, String outcome)
    {
        return replica.sandgate().metrics().get("sandgate.sandbox.pauses").tag("outcome", outcome).counter().count();
    }

    private static double sandboxes(RunningGateway replica, String state)
    {
        return replica.sandgate().metrics().get("sandgate.sandboxes").tag("state", state).gauge().value();
    }
}
