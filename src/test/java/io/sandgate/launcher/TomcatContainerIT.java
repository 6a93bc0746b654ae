package io.sandgate.launcher;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

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
 * The packaged {@code target/sandgate.war} in a real Tomcat 10.1 (the distribution from Maven
 * Central, unpacked by the build), configured only by context-params: HTTP ingress and the
 * WebSocket bridge, which runs on Tomcat's own Jakarta WebSocket container.
 */
public class TomcatContainerIT
{
    private static Path base;
    private static Process tomcat;
    private static int port;
    private static SandboxBackend http;
    private static WebSocketBackend ws;

    @BeforeAll
    static void start() throws Exception
    {
        Path home = Path.of(System.getProperty("tomcat.home", "target/containers/apache-tomcat-10.1.59"));
        Path war = Path.of(System.getProperty("sandgate.war", "target/sandgate.war"));
        assertTrue(Files.isDirectory(home), "no Tomcat at " + home + ": run through mvn verify");
        http = SandboxBackend.start("tomcat-http");
        ws = WebSocketBackend.start("tomcat-ws");
        port = LocalResources.freeLoopbackPort();
        base = Files.createTempDirectory("sandgate-tomcat-");
        for (String dir : new String[]{"conf", "logs", "temp", "work", "webapps", "conf/Catalina/localhost"})
            Files.createDirectories(base.resolve(dir));
        try (Stream<Path> files = Files.list(home.resolve("conf")))
        {
            for (Path file : files.filter(Files::isRegularFile).toList())
                Files.copy(file, base.resolve("conf").resolve(file.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
        Path serverXml = base.resolve("conf/server.xml");
        Files.writeString(serverXml, Files.readString(serverXml)
            .replace("port=\"8005\"", "port=\"-1\"")
            .replace("port=\"8080\"", "port=\"" + port + "\""));
        Files.copy(war, base.resolve("webapps/sandgate.war"));
        // Configuration only through context-params, as an operator would give them.
        Files.writeString(base.resolve("conf/Catalina/localhost/sandgate.xml"), """
            <Context>
              <Parameter name="sandgate.ingress.static-routes" value="42=%s,43=%s" override="false"/>
              <Parameter name="sandgate.ingress.cookie.secret" value="tomcat-secret-0123456789abcdef" override="false"/>
            </Context>
            """.formatted(http.hostPort(), ws.hostPort()));
        ProcessBuilder builder = new ProcessBuilder(home.resolve("bin/catalina.sh").toString(), "run")
            .redirectErrorStream(true)
            .redirectOutput(base.resolve("logs/console.log").toFile());
        builder.environment().put("CATALINA_HOME", home.toString());
        builder.environment().put("CATALINA_BASE", base.toString());
        builder.environment().put("CATALINA_PID", base.resolve("tomcat.pid").toString());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        tomcat = builder.start();
        HttpClient client = HttpClient.newHttpClient();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).ignoreExceptions().until(() ->
            client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/sandgate/readyz")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
    }

    @AfterAll
    static void stop() throws Exception
    {
        if (tomcat != null)
        {
            tomcat.descendants().forEach(ProcessHandle::destroyForcibly);
            tomcat.destroyForcibly();
            tomcat.waitFor(20, TimeUnit.SECONDS);
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
    void httpIngress_throughTheWarInTomcat() throws Exception
    {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/sandgate/vnc/42/echo")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().startsWith("backend=tomcat-http"), response.body());
        assertTrue(response.body().contains("path=/echo"), response.body());
        String cookie = response.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("vnc_session_id=")).findFirst().orElseThrow();
        assertTrue(cookie.contains("Path=/sandgate/vnc/"), cookie);
    }

    @Test
    void webSocketBridge_onTomcatsOwnWebSocketContainer() throws Exception
    {
        WebSocketClient client = new WebSocketClient();
        client.start();
        try
        {
            CompletableFuture<String> greeting = new CompletableFuture<>();
            client.connect(new WebAppDeploymentIT.GreetingListener(greeting), URI.create("ws://127.0.0.1:" + port + "/sandgate/vnc/43/websockify"))
                .get(10, TimeUnit.SECONDS);
            assertEquals("hello from tomcat-ws", greeting.get(10, TimeUnit.SECONDS));
            assertEquals("/websockify", ws.lastPath.get());
        }
        finally
        {
            client.stop();
        }
    }
}
