package io.sandgate.ops;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.Counter;
import io.sandgate.mcp.RawSseClient;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replica's drain end to end ({@link Drain}): a real embedded gateway with bridged WebSockets to a
 * real WebSocket server, a legacy MCP SSE stream through it to a real MCP server, and an HTTP request
 * held in flight by the sandbox. The drain is begun through the admin API, the way SIGTERM begins
 * it ({@code DrainBrowserIT} sends the signal itself). Short settings: a grace of 2 s, a spread of
 * 2 s.
 */
class DrainIT
{
    private static final String TOKEN = "drain-it-admin-token-0123456789";
    private static final Duration GRACE = Duration.ofSeconds(2);
    private static final Duration SPREAD = Duration.ofSeconds(2);
    private static final int SOCKETS = 4;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @AutoClose
    private static SandboxBackend sandbox;
    @AutoClose
    private static WebSocketBackend desktop;
    @AutoClose
    private static McpUpstream upstream;
    @AutoClose("stop")
    private static WebSocketClient client;

    /** Each test drains, and so stops, a gateway of its own. */
    @RegisterExtension
    final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .set("admin.token", TOKEN)
        .set("ingress.static-routes", Map.of("1", sandbox.hostPort(), "2", desktop.hostPort()))
        .set("mcp.servers", List.of(Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable")))
        .set("server.drain.grace", GRACE.toMillis() + "ms")
        .set("server.drain.spread", SPREAD.toMillis() + "ms")
        .set("server.drain.timeout", "20s"));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox = SandboxBackend.start("http");
        desktop = WebSocketBackend.start("desktop");
        upstream = McpUpstream.start();
        client = new WebSocketClient();
        client.start();
    }

    @Test
    void adminDrain_notReadyAtOnce_servesThroughTheGrace_finishesWhatIsInFlight_closesWebSocketsWith1012SpreadOut_thenStops() throws Exception
    {
        RunningGateway gateway = gateways.startAnother();
        List<Desktop> desktops = new ArrayList<>();
        for (int i = 0; i < SOCKETS; i++)
            desktops.add(Desktop.open(gateway));
        RawSseClient.Stream stream = new RawSseClient("stream").stream(gateway, "", null);
        assertEquals("endpoint", stream.next().name());
        CompletableFuture<HttpResponse<String>> held = HTTP.sendAsync(get(gateway, "/vnc/1/held"), HttpResponse.BodyHandlers.ofString());
        await().until(() -> sandbox.requestLog().stream().anyMatch(r -> r.pathAndQuery().equals("/held")));
        Counter closedWebSockets = gateway.sandgate().metrics().counter("sandgate.drain.closed", "kind", "websocket");
        Counter endedStreams = gateway.sandgate().metrics().counter("sandgate.drain.closed", "kind", "mcp_stream");

        URI health = gateway.uri("/healthz");
        long began = System.nanoTime();
        JsonNode drain = adminDrain(gateway);

        assertTrue(drain.path("begun").asBoolean(), drain::toPrettyString);
        assertEquals(Map.of("websocket", SOCKETS, "mcp_stream", 1), JSON.convertValue(drain.path("open"), Map.class), drain::toPrettyString);
        HttpResponse<String> ready = HTTP.send(get(gateway, "/readyz"), HttpResponse.BodyHandlers.ofString());
        assertEquals(503, ready.statusCode(), ready.body());
        assertEquals("draining", JSON.readTree(ready.body()).path("status").asText());
        // The grace: the balancer has not noticed yet, and what it still sends is served.
        assertEquals(200, HTTP.send(get(gateway, "/healthz"), HttpResponse.BodyHandlers.discarding()).statusCode());
        assertEquals(200, HTTP.send(get(gateway, "/vnc/1/page"), HttpResponse.BodyHandlers.discarding()).statusCode());
        assertTrue(System.nanoTime() - began < GRACE.toNanos(), "the checks above ran within the grace, or they proved nothing");
        desktops.forEach(d -> assertFalse(d.closed.isDone(), "nothing is closed during the grace"));

        // Once the first socket closes the grace is over and new requests are refused; the one in flight still finishes.
        await().atMost(GRACE.plusSeconds(5)).until(() -> desktops.stream().anyMatch(d -> d.closed.isDone()));
        assertEquals(503, HTTP.send(get(gateway, "/vnc/1/page"), HttpResponse.BodyHandlers.discarding()).statusCode());
        sandbox.releaseHeld();
        HttpResponse<String> finished = held.get(5, TimeUnit.SECONDS);
        assertEquals(200, finished.statusCode());
        assertEquals("held", finished.body());

        await().atMost(SPREAD.plusSeconds(5)).until(() -> desktops.stream().allMatch(d -> d.closed.isDone()));
        List<Long> closedAt = new ArrayList<>();
        for (Desktop d : desktops)
        {
            assertEquals(1012, d.closed.get().code(), () -> "close " + d.closed.join());
            closedAt.add(d.closed.get().nanos() - began);
        }
        closedAt.sort(null);
        assertTrue(closedAt.get(0) >= GRACE.toNanos() * 9 / 10, () -> "the first close came after the grace: " + millis(closedAt));
        // Four closes over 2 s: 0, 0.5, 1 and 1.5 s after the grace, not in one burst.
        assertTrue(closedAt.get(SOCKETS - 1) - closedAt.get(0) >= SPREAD.toNanos() / 2, () -> "closes spread over the spread: " + millis(closedAt));
        assertNull(nextEndOrNull(stream), "the MCP stream ended, for its client to resume elsewhere");

        // Nothing is left: the drain finishes and the server stops.
        assertEquals(Drain.Outcome.DRAINED, gateway.sandgate().drain().finished().get(10, TimeUnit.SECONDS));
        await().atMost(Duration.ofSeconds(10)).until(() -> refused(health));
        assertEquals(SOCKETS, closedWebSockets.count());
        assertEquals(1, endedStreams.count());
        assertTrue(System.nanoTime() - began < Duration.ofSeconds(15).toNanos(), "stopped long before the drain's timeout");
    }

