package io.sandgate.launcher;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.sandgate.testing.LocalResources;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the tests of the webapp as a container deploys it share: requests and WebSocket round trips
 * under the {@code /sandgate} context, and, for a real container distribution run as a child
 * process (Tomcat, Jetty), one sandbox backend of each kind, a base directory, a port, and a
 * container that is stopped after all tests.
 */
@ExtendWith(WorkDirExtension.class)
abstract class WarDeployment
{
    protected static SandboxBackend http;
    protected static WebSocketBackend ws;
    protected static int port;
    protected static Path base;
    private static Process container;

    /**
     * Starts the two sandboxes ({@code <name>-http}, {@code <name>-ws}) and picks the base
     * directory and port of a container.
     */
    protected static void prepareContainer(String name, WorkDir workDir)
    {
        http = SandboxBackend.start(name + "-http");
        try
        {
            ws = WebSocketBackend.start(name + "-ws");
        }
        catch (Exception x)
        {
            throw new IllegalStateException("cannot start the WebSocket sandbox", x);
        }
        port = LocalResources.freeLoopbackPort();
        base = workDir.getEmptyPathDir();
    }

    /**
     * A container distribution the build unpacked: the directory the system property names (the
     * surefire configuration sets it), else the one under {@code target/containers} starting with
     * {@code prefix}.
     */
    protected static Path containerHome(String property, String prefix) throws IOException
    {
        String configured = System.getProperty(property);
        if (configured != null)
        {
            assertTrue(Files.isDirectory(Path.of(configured)), "no " + configured + ": run through mvn test");
            return Path.of(configured);
        }
        Path containers = MavenPaths.projectBase().resolve("target/containers");
        assertTrue(Files.isDirectory(containers), "no " + containers + ": run through mvn test");
        try (Stream<Path> homes = Files.list(containers))
        {
            return homes.filter(home -> home.getFileName().toString().startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + prefix + "* in " + containers + ": run through mvn test"));
        }
    }

    /**
     * The packaged WAR: what {@code war.file} names (the surefire configuration sets it), else
     * target/sandgate.war. Not a {@code sandgate.} property: the gateways a test starts in the same
     * JVM read those as settings and refuse the ones they do not know.
     */
    protected static Path war()
    {
        String configured = System.getProperty("war.file");
        return configured != null ? Path.of(configured) : MavenPaths.projectBase().resolve("target/sandgate.war");
    }

    /** Starts the container and returns once Sandgate answers {@code /sandgate/readyz} on {@link #port}. */
    protected static void startContainer(ProcessBuilder builder) throws Exception
    {
        container = builder.start();
        HttpClient client = HttpClient.newHttpClient();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).ignoreExceptions().until(() ->
            client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/sandgate/readyz")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
    }

    @AfterAll
    static void stopContainer() throws Exception
    {
        if (container != null)
        {
            container.descendants().forEach(ProcessHandle::destroyForcibly);
            container.destroyForcibly();
            container.waitFor(20, TimeUnit.SECONDS);
            container = null;
        }
        if (http != null)
            http.close();
        if (ws != null)
            ws.close();
        http = null;
        ws = null;
    }

    /** A GET as a browser sends it over plain HTTP (HTTP/1.1, no h2c upgrade). */
    protected static HttpResponse<String> get(int port, String path) throws Exception
    {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Opens a WebSocket at the path, waits for the sandbox's greeting, sends a message and waits for
     * its echo: both directions of the tunnel.
     *
     * @return the greeting and the echo
     */
    protected static List<String> greetingAndEcho(int port, String path) throws Exception
    {
        WebSocketClient client = new WebSocketClient();
        client.start();
        try
        {
            Texts texts = new Texts();
            Session session = client.connect(texts, URI.create("ws://127.0.0.1:" + port + path)).get(10, TimeUnit.SECONDS);
            String greeting = texts.received.poll(10, TimeUnit.SECONDS);
            session.sendText("ping-me", Callback.NOOP);
            String echo = texts.received.poll(10, TimeUnit.SECONDS);
            session.close();
            return Arrays.asList(greeting, echo);
        }
        finally
        {
            client.stop();
        }
    }

    /** Queues the text messages. Public: Jetty binds listener methods through a public lookup. */
    public static final class Texts implements Session.Listener.AutoDemanding
    {
        private final BlockingQueue<String> received = new LinkedBlockingQueue<>();

        @Override
        public void onWebSocketText(String message)
        {
            received.add(message);
        }
    }
}
