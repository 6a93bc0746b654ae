package io.sandgate.testing;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;

/**
 * Debian's real {@code tinyproxy} as a child process on a free loopback port: a forward proxy
 * that is not Jetty, so egress is proven against an independent implementation of absolute-form
 * forwarding and CONNECT.
 *
 * <p>tinyproxy's {@code ConnectPort} is an allow-list: with no such line every port may be
 * tunnelled to; with any line, only the listed ones (others get {@code 403}). This fixture
 * always lists 443 plus the ports passed to {@link #start(String, int...)}, so a test must pass
 * its target's HTTPS port. Via is {@code 1.1 <name> (tinyproxy/<version>)}, from ViaProxyName.
 */
public final class Tinyproxy implements AutoCloseable
{
    private static final String EXECUTABLE_NAME = "tinyproxy";
    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration POLL_INTERVAL = Duration.ofMillis(20);
    private static final int START_ATTEMPTS = 3;

    /* As in RedisServerProcess: a test that dies before close() must not leave tinyproxy behind. */
    private static final Set<Process> LIVE_PROCESSES = ConcurrentHashMap.newKeySet();
    private static final Set<Path> OPEN_DIRECTORIES = ConcurrentHashMap.newKeySet();

    static
    {
        Runtime.getRuntime().addShutdownHook(new Thread(Tinyproxy::reapOnJvmExit, "tinyproxy-reaper"));
    }

    private final String name;
    private final Path directory;
    private final int port;
    private final Process process;

    private Tinyproxy(String name, Path directory, int port, Process process)
    {
        this.name = name;
        this.directory = directory;
        this.port = port;
        this.process = process;
    }

