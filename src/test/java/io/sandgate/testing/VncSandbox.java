package io.sandgate.testing;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;

/**
 * One real VNC sandbox as a pod would run it: a TigerVNC {@code Xvnc} server whose root window is
 * painted a solid colour, behind a {@code websockify} that serves a noVNC web root and bridges
 * WebSockets to the VNC port. Both are child processes on loopback only.
 *
 * <p>The colour makes the sandbox recognisable from a browser: a noVNC canvas showing it proves
 * the page, its scripts and its WebSocket all reached this sandbox and no other.
 *
 * <p>Needs Debian's {@code tigervnc-standalone-server}, {@code x11-xserver-utils} and
 * {@code websockify}; {@code scripts/test.sh} installs them.
 */
public final class VncSandbox implements AutoCloseable
{
    /** What {@code scripts/test.sh} runs for this fixture; named in every "not installed" message. */
    public static final String INSTALL_COMMAND =
            "apt-get install tigervnc-standalone-server x11-xserver-utils websockify (or run ./scripts/test.sh)";

    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration POLL_INTERVAL = Duration.ofMillis(25);
    private static final int START_ATTEMPTS = 3;
    private static final int DIAGNOSTIC_LINES = 30;
    private static final Pattern HEX_COLOUR = Pattern.compile("[0-9a-fA-F]{6}");

    /*
     * As in RedisServerProcess: a test that fails before close(), or Surefire ending its fork with
     * System.exit, must not leave X servers and proxies behind holding displays and ports.
     */
    private static final Set<Process> LIVE_PROCESSES = ConcurrentHashMap.newKeySet();
    private static final Set<Path> OPEN_DIRECTORIES = ConcurrentHashMap.newKeySet();

    static
    {
        Runtime.getRuntime().addShutdownHook(new Thread(VncSandbox::reapOnJvmExit, "vnc-sandbox-reaper"));
    }

    private final String colour;
    private final Path webRoot;
    private final Path directory;
    private Process xvnc;
    private Process websockify;
    private int display = -1;
    private int vncPort;
    private int websockifyPort;
    private boolean closed;

    private VncSandbox(String colour, Path webRoot, Path directory)
    {
        this.colour = colour;
        this.webRoot = webRoot;
        this.directory = directory;
    }

