package io.sandgate.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.sandgate.testing.Tinyproxy;

import static org.awaitility.Awaitility.await;

/**
 * A {@link Tinyproxy} node crashed and started again by hand, on the same port and configuration:
 * SIGKILL to the fixture's process (no chance to close its sockets, as in a crash), then a new
 * tinyproxy from the configuration the fixture wrote. The fixture does not offer this yet; the
 * process found here is a child of this JVM, matched by its configuration file.
 */
final class TinyproxyCrash implements AutoCloseable
{
    private static final Path TINYPROXY = Path.of("/usr/bin/tinyproxy");

    private final Tinyproxy node;
    private final Path config;
    private Process restarted;

    TinyproxyCrash(Tinyproxy node)
    {
        this.node = node;
        this.config = node.logFile().resolveSibling("tinyproxy.conf");
    }

    /** SIGKILL, and returns once the port refuses connections. */
    void kill()
    {
        ProcessHandle process = ProcessHandle.current().descendants()
            .filter(p -> p.info().arguments().map(args -> List.of(args).contains(config.toString())).orElse(false))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("no tinyproxy child runs " + config));
        process.destroyForcibly();
        process.onExit().orTimeout(10, TimeUnit.SECONDS).join();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10)).until(() -> !accepts(node.port()));
    }

    /** Starts tinyproxy again on the same port, and returns once it accepts connections. */
    void restart()
    {
        Path console = config.resolveSibling("console-restarted.log");
        try
        {
            // The killed process left its pid file behind, as a crash does.
            Files.deleteIfExists(config.resolveSibling("tinyproxy.pid"));
            restarted = new ProcessBuilder(TINYPROXY.toString(), "-d", "-c", config.toString())
                .redirectErrorStream(true).redirectOutput(console.toFile()).start();
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot start tinyproxy again from " + config, e);
        }
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10)).until(() -> accepts(node.port()));
    }

    /** Stops the restarted process; the fixture still closes its own. */
    @Override
    public void close()
    {
        if (restarted != null)
        {
            restarted.destroyForcibly();
            restarted.onExit().orTimeout(10, TimeUnit.SECONDS).join();
        }
    }

    private static boolean accepts(int port)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 250);
            return true;
        }
        catch (IOException e)
        {
            return false;
        }
    }
}