    /**
     * Starts tinyproxy and returns once its port accepts connections.
     *
     * @param name         goes into the Via header it adds (ViaProxyName)
     * @param connectPorts ports CONNECT may reach besides 443, typically {@code target.httpsPort()}
     * @throws IllegalStateException if tinyproxy is not installed or does not come up
     */
    public static Tinyproxy start(String name, int... connectPorts)
    {
        Objects.requireNonNull(name, "name");
        Path executable = LocalResources.executable(EXECUTABLE_NAME, "/usr/bin", "/usr/sbin");
        if (executable == null)
            throw new IllegalStateException(EXECUTABLE_NAME + " was not found on PATH (" + System.getenv("PATH")
                + "). The egress tests run a real tinyproxy; install it with: apt-get install -y tinyproxy (scripts/test.sh does this)");
        Path directory;
        try
        {
            directory = Files.createTempDirectory("sandgate-tinyproxy-");
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot create a directory for tinyproxy", e);
        }
        OPEN_DIRECTORIES.add(directory);
        Set<Integer> allowed = new LinkedHashSet<>();
        allowed.add(443);
        for (int p : connectPorts)
        {
            allowed.add(p);
        }
        // The probed port can be taken before tinyproxy binds it; that shows up as an early exit.
        IllegalStateException lastFailure = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++)
        {
            try
            {
                return launch(executable, name, directory, LocalResources.freeLoopbackPort(), allowed);
            }
            catch (IllegalStateException e)
            {
                lastFailure = e;
            }
        }
        LocalResources.deleteRecursively(directory);
        OPEN_DIRECTORIES.remove(directory);
        throw lastFailure;
    }

    public String name()
    {
        return name;
    }

    public int port()
    {
        return port;
    }

    /** {@code 127.0.0.1:<port>}. */
    public String address()
    {
        return "127.0.0.1:" + port;
    }

    /** tinyproxy's own log (LogLevel Info: one line per connection and request). */
    public Path logFile()
    {
        return directory.resolve("tinyproxy.log");
    }

    /** The log so far, for failure messages. */
    public String log()
    {
        return read(logFile()) + read(directory.resolve("console.log"));
    }

    @Override
    public void close()
    {
        try
        {
            terminate(process);
        }
        finally
        {
            LocalResources.deleteRecursively(directory);
            OPEN_DIRECTORIES.remove(directory);
        }
    }

    @Override
    public String toString()
    {
        return "Tinyproxy[" + name + " " + address() + "]";
    }

    private static Tinyproxy launch(Path executable, String name, Path directory, int port, Set<Integer> connectPorts)
    {
        Path config = directory.resolve("tinyproxy.conf");
        List<String> lines = new ArrayList<>(List.of(
                "Port " + port,
                "Listen 127.0.0.1",
                "Timeout 30",
                "MaxClients 64",
                "Allow 127.0.0.1",
                // LogFile rather than Syslog; the two are mutually exclusive.
                "LogFile \"" + directory.resolve("tinyproxy.log") + "\"",
                "LogLevel Info",
                "PidFile \"" + directory.resolve("tinyproxy.pid") + "\"",
                "ViaProxyName \"" + name + "\""));
        // No User/Group: run as whoever runs the tests (root in CI logs a warning and stays root),
        // so the temp dir stays writable for log and pid file.
        for (int p : connectPorts)
        {
            lines.add("ConnectPort " + p);
        }
        try
        {
            Files.write(config, lines, StandardCharsets.UTF_8);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot write " + config, e);
        }
        ProcessBuilder builder = new ProcessBuilder(executable.toString(), "-d", "-c", config.toString())
                .directory(directory.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("console.log").toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Process started;
        try
        {
            started = builder.start();
        }
        catch (IOException e)
        {
            throw new IllegalStateException("cannot run " + executable, e);
        }
        LIVE_PROCESSES.add(started);
        started.onExit().thenRun(() -> LIVE_PROCESSES.remove(started));
        Tinyproxy proxy = new Tinyproxy(name, directory, port, started);
        try
        {
            await().alias("tinyproxy on port " + port + " accepting connections")
                    .atMost(STARTUP_TIMEOUT)
                    .pollInterval(POLL_INTERVAL)
                    .pollInSameThread()
                    .failFast("tinyproxy exited during startup", () -> !started.isAlive())
                    .until(() -> accepts(port));
        }
        catch (ConditionTimeoutException | TerminalFailureException e)
        {
            String why = started.isAlive()
                    ? "did not accept connections within " + STARTUP_TIMEOUT
                    : "exited with status " + started.exitValue();
            String log = proxy.log();
            terminate(started);
            throw new IllegalStateException("tinyproxy on port " + port + ' ' + why + '\n' + log, e);
        }
        return proxy;
    }

    private static void terminate(Process doomed)
    {
        // SIGTERM first: tinyproxy then closes its sockets and removes its pid file.
        doomed.destroy();
        try
        {
            if (!doomed.waitFor(2, TimeUnit.SECONDS))
            {
                doomed.destroyForcibly();
                if (!doomed.waitFor(5, TimeUnit.SECONDS))
                {
                    throw new IllegalStateException("tinyproxy pid " + doomed.pid() + " survived SIGKILL");
                }
            }
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for tinyproxy to die", e);
        }
    }

    private static boolean accepts(int port)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(loopback(), port), 250);
            return true;
        }
        catch (IOException e)
        {
            return false;
        }
    }

    private static InetAddress loopback() throws IOException
    {
        return InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
    }

    private static String read(Path file)
    {
        try
        {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        }
        catch (IOException | UncheckedIOException e)
        {
            return "(unreadable " + file + ": " + e + ")\n";
        }
    }

    private static void reapOnJvmExit()
    {
        List<Process> orphans = new ArrayList<>(LIVE_PROCESSES);
        orphans.forEach(Process::destroyForcibly);
        for (Process orphan : orphans)
        {
            try
            {
                orphan.waitFor(2, TimeUnit.SECONDS);
            }
            catch (InterruptedException e)
            {
                Thread.currentThread().interrupt();
                return;
            }
        }
        for (Path directory : OPEN_DIRECTORIES)
        {
            try
            {
                LocalResources.deleteRecursively(directory);
            }
            catch (UncheckedIOException e)
            {
                // Best effort at JVM exit.
            }
        }
    }
}
