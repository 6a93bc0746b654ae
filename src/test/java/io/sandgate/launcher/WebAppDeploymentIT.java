package io.sandgate.launcher;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.ee10.websocket.jakarta.server.config.JakartaWebSocketServletContainerInitializer;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.eclipse.jetty.ee10.webapp.WebAppContext;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The webapp as a servlet container deploys the WAR: web.xml declares the listener, context-params
 * configure it, and nothing else is wired by hand.
 */
public class WebAppDeploymentIT
{
    private static Server deploy(String... contextParams) throws Exception
    {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        WebAppContext webapp = new WebAppContext("src/main/webapp", "/sandgate");
        webapp.setParentLoaderPriority(true);
        for (int i = 0; i < contextParams.length; i += 2)
            webapp.setInitParameter(contextParams[i], contextParams[i + 1]);
        // What Jetty's ee10-websocket-jakarta module does for every webapp in a distribution.
        JakartaWebSocketServletContainerInitializer.configure(webapp, null);
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
                HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/sandgate/vnc/42/echo")).build(),
                    HttpResponse.BodyHandlers.ofString());
                assertEquals(200, response.statusCode(), response.body());
                assertTrue(response.body().contains("path=/echo"), response.body());
                String cookie = response.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("vnc_session_id=")).findFirst().orElseThrow();
                assertTrue(cookie.contains("; Path=/sandgate/vnc/;"), cookie);
                HttpResponse<String> redirect = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/sandgate/vnc/42")).build(),
                    HttpResponse.BodyHandlers.ofString());
                assertEquals(308, redirect.statusCode());
                assertEquals("/sandgate/vnc/42/", redirect.headers().firstValue("Location").orElseThrow());
                HttpResponse<String> ready = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/sandgate/readyz")).build(),
                    HttpResponse.BodyHandlers.ofString());
                assertEquals(200, ready.statusCode());
            }
            finally
            {
                server.stop();
            }
        }
    }

    @Test
    void webSocketsAreBridged_underTheContextPath() throws Exception
    {
        try (WebSocketBackend sandbox = WebSocketBackend.start("war-ws"))
        {
            Server server = deploy("sandgate.ingress.static-routes", "43=" + sandbox.hostPort());
            WebSocketClient client = new WebSocketClient();
            try
            {
                client.start();
                int port = ((ServerConnector)server.getConnectors()[0]).getLocalPort();
                CompletableFuture<String> greeting = new CompletableFuture<>();
                client.connect(new GreetingListener(greeting), URI.create("ws://127.0.0.1:" + port + "/sandgate/vnc/43/websockify")).get(5, TimeUnit.SECONDS);
                assertEquals("hello from war-ws", greeting.get(5, TimeUnit.SECONDS));
                assertEquals("/websockify", sandbox.lastPath.get());
            }
            finally
            {
                client.stop();
                server.stop();
            }
        }
    }

    /** Completes with the first text message. Public: Jetty binds listener methods through a public lookup. */
    public static final class GreetingListener implements Session.Listener.AutoDemanding
    {
        private final CompletableFuture<String> greeting;

        public GreetingListener(CompletableFuture<String> greeting)
        {
            this.greeting = greeting;
        }

        @Override
        public void onWebSocketText(String message)
        {
            greeting.complete(message);
        }
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
