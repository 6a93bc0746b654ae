package io.sandgate.testing;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;

/**
 * A real {@code redis-server} child process on a free loopback port, for tests that need genuine
 * Redis behaviour (Redisson reconnects, keyspace semantics) rather than a fake.
 *
 * <p>The server is ephemeral by construction: no RDB snapshots, no AOF, a private working
 * directory. {@link #kill()} and {@link #restart()} exist so tests can exercise what the gateway
 * does when Redis disappears abruptly and comes back empty on the same address.
 */
public final class RedisServerProcess implements AutoCloseable
{
    private static final String EXECUTABLE_NAME = "redis-server";
    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration POLL_INTERVAL = Duration.ofMillis(25);
    private static final int START_ATTEMPTS = 3;
    private static final int DIAGNOSTIC_LINES = 40;

    /*
     * A test that fails before close(), or a JVM ended by System.exit (which is how Surefire ends
     * its forks), would otherwise leave redis-server processes running, still holding ports and
     * confusing the next run. Processes leave the set by themselves on exit (onExit), so only the
     * genuinely orphaned ones are killed here.
     */
    private static final Set<Process> LIVE_PROCESSES = ConcurrentHashMap.newKeySet();
    private static final Set<Path> OPEN_DIRECTORIES = ConcurrentHashMap.newKeySet();

