package io.sandgate.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.IntFunction;
import java.util.stream.Stream;

import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;
import org.eclipse.jetty.toolchain.test.MavenPaths;

import static org.awaitility.Awaitility.await;

/**
 * A real program run as a child process on loopback (redis-server, tinyproxy, Xvnc): started in a
 * scratch directory of its own under {@code target/tests}, on a free port, awaited until it
 * listens, stopped politely or killed, started again on the same port. Subclasses say what to run
 * and when it is ready; this class owns the processes and the directory.
 *
 * <p>A test that fails before close(), or a JVM ended by System.exit (which is how Surefire ends
 * its forks), would otherwise leave processes running, still holding ports and displays and
 * confusing the next run: what is still alive when the JVM exits is killed then, and its
 * directory deleted.
 */
public abstract class ProcessFixture implements AutoCloseable
{
    protected static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(10);
    protected static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);
    protected static final Duration POLL_INTERVAL = Duration.ofMillis(25);
    /** The probed port is only free when probed; a process that lost it exits early, and a fresh one is tried. */
    private static final int START_ATTEMPTS = 3;
    private static final int DIAGNOSTIC_LINES = 40;

    private static final Set<Process> LIVE_PROCESSES = ConcurrentHashMap.newKeySet();
    private static final Set<Path> OPEN_DIRECTORIES = ConcurrentHashMap.newKeySet();

    static
    {
        Runtime.getRuntime().addShutdownHook(new Thread(ProcessFixture::reapOnJvmExit, "process-fixture-reaper"));
    }

    /** The scratch directory: configuration, logs, data; deleted on close. */
    protected final Path directory;
    private boolean closed;

    protected ProcessFixture(String name)
    {
        this(name, MavenPaths.targetTests());
    }

    /**
     * @param parent where the scratch directory is made; a program that drops root for a user of
     *               its own needs one that user can enter, which {@code target/tests} is not when
     *               the clone sits under a directory only root may enter ({@code /root})
     */
    protected ProcessFixture(String name, Path parent)
    {
        try
        {
            directory = Files.createTempDirectory(parent, name + "-");
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot create a working directory for " + name, e);
        }
        OPEN_DIRECTORIES.add(directory);
    }

    /**
     * The installed program, or an exception that names the command installing it: these tests
     * fail, never skip, on a machine without it.
     */
    protected static Path executable(String name, String install, String... extraDirs)
    {
        Path executable = LocalResources.executable(name, extraDirs);
        if (executable == null)
            throw new IllegalStateException(name + " was not found on PATH (" + System.getenv("PATH") + "); install it with: " + install);
        return executable;
    }

    /** The tails of the logs, for failure messages. */
    public abstract String diagnostics();

    /** Calls {@code launch} with fresh free ports until one works; closes this fixture if none does. */
    protected final int onAFreePort(IntConsumer launch)
    {
        try
        {
            return onFreshPorts(port ->
            {
                launch.accept(port);
                return port;
            });
        }
        catch (IllegalStateException e)
        {
            throw closeAfter(e);
        }
    }

    /**
     * Calls {@code launch} with fresh free ports until one returns, and returns what it returned;
     * throws the last attempt's failure if none does.
     */
    protected static <T> T onFreshPorts(IntFunction<T> launch)
    {
        IllegalStateException lastFailure = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++)
        {
            try
            {
                return launch.apply(LocalResources.freeLoopbackPort());
            }
            catch (IllegalStateException e)
            {
                lastFailure = e;
            }
        }
        throw lastFailure;
    }

    /** Starts {@code command} in the directory, appending its output to the two files (which may be one). */
    protected final Process launch(List<String> command, Path stdout, Path stderr)
    {
        return launch(command, environment -> { }, stdout, stderr);
    }

    /** As {@link #launch(List, Path, Path)}, with the environment the process inherits changed by {@code environment}. */
    protected final Process launch(List<String> command, Consumer<Map<String, String>> environment, Path stdout, Path stderr)
    {
        ProcessBuilder builder = new ProcessBuilder(command)
            .directory(directory.toFile())
            .redirectOutput(ProcessBuilder.Redirect.appendTo(stdout.toFile()))
            .redirectError(ProcessBuilder.Redirect.appendTo(stderr.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        // Python (websockify) would buffer its log lines; diagnostics want them as they happen.
        builder.environment().put("PYTHONUNBUFFERED", "1");
        environment.accept(builder.environment());
        Process started;
        try
        {
            started = builder.start();
        }
        catch (IOException e)
        {
            throw new IllegalStateException("cannot run " + command.get(0), e);
        }
        LIVE_PROCESSES.add(started);
        started.onExit().thenRun(() -> LIVE_PROCESSES.remove(started));
        return started;
    }

    /**
     * Runs a short command (redis-cli) in the directory to its end and returns what it printed,
     * both streams together.
     *
     * @throws IllegalStateException if it exits with a non-zero status or runs past {@code timeout}
     */
    protected final String runToEnd(List<String> command, Duration timeout)
    {
        Path output = directory.resolve("command-" + System.nanoTime() + ".log");
        Process process = launch(command, output, output);
        try
        {
            boolean ended = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!ended)
                stop(process, Duration.ZERO);
            String printed = Files.readString(output, StandardCharsets.UTF_8);
            Files.delete(output);
            if (!ended || process.exitValue() != 0)
                throw new IllegalStateException(String.join(" ", command) + (ended ? " exited with status " + process.exitValue() : " ran past " + timeout) + ":\n" + printed);
            return printed;
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command.get(0), e);
        }
    }

    /**
     * Returns once {@code ready} holds. A process that exits first, or is not ready in time, is
     * killed, and the exception says which, with the diagnostics.
     *
     * @param what names the process: {@code "redis-server on port 6379"}
     * @param readiness what it does once ready: {@code "answer PING"}
     */
    protected final void awaitReady(Process process, String what, String readiness, Callable<Boolean> ready)
    {
        try
        {
            await().alias(what + " to " + readiness)
                .atMost(STARTUP_TIMEOUT)
                .pollInterval(POLL_INTERVAL)
                .pollInSameThread()
                .failFast(what + " exited during startup", () -> !process.isAlive())
                .until(ready);
        }
        catch (ConditionTimeoutException | TerminalFailureException e)
        {
            String why = process.isAlive() ? "did not " + readiness + " within " + STARTUP_TIMEOUT : "exited with status " + process.exitValue();
            // Stopped without waiting for its port to close: another process may own the port.
            stop(process, Duration.ofSeconds(2));
            throw new IllegalStateException(what + ' ' + why + '\n' + diagnostics(), e);
        }
    }

    /**
     * SIGKILL to the process and what it forked, as a crash: no chance to close connections or
     * remove pid and lock files. Returns once nothing listens on the port any more; does nothing
     * for a process that is not running (null).
     */
    protected static void crash(Process process, int port)
    {
        if (process == null)
            return;
        stop(process, Duration.ZERO);
        // Process exit and the listening socket disappearing are separate events from the test's
        // point of view; callers asserting "connection refused" must not race the kernel.
        awaitRefusing(port);
    }

    /** Waits until nothing listens on the port any more, as a crashed server's clients see it. */
    private static void awaitRefusing(int port)
    {
        try
        {
            await().alias("port " + port + " refusing connections")
                .atMost(SHUTDOWN_TIMEOUT)
                .pollInterval(POLL_INTERVAL)
                .pollInSameThread()
                .until(() -> refusesConnections(port));
        }
        catch (ConditionTimeoutException e)
        {
            throw new IllegalStateException("port " + port + " still accepts connections after its process died; another process may have taken it", e);
        }
    }

    /**
     * Stops the process and what it forked: SIGTERM, so it can remove its sockets and lock files,
     * then SIGKILL after {@code grace}; a zero grace kills at once, as a crash would.
     */
    protected static void stop(Process process, Duration grace)
    {
        if (process == null)
            return;
        List<ProcessHandle> children = process.descendants().toList();
        try
        {
            if (grace.isZero() || !politely(process, children, grace))
            {
                process.destroyForcibly();
                if (!process.waitFor(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
                    throw new IllegalStateException("pid " + process.pid() + " survived SIGKILL for " + SHUTDOWN_TIMEOUT);
            }
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping pid " + process.pid(), e);
        }
        finally
        {
            children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        }
    }

    private static boolean politely(Process process, List<ProcessHandle> children, Duration grace) throws InterruptedException
    {
        process.destroy();
        children.forEach(ProcessHandle::destroy);
        return process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS);
    }

    protected static boolean acceptsConnections(int port)
    {
        return probe(port) == Probe.ACCEPTED;
    }

    private static boolean refusesConnections(int port)
    {
        return probe(port) == Probe.REFUSED;
    }

    private enum Probe
    {
        ACCEPTED, REFUSED, NO_ANSWER
    }

    private static Probe probe(int port)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(loopback(), port), 250);
            return Probe.ACCEPTED;
        }
        catch (ConnectException e)
        {
            return Probe.REFUSED;
        }
        catch (IOException e)
        {
            // A timeout, or a reset while the process comes up or goes down.
            return Probe.NO_ANSWER;
        }
    }

    protected static InetAddress loopback() throws IOException
    {
        return InetAddress.getByAddress(new byte[]{127, 0, 0, 1});
    }

    /** The last lines of a log, or a note that it is missing or unreadable. */
    protected static String tail(Path file)
    {
        if (!Files.exists(file))
            return "(missing)\n";
        try
        {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            StringBuilder out = new StringBuilder();
            for (String line : lines.subList(Math.max(0, lines.size() - DIAGNOSTIC_LINES), lines.size()))
                out.append(line).append('\n');
            return out.toString();
        }
        catch (IOException | UncheckedIOException e)
        {
            return "(unreadable: " + e + ")\n";
        }
    }

    /** Stops the processes, then deletes the directory; a second call does nothing. */
    @Override
    public final synchronized void close()
    {
        if (closed)
            return;
        closed = true;
        try
        {
            stopProcesses();
        }
        finally
        {
            delete(directory);
            OPEN_DIRECTORIES.remove(directory);
        }
    }

    /**
     * Deletes a scratch directory with what it holds. Jetty's {@code FS} deletes only under
     * {@code target/tests}, which is not where a directory made for a program that drops root lives.
     */
    private static void delete(Path directory)
    {
        if (!Files.exists(directory))
            return;
        try (Stream<Path> paths = Files.walk(directory))
        {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList())
                Files.deleteIfExists(path);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot delete " + directory, e);
        }
    }

    protected final synchronized boolean isClosed()
    {
        return closed;
    }

    /** Stops every process this fixture runs, politely or not as the program deserves. */
    protected abstract void stopProcesses();

    /** For a fixture whose start failed half way: closes it, and returns the failure to throw. */
    protected final <X extends RuntimeException> X closeAfter(X failure)
    {
        try
        {
            close();
        }
        catch (RuntimeException | AssertionError suppressed)
        {
            failure.addSuppressed(suppressed);
        }
        return failure;
    }

    /*
     * Runs on JVM exit, possibly while a test thread still holds a fixture's monitor, so it must
     * not call the synchronized instance methods.
     */
    private static void reapOnJvmExit()
    {
        List<Process> orphans = new ArrayList<>(LIVE_PROCESSES);
        for (Process orphan : orphans)
        {
            orphan.descendants().forEach(ProcessHandle::destroyForcibly);
            // SIGTERM: Xvnc removes its lock file and X socket, which SIGKILL would leave behind.
            orphan.destroy();
        }
        for (Process orphan : orphans)
        {
            try
            {
                if (!orphan.waitFor(2, TimeUnit.SECONDS))
                    orphan.destroyForcibly();
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
                delete(directory);
            }
            catch (RuntimeException | AssertionError e)
            {
                // Best effort: a leftover directory under target/ is harmless, a throwing hook only adds noise.
            }
        }
    }
}
