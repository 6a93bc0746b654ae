package io.sandgate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

import org.eclipse.jetty.toolchain.test.MavenPaths;

/**
 * A real forward-proxy program run as an egress node ({@link Tinyproxy}, {@link Squid}): its name
 * in the pool, the free port its launch was given, and its process. {@link #kill()} and
 * {@link #restart()} crash the node and bring it back on the same port and configuration, as a
 * supervisor restarting a crashed proxy would.
 */
public abstract class ProxyProcess extends ProcessFixture implements ProxyNode
{
    private final String program;
    private final String name;
    /** Set by the subclass's launch, to the port it tries. */
    protected int port;
    protected Process process;
    /** What {@link #run} was given, for {@link #restart()}. */
    private List<String> command;
    private Path pidFile;

    protected ProxyProcess(String program, String name)
    {
        this(program, name, MavenPaths.targetTests());
    }

    /** @param parent where the scratch directory is made (see {@link ProcessFixture#ProcessFixture(String, Path)}) */
    protected ProxyProcess(String program, String name, Path parent)
    {
        super(program, parent);
        this.program = program;
        this.name = Objects.requireNonNull(name, "name");
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public int port()
    {
        return port;
    }

    /**
     * Runs the program and returns once {@link #port} accepts connections.
     *
     * @param command names the configuration, which names the port; run as it is again on restart
     * @param pidFile where the program writes its pid, which a crash leaves behind
     */
    protected final void run(List<String> command, Path pidFile)
    {
        this.command = List.copyOf(command);
        this.pidFile = pidFile;
        run();
    }

    private void run()
    {
        Path console = directory.resolve("console.log");
        process = launch(command, console, console);
        awaitReady(process, program + " on port " + port, "accept connections", () -> acceptsConnections(port));
    }

    /**
     * SIGKILL to the program and to what it forked (squid's pinger), as a crash: no chance to close
     * its sockets or remove its pid file. Returns once the port refuses connections; does nothing
     * if the program is not running.
     */
    public synchronized void kill()
    {
        Process dying = process;
        process = null;
        crash(dying, port);
    }

    /** Kills the program if it runs and starts it again on the same port; returns once the port accepts connections. */
    public synchronized void restart()
    {
        if (isClosed())
            throw new IllegalStateException(this + " is closed");
        kill();
        try
        {
            // A crash leaves the pid file behind, and squid refuses to start while the pid in it
            // still names a process: the killed one not reaped yet, or another given its pid.
            Files.deleteIfExists(pidFile);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot remove " + pidFile, e);
        }
        run();
    }

    @Override
    public String toString()
    {
        return getClass().getSimpleName() + "[" + name + " " + address() + "]";
    }
}
