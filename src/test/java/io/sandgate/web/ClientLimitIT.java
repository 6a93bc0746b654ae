package io.sandgate.web;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One client cannot hold more than {@code server.max-concurrent-requests-per-client} requests in
 * progress: above it, 429 with {@code Retry-After}, and its place comes back when a request ends.
 * The client is who the gateway can trust it is: behind a trusted proxy its forwarded address, and
 * otherwise its own, whatever {@code X-Forwarded-For} it writes. Established WebSockets and MCP
 * streams never count against requests; MCP streams have their own cap, by the same identity.
 */
@EachIngressFrontEnd
class ClientLimitIT
{
    private static final int LIMIT = 4;
    private static final String HELD = "/vnc/2/held";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private SandboxBackend sandbox;
    private WebSocketBackend webSockets;
    private final List<InputStream> streams = new ArrayList<>();

    @RegisterExtension
    @Order(1)
    final GatewayExtension gateway = new GatewayExtension(this::configure);
    /**
     * Closes the test's event streams as soon as it has run, before the gateway stops (an extension
     * registered after it is called before it): a stream still open would hold the stop for its
     * whole timeout.
     */
    @RegisterExtension
    @Order(2)
    final AfterTestExecutionCallback closeStreamsFirst = context -> closeStreams();

    @BeforeEach
    void start() throws Exception
    {
        sandbox = SandboxBackend.start("slow");
        webSockets = WebSocketBackend.start("ws");
    }

    private void configure(GatewayConfig config)
    {
        config.set("server.max-concurrent-requests-per-client", Integer.toString(LIMIT));
        config.set("log.access", "false");
        config.set("ingress.cookie.secret", "client-limit-it-secret-0123456789abcdef");
        config.set("ingress.static-routes", Map.of("2", sandbox.hostPort(), "3", webSockets.hostPort()));
        // Legacy SSE streams towards a Streamable server open without asking the upstream.
        config.set("mcp.servers", List.of(Map.of("name", "tools", "url", "http://127.0.0.1:9/mcp", "transport", "streamable")));
    }

    @AfterEach
    void stop() throws Exception
    {
        closeStreams();
        webSockets.close();
        sandbox.close();
    }

