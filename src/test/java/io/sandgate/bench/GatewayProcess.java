package io.sandgate.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The gateway as an operator runs it: {@code target/sandgate.jar} in a JVM of its own
 * ({@code -Xmx512m}), configured by environment and a YAML file, for the benchmarks that read a
 * replica's own process (CPU, RSS, threads, open files). Build the jar first.
 */
final class GatewayProcess implements AutoCloseable
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final Path JAR = Path.of("target/sandgate.jar");

    private final Process process;
    private final int port;

    private GatewayProcess(Process process, int port)
    {
        this.process = process;
        this.port = port;
    }

    /**
     * Starts the gateway on a free loopback port and returns once {@code /readyz} answers 200.
     *
     * @param yaml its configuration file's text
     * @param environment {@code SANDGATE_*} settings beyond the listener's, the access log (off) and the cookie secret
     */
    static GatewayProcess start(String yaml, Map<String, String> environment) throws IOException, InterruptedException
    {
        if (!Files.exists(JAR))
            throw new IllegalStateException("build the gateway first: mvn -q package -DskipTests");
        int port;
        try (ServerSocket socket = new ServerSocket(0))
        {
            port = socket.getLocalPort();
        }
        Path config = Files.createTempFile("sandgate-bench", ".yaml");
        Files.writeString(config, yaml);
        Path log = Files.createTempFile("sandgate-bench-" + port, ".log");
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xms512m", "-Xmx512m", "-jar",
            JAR.toString()).redirectErrorStream(true).redirectOutput(log.toFile());
        Map<String, String> env = new HashMap<>(Map.of(
            "SANDGATE_SERVER_HOST", "127.0.0.1",
            "SANDGATE_SERVER_PORT", Integer.toString(port),
            "SANDGATE_CONFIG", config.toString(),
            "SANDGATE_LOG_ACCESS", "false",
            "SANDGATE_INGRESS_COOKIE_SECRET", "bench-only-0123456789abcdef0123456789",
            // close() sends SIGTERM: no balancer to wait for.
            "SANDGATE_SERVER_DRAIN_GRACE", "0s"));
        env.putAll(environment);
        builder.environment().putAll(env);
        System.out.println("gateway on " + port + ", log " + log);
        GatewayProcess gateway = new GatewayProcess(builder.start(), port);
        gateway.awaitReady();
        return gateway;
    }

    private void awaitReady() throws InterruptedException
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline)
        {
            try
            {
                if (HTTP.send(HttpRequest.newBuilder(uri("/readyz")).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200)
                    return;
            }
            catch (IOException x)
            {
                // not listening yet
            }
            Thread.sleep(100);
        }
        close();
        throw new IllegalStateException("the gateway on " + port + " did not come up");
    }

    URI uri(String path)
    {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    long pid()
    {
        return process.pid();
    }

    /** User and system CPU the process has used, from /proc. */
    double cpuSeconds() throws IOException
    {
        String stat = Files.readString(Path.of("/proc/" + process.pid() + "/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / 100.0;
    }

    @Override
    public void close()
    {
        process.destroy();
        try
        {
            process.waitFor(10, TimeUnit.SECONDS);
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
    }
}