    static
    {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(RedisServerProcess::reapOnJvmExit, "redis-server-reaper"));
    }

    private final Path executable;
    private final Path directory;
    private final int port;
    private Process process;
    private boolean closed;

    private boolean persistent;

    private RedisServerProcess(Path executable, Path directory, int port)
    {
        this.executable = executable;
        this.directory = directory;
        this.port = port;
    }

    /**
     * Starts a server on a free port and returns once it answers PING.
     *
     * @throws IllegalStateException if redis-server is not installed or does not come up
     */
    public static RedisServerProcess start()
    {
        return start(false);
    }

    /**
     * Like {@link #start()}, but with an append-only file fsynced on every write, so that a kill
     * and {@link #restart()} keep every acknowledged write, as a production Redis configured for
     * durability would.
     */
    public static RedisServerProcess startPersistent()
    {
        return start(true);
    }

    private static RedisServerProcess start(boolean persistent)
    {
        Path executable = LocalResources.executable(EXECUTABLE_NAME);
        if (executable == null)
            throw new IllegalStateException(EXECUTABLE_NAME + " was not found on PATH (" + System.getenv("PATH")
                + "). These tests run a real Redis; install it with: apt-get install redis-server");
        Path directory;
        try
        {
            directory = Files.createTempDirectory("sandgate-redis-");
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot create a working directory for redis-server", e);
        }
        OPEN_DIRECTORIES.add(directory);

        // The free port is only free when probed; another process may take it before redis-server
        // binds. Such a loss shows up as an early exit, so a fresh port is worth a few tries.
        IllegalStateException lastFailure = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++)
        {
            RedisServerProcess server = new RedisServerProcess(executable, directory, LocalResources.freeLoopbackPort());
            server.persistent = persistent;
            try
            {
                server.launchAndAwaitPong();
                return server;
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

    public int port()
    {
        return port;
    }

    /** The address in the form Redisson's {@code useSingleServer().setAddress(...)} expects. */
    public String address()
    {
        return "redis://127.0.0.1:" + port;
    }

    /** The server's log, kept across restarts; worth attaching to a failure message. */
    public Path logFile()
    {
        return directory.resolve("redis.log");
    }

    /**
     * Kills the server with SIGKILL and returns once the process has exited and the port refuses
     * connections. SIGKILL rather than SHUTDOWN so Redis gets no chance to close connections
     * politely: tests use this to simulate a crash. Does nothing if the server is not running.
     */
    public synchronized void kill()
    {
        if (process == null)
        {
            return;
        }
        Process dying = process;
        process = null;
        terminate(dying);
        // Process exit and the listening socket disappearing are separate events from the test's
        // point of view; callers asserting "connection refused" must not race the kernel.
        try
        {
            await().alias("port " + port + " refusing connections after kill")
                    .atMost(SHUTDOWN_TIMEOUT)
                    .pollInterval(POLL_INTERVAL)
                    .pollInSameThread()
                    .until(() -> refusesConnections(port));
        }
        catch (ConditionTimeoutException e)
        {
            throw new IllegalStateException(
                    "port " + port + " still accepts connections after redis-server was killed;"
                            + " another process may have taken it",
                    e);
        }
    }

    /**
     * Kills the server if it is running and starts a new, empty one on the same port, returning
     * once it answers PING. The port is kept because clients under test hold the address and are
     * expected to reconnect to it.
     */
    public synchronized void restart()
    {
        if (closed)
        {
            throw new IllegalStateException("redis-server on port " + port + " is closed");
        }
        kill();
        launchAndAwaitPong();
    }

    /** Kills the server and deletes its working directory, including the log. */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        try
        {
            kill();
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
        return "RedisServerProcess[" + address() + ", dir=" + directory + "]";
    }

    private void launchAndAwaitPong()
    {
        List<String> command = List.of(
                executable.toString(),
                "--port", Integer.toString(port),
                "--bind", "127.0.0.1",
                "--protected-mode", "no",
                // Redis turns an empty argument into an empty value, which disables snapshots.
                "--save", "",
                "--appendonly", persistent ? "yes" : "no",
                "--appendfsync", "always",
                "--daemonize", "no",
                "--dir", directory.toString(),
                "--logfile", logFile().toString());
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(directory.toFile())
                .redirectErrorStream(true)
                // Config errors are printed before the log file is opened; keep them, and never
                // leave a pipe nobody drains.
                .redirectOutput(ProcessBuilder.Redirect.appendTo(consoleFile().toFile()))
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
        process = started;

        try
        {
            await().alias("redis-server on port " + port + " answering PING")
                    .atMost(STARTUP_TIMEOUT)
                    .pollInterval(POLL_INTERVAL)
                    .pollInSameThread()
                    .failFast("redis-server exited during startup", () -> !started.isAlive())
                    .until(() -> answersPong(port));
        }
        catch (ConditionTimeoutException | TerminalFailureException e)
        {
            String why = started.isAlive()
                    ? "did not answer PING within " + STARTUP_TIMEOUT
                    : "exited with status " + started.exitValue();
            // Not kill(): its wait for the port to refuse connections would hang when the reason
            // for failing is that some other process owns the port.
            process = null;
            terminate(started);
            throw new IllegalStateException(
                    "redis-server on port " + port + ' ' + why + '\n' + diagnostics(), e);
        }
    }

    private static void terminate(Process doomed)
    {
        doomed.destroyForcibly();
        try
        {
            if (!doomed.waitFor(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
            {
                throw new IllegalStateException(
                        "redis-server pid " + doomed.pid() + " survived SIGKILL for " + SHUTDOWN_TIMEOUT);
            }
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for redis-server to die", e);
        }
    }

    private Path consoleFile()
    {
        return directory.resolve("redis-console.log");
    }

    private String diagnostics()
    {
        return "--- " + consoleFile() + '\n' + tail(consoleFile())
                + "--- " + logFile() + '\n' + tail(logFile());
    }

    private static String tail(Path file)
    {
        if (!Files.exists(file))
        {
            return "(missing)\n";
        }
        try
        {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            StringBuilder out = new StringBuilder();
            for (String line : lines.subList(Math.max(0, lines.size() - DIAGNOSTIC_LINES), lines.size()))
            {
                out.append(line).append('\n');
            }
            return out.toString();
        }
        catch (IOException | UncheckedIOException e)
        {
            return "(unreadable: " + e + ")\n";
        }
    }

    private static boolean answersPong(int port)
    {
        try (RawRedis redis = RawRedis.connect(port))
        {
            return "PONG".equals(redis.command("PING"));
        }
        catch (IOException | UncheckedIOException | IllegalStateException e)
        {
            // Refused, reset, or an error reply such as -LOADING: not ready yet.
            return false;
        }
    }

    private static boolean refusesConnections(int port)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(loopback(), port), 250);
            return false;
        }
        catch (ConnectException e)
        {
            return true;
        }
        catch (SocketTimeoutException e)
        {
            return false;
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    private static InetAddress loopback() throws IOException
    {
        return InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
    }

    /*
     * Runs on JVM exit, possibly while a test thread still holds an instance's monitor, so it must
     * not call the synchronized instance methods.
     */
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
                // Best effort: a leftover temp dir is harmless, a throwing hook only adds noise.
            }
        }
    }
}
