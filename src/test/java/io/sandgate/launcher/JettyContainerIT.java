package io.sandgate.launcher;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.sandgate.testing.LocalResources;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged WAR in a real Jetty 12 distribution (jetty-home from Maven Central) with the
 * modules an operator would enable (http, ee10-deploy, ee10-websocket-jakarta), configured only by
 * init parameters in the context XML.
 */
public class JettyContainerIT
{
    private static Path base;
    private static Process jetty;
    private static int port;
    private static SandboxBackend http;
    private static WebSocketBackend ws;

    @BeforeAll
    static void start() throws Exception
    {
        Path home = Path.of(System.getProperty("jetty.home", "target/containers/jetty-home-12.1.12"));
        Path war = Path.of(System.getProperty("sandgate.war", "target/sandgate.war"));
        assertTrue(Files.isDirectory(home), "no jetty-home at " + home + ": run through mvn verify");
        http = SandboxBackend.start("jetty-http");
        ws = WebSocketBackend.start("jetty-ws");
        port = LocalResources.freeLoopbackPort();
        base = Files.createTempDirectory("sandgate-jetty-");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process modules = new ProcessBuilder(java.toString(), "-jar", home.resolve("start.jar").toString(),
            "--add-modules=http,ee10-deploy,ee10-websocket-jakarta")
            .directory(base.toFile()).redirectErrorStream(true).redirectOutput(base.resolve("modules.log").toFile()).start();
        assertEquals(0, modules.waitFor(), Files.readString(base.resolve("modules.log")));
        Files.createDirectories(base.resolve("webapps"));
        Files.copy(war, base.resolve("webapps/sandgate.war"));
        Files.writeString(base.resolve("webapps/sandgate.xml"), """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE Configure PUBLIC "-//Jetty//Configure//EN" "https://jetty.org/configure_10_0.dtd">
            <Configure class="org.eclipse.jetty.ee10.webapp.WebAppContext">
              <Set name="contextPath">/sandgate</Set>
              <Set name="war"><Property name="jetty.webapps" default="."/>/sandgate.war</Set>
              <Call name="setInitParameter"><Arg>sandgate.ingress.static-routes</Arg><Arg>42=%s,43=%s</Arg></Call>
              <Call name="setInitParameter"><Arg>sandgate.ingress.cookie.secret</Arg><Arg>jetty-secret-0123456789abcdef</Arg></Call>
            </Configure>
            """.formatted(http.hostPort(), ws.hostPort()));
        jetty = new ProcessBuilder(java.toString(), "-jar", home.resolve("start.jar").toString(), "jetty.http.port=" + port, "jetty.http.host=127.0.0.1")
            .directory(base.toFile()).redirectErrorStream(true).redirectOutput(base.resolve("console.log").toFile()).start();
        HttpClient client = HttpClient.newHttpClient();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).ignoreExceptions().until(() ->
            client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/sandgate/readyz")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
    }

    @AfterAll
    static void stop() throws Exception
    {
        if (jetty != null)
        {
            jetty.destroyForcibly();
            jetty.waitFor(20, TimeUnit.SECONDS);
        }
        if (http != null)
            http.close();
        if (ws != null)
            ws.close();
        if (base != null)
        {
            LocalResources.deleteRecursively(base);
        }
    }

    @Test
    void httpIngress_throughTheWarInJetty() throws Exception
    {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/sandgate/vnc/42/echo")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().startsWith("backend=jetty-http"), response.body());
    }

    @Test
    void webSocketBridge_onJettysWebSocketModule() throws Exception
    {
        WebSocketClient client = new WebSocketClient();
        client.start();
        try
        {
            CompletableFuture<String> greeting = new CompletableFuture<>();
            client.connect(new WebAppDeploymentIT.GreetingListener(greeting), URI.create("ws://127.0.0.1:" + port + "/sandgate/vnc/43/websockify"))
                .get(10, TimeUnit.SECONDS);
            assertEquals("hello from jetty-ws", greeting.get(10, TimeUnit.SECONDS));
        }
        finally
        {
            client.stop();
        }
    }
}