    /**
     * Starts Xvnc on a free display, paints its root window {@code colour} (an X colour name, or
     * hex RGB such as {@code ff0000}), starts websockify serving {@code webRoot}, and returns once
     * the VNC server answers with its RFB banner and websockify accepts connections.
     *
     * @throws IllegalStateException if a program is missing (the message names the install
     *     command) or does not come up
     */
    public static VncSandbox start(String colour, Path webRoot)
    {
        if (!Files.isDirectory(webRoot))
        {
            throw new IllegalArgumentException("web root " + webRoot + " is not a directory");
        }
        Path xvnc = LocalResources.executable("Xvnc");
        Path xsetroot = LocalResources.executable("xsetroot");
        Path websockify = LocalResources.executable("websockify");
        List<String> missing = new ArrayList<>();
        if (xvnc == null)
        {
            missing.add("Xvnc");
        }
        if (xsetroot == null)
        {
            missing.add("xsetroot");
        }
        if (websockify == null)
        {
            missing.add("websockify");
        }
        if (!missing.isEmpty())
        {
            throw new IllegalStateException(String.join(", ", missing) + " not found on PATH ("
                    + System.getenv("PATH") + "). VNC sandbox tests run a real VNC server; install with: "
                    + INSTALL_COMMAND);
        }

        Path directory;
        try
        {
            directory = Files.createTempDirectory("sandgate-vnc-");
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot create a working directory for Xvnc", e);
        }
        OPEN_DIRECTORIES.add(directory);
        VncSandbox sandbox = new VncSandbox(xsetrootColour(colour), webRoot.toAbsolutePath(), directory);
        try
        {
            sandbox.startXvnc(xvnc);
            sandbox.paint(xsetroot);
            sandbox.startWebsockify(websockify);
            return sandbox;
        }
        catch (RuntimeException e)
        {
            try
            {
                sandbox.close();
            }
            catch (RuntimeException suppressed)
            {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** The sandbox's address as a route target: {@code 127.0.0.1:<websockify port>}. */
    public String hostPort()
    {
        return "127.0.0.1:" + websockifyPort;
    }

    public int websockifyPort()
    {
        return websockifyPort;
    }

    public int vncPort()
    {
        return vncPort;
    }

    /** The X display number, as in {@code :N}. */
    public int display()
    {
        return display;
    }

    /** The colour the root window was painted, as given to xsetroot. */
    public String colour()
    {
        return colour;
    }

    /** The tails of the Xvnc and websockify logs; worth attaching to a failure message. */
    public String diagnostics()
    {
        return "--- Xvnc :" + display + " (" + colour + ")\n" + tail(directory.resolve("xvnc.log"))
                + "--- websockify " + hostPort() + " --web " + webRoot + '\n' + tail(directory.resolve("websockify.log"));
    }

    /** Stops websockify (and its per-connection children) and Xvnc, and deletes the working directory. */
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
            stop(websockify);
            stop(xvnc);
        }
        finally
        {
            websockify = null;
            xvnc = null;
            LocalResources.deleteRecursively(directory);
            OPEN_DIRECTORIES.remove(directory);
        }
    }

    @Override
    public String toString()
    {
        return "VncSandbox[" + colour + ", display :" + display + ", vnc " + vncPort + ", http " + hostPort() + "]";
    }

    private void startXvnc(Path executable)
    {
        IllegalStateException lastFailure = null;
        // The free port is only free when probed; a lost race shows up as an early exit.
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++)
        {
            int port = LocalResources.freeLoopbackPort();
            Path displayFile = directory.resolve("display-" + attempt);
            // -displayfd: the X server picks a free display itself (no lock-file races with other
            // X servers on the machine) and writes its number to stdout, here a file.
            List<String> command = List.of(
                    executable.toString(),
                    "-displayfd", "1",
                    "-rfbport", Integer.toString(port),
                    "-localhost",
                    "-SecurityTypes", "None",
                    "-geometry", "640x480",
                    "-depth", "24",
                    "-nolisten", "tcp",
                    "-AlwaysShared");
            Process started = launch(command, displayFile, directory.resolve("xvnc.log"));
            xvnc = started;
            vncPort = port;
            try
            {
                await().alias("Xvnc answering with an RFB banner on port " + port)
                        .atMost(STARTUP_TIMEOUT)
                        .pollInterval(POLL_INTERVAL)
                        .pollInSameThread()
                        .failFast("Xvnc exited during startup", () -> !started.isAlive())
                        .until(() -> readDisplay(displayFile) >= 0 && sendsRfbBanner(port));
                display = readDisplay(displayFile);
                return;
            }
            catch (ConditionTimeoutException | TerminalFailureException e)
            {
                lastFailure = new IllegalStateException("Xvnc on port " + port + ' '
                        + (started.isAlive() ? "did not answer within " + STARTUP_TIMEOUT
                        : "exited with status " + started.exitValue()) + '\n' + diagnostics(), e);
                stop(started);
                xvnc = null;
            }
        }
        throw lastFailure;
    }

