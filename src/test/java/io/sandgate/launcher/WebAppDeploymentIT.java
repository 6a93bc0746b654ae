package io.sandgate.launcher;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.ee10.webapp.WebAppContext;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The webapp as a servlet container deploys the WAR: web.xml declares the listener, context-params
 * configure it, and nothing else is wired by hand.
 */
public class WebAppDeploymentIT extends WarDeployment
{
    private static Server deploy(String... contextParams) throws Exception
    {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        WebAppContext webapp = new WebAppContext(MavenPaths.projectBase().resolve("src/main/webapp").toString(), "/sandgate");
        webapp.setParentLoaderPriority(true);
        for (int i = 0; i < contextParams.length; i += 2)
            webapp.setInitParameter(contextParams[i], contextParams[i + 1]);
        server.setHandler(webapp);
        server.start();
        return server;
    }

    @Test
    void webXml_startsSandgate_configuredByContextParams_underAContextPath() throws Exception
    {
        try (SandboxBackend sandbox = SandboxBackend.start("war"))
        {
            Server server = deploy("sandgate.ingress.static-routes", "42=" + sandbox.hostPort(),
                "sandgate.ingress.cookie.secret", "war-secret-0123456789abcdef");
            try
            {
                int port = ((ServerConnector)server.getConnectors()[0]).getLocalPort();
                HttpResponse<String> response = get(port, "/sandgate/vnc/42/echo");
                assertEquals(200, response.statusCode(), response.body());
                assertTrue(response.body().contains("path=/echo"), response.body());
                String cookie = response.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("vnc_session_id=")).findFirst().orElseThrow();
                assertTrue(cookie.contains("; Path=/sandgate/vnc/;"), cookie);
                HttpResponse<String> redirect = get(port, "/sandgate/vnc/42");
                assertEquals(308, redirect.statusCode());
                assertEquals("/sandgate/vnc/42/", redirect.headers().firstValue("Location").orElseThrow());
                HttpResponse<String> ready = get(port, "/sandgate/readyz");
                assertEquals(200, ready.statusCode());
            }
            finally
            {
                server.stop();
            }
        }
    }

    @Test
    void contextParams_switchFacesOff() throws Exception
    {
        Server server = deploy("sandgate.mcp.enabled", "false", "sandgate.egress.enabled", "false");
        try
        {
            int port = ((ServerConnector)server.getConnectors()[0]).getLocalPort();
            // With the face on, this is the MCP face's own 404 ("no MCP server named tools").
            HttpResponse<String> mcp = get(port, "/sandgate/mcp/tools/sse");
            assertEquals(404, mcp.statusCode());
            assertFalse(mcp.body().contains("MCP"), mcp.body());
            assertEquals(404, get(port, "/sandgate/egress/api.example/v1").statusCode());
            assertEquals(200, get(port, "/sandgate/healthz").statusCode());
            HttpResponse<String> ingress = get(port, "/sandgate/vnc/42");
            assertEquals(308, ingress.statusCode(), "ingress stays on");
        }
        finally
        {
            server.stop();
        }
    }

    @Test
    void webSocketsAreBridged_underTheContextPath() throws Exception
    {
        try (WebSocketBackend sandbox = WebSocketBackend.start("war-ws"))
        {
            Server server = deploy("sandgate.ingress.static-routes", "43=" + sandbox.hostPort());
            try
            {
                int port = ((ServerConnector)server.getConnectors()[0]).getLocalPort();
                assertEquals(List.of("hello from war-ws", "echo:ping-me"), greetingAndEcho(port, "/sandgate/vnc/43/websockify"));
                assertEquals("/websockify", sandbox.lastPath.get());
            }
            finally
            {
                server.stop();
            }
        }
    }

    /**
     * The internal listener is the embedded runner's: in a container every face is on the
     * container's connectors, reached by browsers too, so its clients are counted as the public
     * listener's even when {@code server.internal-port} is set (an IPv6 one by its /64).
     */
    @Test
    void internalPort_isIgnored_andMcpClientsAreCountedAsPublicOnes() throws Exception
    {
        Server server = deploy("sandgate.server.internal-port", "0", "sandgate.ingress.trusted-proxies", "127.0.0.1/32",
            "sandgate.mcp.max-streams-per-client", "2",
            "sandgate.mcp.servers", "[{\"name\":\"tools\",\"url\":\"http://127.0.0.1:9/mcp\",\"transport\":\"streamable\"}]");
        List<InputStream> streams = new ArrayList<>();
        try
        {
            int port = ((ServerConnector)server.getConnectors()[0]).getLocalPort();
            assertEquals(200, openMcpStream(port, "2001:db8:0:1::1", streams));
            assertEquals(200, openMcpStream(port, "2001:db8:0:1::2", streams));
            assertEquals(429, openMcpStream(port, "2001:db8:0:1::3", streams), "one /64 is one client");
        }
        finally
        {
            for (InputStream stream : streams)
                stream.close();
            server.stop();
        }
    }

    private static int openMcpStream(int port, String forwardedFor, List<InputStream> streams) throws Exception
    {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/sandgate/mcp/tools/sse"))
            .header("X-Forwarded-For", forwardedFor).timeout(Duration.ofSeconds(10)).build();
        HttpResponse<InputStream> response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofInputStream());
        streams.add(response.body());
        if (response.statusCode() == 200)
        {
            String line = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8)).readLine();
            assertTrue(line != null && line.startsWith("event: endpoint"), "the stream is open: " + line);
        }
        return response.statusCode();
    }

    @Test
    void badContextParam_failsTheDeployment() throws Exception
    {
        Server server = deploy("sandgate.server.port", "not-a-port");
        try
        {
            WebAppContext webapp = (WebAppContext)server.getHandler();
            assertFalse(webapp.isAvailable(), "a misconfigured Sandgate must not serve");
            assertTrue(webapp.getUnavailableException() != null
                && webapp.getUnavailableException().getMessage().contains("server.port"), String.valueOf(webapp.getUnavailableException()));
        }
        finally
        {
            server.stop();
        }
    }
}