    /** A client, a sandbox's page among them, cannot make a replica leave: the admin token is the only way in. */
    @Test
    void drain_withoutTheAdminToken_isRefused_andTheReplicaStaysReady() throws Exception
    {
        RunningGateway gateway = gateways.startAnother();
        URI drain = gateway.internalUri("/admin/drain");

        assertEquals(401, HTTP.send(HttpRequest.newBuilder(drain).POST(HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.discarding()).statusCode());
        assertEquals(403, HTTP.send(HttpRequest.newBuilder(drain).header("Authorization", "Bearer " + TOKEN + "x")
            .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding()).statusCode());
        // A page of a path-mode sandbox shares the gateway's origin; one elsewhere that holds the token is still not let in.
        assertEquals(403, HTTP.send(HttpRequest.newBuilder(drain).header("Authorization", "Bearer " + TOKEN).header("Origin", "http://evil.example")
            .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding()).statusCode());
        assertEquals(405, HTTP.send(HttpRequest.newBuilder(drain).header("Authorization", "Bearer " + TOKEN)
            .DELETE().build(), HttpResponse.BodyHandlers.discarding()).statusCode());

        assertFalse(gateway.sandgate().drain().draining());
        assertEquals(200, HTTP.send(get(gateway, "/readyz"), HttpResponse.BodyHandlers.discarding()).statusCode());
        // With the internal listener apart, the public one, where sandboxes' pages are, has no admin API at all.
        RunningGateway split = gateways.startAnother(config -> config.set("server.internal-port", "0"));
        int status = HTTP.send(HttpRequest.newBuilder(split.uri("/admin/drain")).header("Authorization", "Bearer " + TOKEN)
            .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        assertTrue(status == 404 || status == 405, "no admin resource on the public listener: " + status);
        assertFalse(split.sandgate().drain().draining());
    }

    /** Asking again, through the API or with SIGTERM, joins the drain under way: one timeline, each socket closed once. */
    @Test
    void drainStartedTwice_isOneDrain() throws Exception
    {
        RunningGateway gateway = gateways.startAnother(config -> config.set("server.drain.grace", "500ms").set("server.drain.spread", "500ms"));
        List<Desktop> desktops = List.of(Desktop.open(gateway), Desktop.open(gateway));
        Counter closedWebSockets = gateway.sandgate().metrics().counter("sandgate.drain.closed", "kind", "websocket");

        JsonNode first = adminDrain(gateway);
        JsonNode second = adminDrain(gateway);
        boolean signalled = gateway.sandgate().drain().begin(Drain.Cause.SIGNAL);

        assertTrue(first.path("begun").asBoolean(), first::toPrettyString);
        assertFalse(second.path("begun").asBoolean(), second::toPrettyString);
        assertFalse(signalled);
        assertEquals(first.path("since").asText(), second.path("since").asText());
        assertEquals("admin", second.path("cause").asText());
        assertEquals(Drain.Outcome.DRAINED, gateway.sandgate().drain().finished().get(10, TimeUnit.SECONDS));
        for (Desktop d : desktops)
            assertEquals(1012, d.closed.get(5, TimeUnit.SECONDS).code());
        assertEquals(2, closedWebSockets.count());
    }

    private static JsonNode adminDrain(Gateway gateway) throws Exception
    {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.internalUri("/admin/drain"))
            .header("Authorization", "Bearer " + TOKEN).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }

    private static HttpRequest get(Gateway gateway, String path)
    {
        return HttpRequest.newBuilder(gateway.uri(path)).timeout(Duration.ofSeconds(15)).build();
    }

    /** Null once the stream has ended, events before its end skipped; fails if it goes on past 15 s. */
    private static String nextEndOrNull(RawSseClient.Stream stream) throws InterruptedException
    {
        RawSseClient.Event event = stream.next();
        while (event.name() != null)
            event = stream.next();
        return event.data();
    }

    /** Whether nothing listens at {@code uri} any more. */
    private static boolean refused(URI uri)
    {
        try
        {
            HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding());
            return false;
        }
        catch (ConnectException x)
        {
            return true;
        }
        catch (IOException | InterruptedException x)
        {
            return false;
        }
    }

    private static List<Long> millis(List<Long> nanos)
    {
        return nanos.stream().map(n -> n / 1_000_000).toList();
    }

    /** A browser's desktop socket through the gateway, and how and when it closed. */
    public static final class Desktop implements Session.Listener.AutoDemanding
    {
        record Close(int code, String reason, long nanos)
        {
        }

        final CompletableFuture<Close> closed = new CompletableFuture<>();
        final CompletableFuture<String> greeted = new CompletableFuture<>();

        static Desktop open(Gateway gateway) throws Exception
        {
            Desktop desktop = new Desktop();
            ClientUpgradeRequest request = new ClientUpgradeRequest();
            request.setHeader("Origin", "http://127.0.0.1:" + gateway.port());
            client.connect(desktop, gateway.wsUri("/vnc/2/websockify"), request).get(5, TimeUnit.SECONDS);
            // The sandbox greets each connection: the tunnel carries bytes before the drain.
            desktop.greeted.get(5, TimeUnit.SECONDS);
            return desktop;
        }

        @Override
        public void onWebSocketText(String message)
        {
            greeted.complete(message);
        }

        @Override
        public void onWebSocketClose(int statusCode, String reason)
        {
            closed.complete(new Close(statusCode, reason, System.nanoTime()));
        }
    }
}