    private void paint(Path xsetroot)
    {
        // The display accepts clients by the time the RFB port answers; a failure is retried
        // briefly in case the X socket trails the VNC listener.
        List<String> command = List.of(xsetroot.toString(), "-display", ":" + display, "-solid", colour);
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        String output = "";
        while (System.nanoTime() < deadline)
        {
            try
            {
                Process p = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
                if (!p.waitFor(5, TimeUnit.SECONDS))
                {
                    p.destroyForcibly();
                    output = "timed out";
                    continue;
                }
                output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                if (p.exitValue() == 0)
                {
                    return;
                }
                Thread.sleep(POLL_INTERVAL.toMillis());
            }
            catch (IOException e)
            {
                throw new IllegalStateException("cannot run " + xsetroot, e);
            }
            catch (InterruptedException e)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while painting display :" + display, e);
            }
        }
        throw new IllegalStateException("xsetroot could not paint display :" + display + " " + colour + ": "
                + output + '\n' + diagnostics());
    }

    private void startWebsockify(Path executable)
    {
        IllegalStateException lastFailure = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++)
        {
            int port = LocalResources.freeLoopbackPort();
            List<String> command = List.of(
                    executable.toString(),
                    "--web", webRoot.toString(),
                    "127.0.0.1:" + port,
                    "127.0.0.1:" + vncPort);
            Path log = directory.resolve("websockify.log");
            Process started = launch(command, log, log);
            websockify = started;
            websockifyPort = port;
            try
            {
                await().alias("websockify accepting connections on port " + port)
                        .atMost(STARTUP_TIMEOUT)
                        .pollInterval(POLL_INTERVAL)
                        .pollInSameThread()
                        .failFast("websockify exited during startup", () -> !started.isAlive())
                        .until(() -> acceptsConnections(port));
                return;
            }
            catch (ConditionTimeoutException | TerminalFailureException e)
            {
                lastFailure = new IllegalStateException("websockify on port " + port + ' '
                        + (started.isAlive() ? "did not listen within " + STARTUP_TIMEOUT
                        : "exited with status " + started.exitValue()) + '\n' + diagnostics(), e);
                stop(started);
                websockify = null;
            }
        }
        throw lastFailure;
    }

    private Process launch(List<String> command, Path stdout, Path stderr)
    {
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(directory.toFile())
                .redirectOutput(ProcessBuilder.Redirect.appendTo(stdout.toFile()))
                .redirectError(ProcessBuilder.Redirect.appendTo(stderr.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        // Python would buffer websockify's log lines; diagnostics want them as they happen.
        builder.environment().put("PYTHONUNBUFFERED", "1");
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

    /*
     * SIGTERM first: Xvnc then removes its lock file and X socket, which SIGKILL would leave
     * behind. websockify forks one child per connection; those are stopped with it.
     */
    private static void stop(Process process)
    {
        if (process == null)
        {
            return;
        }
        List<ProcessHandle> children = process.descendants().toList();
        process.destroy();
        children.forEach(ProcessHandle::destroy);
        try
        {
            if (!process.waitFor(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
            {
                process.destroyForcibly();
                if (!process.waitFor(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
                {
                    throw new IllegalStateException("pid " + process.pid() + " survived SIGKILL for " + SHUTDOWN_TIMEOUT);
                }
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

    private static int readDisplay(Path displayFile)
    {
        try
        {
            String text = Files.exists(displayFile) ? Files.readString(displayFile, StandardCharsets.US_ASCII) : "";
            // The number is complete once its newline is written.
            return text.endsWith("\n") ? Integer.parseInt(text.trim()) : -1;
        }
        catch (IOException | NumberFormatException e)
        {
            return -1;
        }
    }

    private static boolean sendsRfbBanner(int port)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(loopback(), port), 250);
            socket.setSoTimeout(1000);
            InputStream in = socket.getInputStream();
            byte[] banner = in.readNBytes(12);
            return new String(banner, StandardCharsets.US_ASCII).startsWith("RFB ");
        }
        catch (IOException e)
        {
            return false;
        }
    }

    private static boolean acceptsConnections(int port)
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

    private static String xsetrootColour(String colour)
    {
        return HEX_COLOUR.matcher(colour).matches() ? "#" + colour : colour;
    }

    private static InetAddress loopback() throws IOException
    {
        return InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
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

    /* Runs on JVM exit, possibly while a test thread holds an instance's monitor: no instance methods. */
    private static void reapOnJvmExit()
    {
        List<Process> orphans = new ArrayList<>(LIVE_PROCESSES);
        for (Process orphan : orphans)
        {
            orphan.descendants().forEach(ProcessHandle::destroyForcibly);
            orphan.destroy();
        }
        for (Process orphan : orphans)
        {
            try
            {
                if (!orphan.waitFor(2, TimeUnit.SECONDS))
                {
                    orphan.destroyForcibly();
                }
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
