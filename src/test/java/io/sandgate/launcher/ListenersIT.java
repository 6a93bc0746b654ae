package io.sandgate.launcher;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The public listener serves only what browsers and sandboxes may reach (ingress and health);
 * MCP, egress (CONNECT included), admin and metrics are on the internal one; a switched-off face
 * is not served anywhere.
 */
@EachIngressFrontEnd
class ListenersIT
{
    private static final String TOKEN = "listeners-admin-token-0123456789";
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).followRedirects(HttpClient.Redirect.NEVER).build();
    private static SandboxBackend sandbox;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("server.internal-port", "0")
        .set("admin.token", TOKEN)
        .set("ingress.static-routes", Map.of("7", sandbox.hostPort()))
        .set("mcp.servers", List.of(Map.of("name", "tools", "url", "http://127.0.0.1:1/mcp", "transport", "streamable"))));

    @BeforeAll
    static void start()
    {
        sandbox = SandboxBackend.start("s7");
    }

    @AfterAll
    static void stop()
    {
        sandbox.close();
    }

    @Test
    void publicPort_servesIngressAndHealth_only() throws Exception
    {
        assertTrue(gateway.internalPort() != gateway.port());
        assertEquals(200, get(gateway.uri("/vnc/7/status")).statusCode());
        assertEquals(200, get(gateway.uri("/healthz")).statusCode());
        assertEquals(404, get(gateway.uri("/metrics")).statusCode());
        assertEquals(404, get(gateway.uri("/admin/routes"), "Authorization", "Bearer " + TOKEN).statusCode());
        assertNotServed(post(gateway.uri("/mcp/tools/mcp")));
        assertEquals(404, get(gateway.uri("/egress/api.example/v1")).statusCode());
        assertFalse(connect(gateway.port()).startsWith("HTTP/1.1 200"), "CONNECT must not be served on the public port");
    }

    /**
     * A kept-alive connection waiting for its next request is closed after {@code server.idle-timeout},
     * on both listeners (its default, above a load balancer's, is {@code ConfigLoaderTest}'s).
     */
    @Test
    void idleConnections_areClosedAfterServerIdleTimeout_onBothListeners() throws Exception
    {
        try (RunningGateway impatient = gateway.startAnother(config -> config.set("server.idle-timeout", "300ms")))
        {
            for (int port : new int[] {impatient.port(), impatient.internalPort()})
            {
                // Jetty's default (30 s) would outlast the read's timeout (10 s), and fail it.
                try (RawHttp.Kept kept = new RawHttp.Kept(port, "127.0.0.1"))
                {
                    assertEquals(200, kept.get("/healthz").status());
                    assertTrue(kept.closedByPeer(), "the gateway closes the idle connection");
                }
            }
        }
    }

    @Test
    void internalPort_servesMcpEgressAdminAndMetrics_butNoIngress() throws Exception
    {
        assertEquals(200, get(gateway.internalUri("/metrics")).statusCode());
        assertEquals(200, get(gateway.internalUri("/admin/routes"), "Authorization", "Bearer " + TOKEN).statusCode());
        assertEquals(200, get(gateway.internalUri("/healthz")).statusCode());
        // Reaches the MCP face, which finds no server of that name (not the container's 404 page).
        HttpResponse<String> mcp = post(gateway.internalUri("/mcp/nope/mcp"));
        assertEquals(404, mcp.statusCode());
        assertTrue(mcp.body().contains("no MCP server named nope"), mcp.body());
        // Reaches the egress face, which has no route for this host.
        HttpResponse<String> egress = get(gateway.internalUri("/egress/api.example/v1"));
        assertEquals(403, egress.statusCode());
        assertTrue(egress.body().contains("no egress route"), egress.body());
        assertTrue(connect(gateway.internalPort()).startsWith("HTTP/1.1 403"), "CONNECT is planned by egress on the internal port");
        assertEquals(404, get(gateway.internalUri("/vnc/7/status")).statusCode());
    }

    @Test
    void switchedOffFaces_areNotServed() throws Exception
    {
        try (var off = gateway.startAnother(config -> config
            .set("ingress.enabled", "false")
            .set("mcp.enabled", "false")
            .set("egress.enabled", "false")
            .set("ingress.static-routes", Map.of("7", sandbox.hostPort()))))
        {
            assertEquals(404, get(off.uri("/vnc/7/status")).statusCode());
            assertNotServed(post(off.internalUri("/mcp/tools/mcp")));
            HttpResponse<String> egress = get(off.internalUri("/egress/api.example/v1"));
            assertEquals(404, egress.statusCode());
            assertFalse(egress.body().contains("egress route"), egress.body());
            String connect = connect(off.internalPort());
            assertFalse(connect.startsWith("HTTP/1.1 200") || connect.startsWith("HTTP/1.1 403"), connect);
            assertEquals(200, get(off.uri("/healthz")).statusCode());
            assertEquals(200, get(off.internalUri("/metrics")).statusCode());
        }
    }

    /** The container's own answer (no servlet there): 404, or 405 from its default servlet for a POST. */
    private static void assertNotServed(HttpResponse<String> response)
    {
        assertTrue(response.statusCode() == 404 || response.statusCode() == 405, response.statusCode() + " " + response.body());
        assertFalse(response.body().contains("MCP"), response.body());
    }

    private static HttpResponse<String> get(URI uri, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri);
        if (headers.length > 0)
            request.headers(headers);
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(URI uri) throws Exception
    {
        return CLIENT.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The status line a CONNECT gets. */
    private static String connect(int port) throws Exception
    {
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write("CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0 && c != '\n')
                line.append((char)c);
            return line.toString().trim();
        }
    }
}
