package io.sandgate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.sandgate.launcher.Main;
import org.awaitility.core.ConditionTimeoutException;

import static org.awaitility.Awaitility.await;

/**
 * The embedded runner as a process of its own ({@code java io.sandgate.launcher.Main} on the test
 * class path), for what only a process shows: a real SIGTERM, and the process ending after it. It
 * is configured as a deployment is, by {@code SANDGATE_*} environment variables, on a free loopback
 * port; its log is in the fixture's scratch directory.
 */
public final class GatewayProcess extends ProcessFixture
{
    /** A JVM starting on a busy machine takes far longer than a redis-server. */
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private Process process;
    private int port;

    private GatewayProcess(String name)
    {
        super("gateway-" + name);
    }

    /**
     * Starts a runner and returns once its {@code /readyz} answers 200.
     *
     * @param settings environment variables ({@code SANDGATE_STORE_TYPE}...) beside the loopback
     *                 address and the port, which this fixture sets
     */
    public static GatewayProcess start(String name, Map<String, String> settings)
    {
        GatewayProcess gateway = new GatewayProcess(name);
        gateway.onAFreePort(port -> gateway.launch(port, settings));
        return gateway;
    }

    /**
     * As {@link #start(String, Map)}, on {@code port}: a new replica where one has gone, as a rolling
     * update puts it, so that a balancer configured with that address takes it back.
     */
    public static GatewayProcess startOn(int port, String name, Map<String, String> settings)
    {
        GatewayProcess gateway = new GatewayProcess(name);
        try
        {
            gateway.launch(port, settings);
        }
        catch (IllegalStateException x)
        {
            throw gateway.closeAfter(x);
        }
        return gateway;
    }

    public int port()
    {
        return port;
    }

    public URI uri(String path)
    {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    /** SIGTERM, as Kubernetes and {@code docker stop} send it. */
    public void terminate()
    {
        process.destroy();
    }

    /** Whether the process ended within {@code timeout}. */
    public boolean awaitExit(Duration timeout) throws InterruptedException
    {
        return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    public boolean isAlive()
    {
        return process.isAlive();
    }

    /** What the runner logged so far. */
    public String log()
    {
        try
        {
            Path log = directory.resolve("gateway.log");
            return Files.exists(log) ? Files.readString(log) : "";
        }
        catch (IOException x)
        {
            throw new UncheckedIOException(x);
        }
    }

    @Override
    public String diagnostics()
    {
        return "--- " + directory.getFileName() + " log\n" + tail(directory.resolve("gateway.log"));
    }

    @Override
    protected void stopProcesses()
    {
        // SIGTERM: a runner still running drains first, within its configured timeout.
        stop(process, Duration.ofSeconds(30));
    }

    private void launch(int port, Map<String, String> settings)
    {
        this.port = port;
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", classPath, Main.class.getName()));
        Path log = directory.resolve("gateway.log");
        Path config = directory.resolve("sandgate.yaml");
        try
        {
            Files.writeString(config, "{}\n");
        }
        catch (IOException x)
        {
            throw new UncheckedIOException(x);
        }
        process = launch(command, environment ->
        {
            environment.keySet().removeIf(variable -> variable.startsWith("SANDGATE_"));
            environment.put("SANDGATE_CONFIG", config.toString());
            environment.put("SANDGATE_SERVER_HOST", "127.0.0.1");
            environment.put("SANDGATE_SERVER_PORT", Integer.toString(port));
            environment.putAll(settings);
        }, log, log);
        try
        {
            await().alias("runner " + directory.getFileName() + " on port " + port + " to answer /readyz")
                .atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(100))
                .failFast("the runner exited during start-up", () -> !process.isAlive())
                .until(this::ready);
        }
        catch (ConditionTimeoutException | org.awaitility.core.TerminalFailureException x)
        {
            stop(process, Duration.ZERO);
            throw new IllegalStateException("the runner did not start\n" + diagnostics(), x);
        }
    }

    private boolean ready()
    {
        try
        {
            return HTTP.send(HttpRequest.newBuilder(uri("/readyz")).timeout(Duration.ofSeconds(2)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        }
        catch (IOException x)
        {
            return false;
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