    private HttpResponse<String> get(String path, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri(path)).timeout(Duration.ofSeconds(10));
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Starts {@code count} requests the sandbox holds until {@link #release}, with the headers given, and waits until all are held. */
    private List<CompletableFuture<HttpResponse<String>>> hold(int count, String... headers)
    {
        int before = sandbox.requestCount();
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri(HELD)).timeout(Duration.ofSeconds(20));
            for (int h = 0; h < headers.length; h += 2)
                request.header(headers[h], headers[h + 1].replace("{i}", Integer.toString(i)));
            held.add(HTTP.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString()));
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> sandbox.requestCount() >= before + count);
        return held;
    }

    /** Lets the sandbox answer the held requests, and checks each got its answer. */
    private void release(List<CompletableFuture<HttpResponse<String>>> held) throws Exception
    {
        sandbox.releaseHeld();
        for (CompletableFuture<HttpResponse<String>> request : held)
            assertEquals(200, request.get(10, TimeUnit.SECONDS).statusCode());
    }

    /** Opens a legacy MCP event stream and reads up to its first event; the stream stays open. */
    private int openMcpStream(String... headers) throws Exception
    {
        return openMcpStream(gateway.internalUri("/mcp/tools/sse"), headers);
    }

    private int openMcpStream(java.net.URI uri, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10));
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        HttpResponse<InputStream> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        streams.add(response.body());
        if (response.statusCode() == 200)
        {
            String line = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8)).readLine();
            assertTrue(line != null && line.startsWith("event: endpoint"), "the stream is open: " + line);
        }
        return response.statusCode();
    }

    /** Closes the event streams the test opened, so that a gateway stops without waiting for them. */
    private void closeStreams() throws IOException
    {
        for (InputStream stream : streams)
            stream.close();
        streams.clear();
    }

    private double refused(String identity)
    {
        MeterRegistry metrics = gateway.sandgate().metrics();
        return metrics.get("sandgate.clients.refused").tags("identity", identity).counter().count();
    }

    @Test
    void requestBeyondTheCap_is429WithRetryAfter_andTheCountFreesAsRequestsEnd() throws Exception
    {
        List<CompletableFuture<HttpResponse<String>>> held = hold(LIMIT);

        HttpResponse<String> refused = get("/healthz");
        assertEquals(429, refused.statusCode());
        assertEquals("1", refused.headers().firstValue("Retry-After").orElse(null));
        assertTrue(refused.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        assertTrue(refused.body().contains("\"error\":\"too_many_requests\"") && refused.body().contains("server.max-concurrent-requests-per-client"),
            refused.body());
        assertEquals(1, refused("address"));

        release(held);
        await().atMost(Duration.ofSeconds(2)).until(() -> get("/healthz").statusCode() == 200);
        assertEquals(200, get("/vnc/2/echo").statusCode(), "every place came back");
    }

    @Test
    void behindATrustedProxy_eachClientCountsByItsForwardedAddress() throws Exception
    {
        gateway.restart(config -> config.set("ingress.trusted-proxies", "127.0.0.1/32"));
        List<CompletableFuture<HttpResponse<String>>> held = hold(LIMIT, "X-Forwarded-For", "198.51.100.7");

        assertEquals(429, get("/healthz", "X-Forwarded-For", "198.51.100.7").statusCode());
        assertEquals(200, get("/healthz", "X-Forwarded-For", "198.51.100.8").statusCode(), "another client behind the same proxy");
        assertEquals(200, get("/healthz").statusCode(), "the proxy's own requests");
        // What the client wrote left of what the proxy appended proves nothing.
        assertEquals(429, get("/healthz", "X-Forwarded-For", "198.51.100.8, 198.51.100.7").statusCode());
        assertEquals(2, refused("address"));

        release(held);
    }

    @Test
    void untrustedPeer_cannotPassForAnotherClientWithXForwardedFor() throws Exception
    {
        List<CompletableFuture<HttpResponse<String>>> held = hold(LIMIT, "X-Forwarded-For", "198.51.100.1{i}");

        assertEquals(429, get("/healthz", "X-Forwarded-For", "198.51.100.99").statusCode(), "all of them are the peer's requests");

        release(held);
    }

    @Test
    void establishedWebSocketsAndMcpStreams_doNotCountAgainstRequests() throws Exception
    {
        WebSocketClient client = new WebSocketClient();
        client.start();
        try
        {
            List<Session> sessions = new ArrayList<>();
            for (int i = 0; i < LIMIT + 2; i++)
                sessions.add(client.connect(new Session.Listener.AutoDemanding() {}, gateway.wsUri("/vnc/3/websockify")).get(10, TimeUnit.SECONDS));
            for (int i = 0; i < LIMIT + 2; i++)
                assertEquals(200, openMcpStream());
            assertTrue(sessions.stream().allMatch(Session::isOpen));

            // Twelve streams open, and still the full count of requests.
            List<CompletableFuture<HttpResponse<String>>> held = hold(LIMIT - 1);
            assertEquals(200, get("/vnc/2/echo").statusCode());
            release(held);
            assertEquals(0, refused("address"));
        }
        finally
        {
            client.stop();
        }
    }

    @Test
    void mcpStreamCap_countsClientsByTheirTrustedAddress() throws Exception
    {
        gateway.restart(config -> config.set("ingress.trusted-proxies", "127.0.0.1/32").set("mcp.max-streams-per-client", "2"));

        assertEquals(200, openMcpStream("X-Forwarded-For", "198.51.100.7"));
        assertEquals(200, openMcpStream("X-Forwarded-For", "198.51.100.7"));
        assertEquals(429, openMcpStream("X-Forwarded-For", "198.51.100.7"));
        assertEquals(200, openMcpStream("X-Forwarded-For", "198.51.100.8"), "another client behind the same proxy");
        assertEquals(1, gateway.sandgate().metrics().get("sandgate.mcp.streams.refused").counter().count());
    }

    @Test
    void ipv6Clients_countByTheirSlash64_orOneByOneWithThePrefixAt128() throws Exception
    {
        gateway.restart(config -> config.set("ingress.trusted-proxies", "127.0.0.1/32").set("mcp.max-streams-per-client", "2"));
        assertEquals(200, openMcpStream("X-Forwarded-For", "2001:db8:0:1::1"));
        assertEquals(200, openMcpStream("X-Forwarded-For", "2001:db8:0:1::2"));
        assertEquals(429, openMcpStream("X-Forwarded-For", "2001:db8:0:1::3"), "one host's /64 is one client");
        assertEquals(200, openMcpStream("X-Forwarded-For", "2001:db8:0:2::1"), "the next /64 is another");

        // The pods of one node of an IPv6 cluster share its /64, one address each.
        closeStreams();
        gateway.restart(config -> config.set("ingress.trusted-proxies", "127.0.0.1/32").set("mcp.max-streams-per-client", "2")
            .set("server.client-ipv6-prefix", "128"));
        for (String address : List.of("2001:db8:0:1::1", "2001:db8:0:1::2", "2001:db8:0:1::3"))
            assertEquals(200, openMcpStream("X-Forwarded-For", address), address);
    }

    /**
     * With an internal listener, its clients (sandboxes and agents, pods with an address each of
     * their node's /64) are counted one address at a time, while the public listener's stay counted
     * by their /64 against address rotation.
     */
    @Test
    void internalListener_countsIpv6ClientsByEachAddress_thePublicOneByTheirSlash64() throws Exception
    {
        gateway.restart(config -> config.set("server.internal-port", "0").set("ingress.trusted-proxies", "127.0.0.1/32")
            .set("mcp.max-streams-per-client", "2"));
        for (String pod : List.of("2001:db8:0:1::1", "2001:db8:0:1::2", "2001:db8:0:1::3"))
        {
            assertEquals(200, openMcpStream("X-Forwarded-For", pod), pod);
            assertEquals(200, openMcpStream("X-Forwarded-For", pod), pod);
        }
        assertEquals(429, openMcpStream("X-Forwarded-For", "2001:db8:0:1::1"), "each pod is held to the cap");

        List<CompletableFuture<HttpResponse<String>>> held = hold(LIMIT, "X-Forwarded-For", "2001:db8:0:9::{i}");
        assertEquals(429, get("/vnc/2/", "X-Forwarded-For", "2001:db8:0:9::ff").statusCode(), "one /64 is one client of the public listener");
        release(held);

        // Where a client of the internal listener can take any address of its /64, it is counted by it.
        closeStreams();
        gateway.restart(config -> config.set("server.internal-port", "0").set("ingress.trusted-proxies", "127.0.0.1/32")
            .set("mcp.max-streams-per-client", "2").set("server.internal-client-ipv6-prefix", "64"));
        assertEquals(200, openMcpStream("X-Forwarded-For", "2001:db8:0:1::1"));
        assertEquals(200, openMcpStream("X-Forwarded-For", "2001:db8:0:1::2"));
        assertEquals(429, openMcpStream("X-Forwarded-For", "2001:db8:0:1::3"));
    }
}
