package io.sandgate.testing;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

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
public final class VncSandbox extends ProcessFixture
{
    /** What {@code scripts/test.sh} runs for this fixture; named in every "not installed" message. */
    public static final String INSTALL_COMMAND =
            "apt-get install tigervnc-standalone-server x11-xserver-utils websockify (or run ./scripts/test.sh)";

    /* SIGTERM first: Xvnc then removes its lock file and X socket, which SIGKILL would leave behind. */
    private static final Duration GRACE = Duration.ofSeconds(5);
    private static final Pattern HEX_COLOUR = Pattern.compile("[0-9a-fA-F]{6}");

    private final String colour;
    private final Path webRoot;
    private Process xvnc;
    private Process websockify;
    private int display = -1;
    private int vncPort;
    private int websockifyPort;

    private VncSandbox(String colour, Path webRoot)
    {
        super("vnc");
        this.colour = colour;
        this.webRoot = webRoot;
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

        VncSandbox sandbox = new VncSandbox(xsetrootColour(colour), webRoot.toAbsolutePath());
        sandbox.vncPort = sandbox.onAFreePort(port -> sandbox.startXvnc(xvnc, port));
        try
        {
            sandbox.paint(xsetroot);
        }
        catch (RuntimeException e)
        {
            throw sandbox.closeAfter(e);
        }
        sandbox.websockifyPort = sandbox.onAFreePort(port -> sandbox.startWebsockify(websockify, port));
        return sandbox;
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
    @Override
    public String diagnostics()
    {
        return "--- Xvnc :" + display + " (" + colour + ")\n" + tail(directory.resolve("xvnc.log"))
                + "--- websockify " + hostPort() + " --web " + webRoot + '\n' + tail(directory.resolve("websockify.log"));
    }

    /** Stops websockify (and its per-connection children), then Xvnc. */
    @Override
    protected void stopProcesses()
    {
        try
        {
            stop(websockify, GRACE);
            stop(xvnc, GRACE);
        }
        finally
        {
            websockify = null;
            xvnc = null;
        }
    }

    @Override
    public String toString()
    {
        return "VncSandbox[" + colour + ", display :" + display + ", vnc " + vncPort + ", http " + hostPort() + "]";
    }

    private void startXvnc(Path executable, int port)
    {
        Path displayFile = directory.resolve("display-" + port);
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
        xvnc = launch(command, displayFile, directory.resolve("xvnc.log"));
        vncPort = port;
        awaitReady(xvnc, "Xvnc on port " + port, "answer with an RFB banner", () -> readDisplay(displayFile) >= 0 && sendsRfbBanner(port));
        display = readDisplay(displayFile);
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

    private void startWebsockify(Path executable, int port)
    {
        List<String> command = List.of(
            executable.toString(),
            "--web", webRoot.toString(),
            "127.0.0.1:" + port,
            "127.0.0.1:" + vncPort);
        Path log = directory.resolve("websockify.log");
        websockify = launch(command, log, log);
        websockifyPort = port;
        awaitReady(websockify, "websockify on port " + port, "accept connections", () -> acceptsConnections(port));
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

    private static String xsetrootColour(String colour)
    {
        return HEX_COLOUR.matcher(colour).matches() ? "#" + colour : colour;
    }
}
