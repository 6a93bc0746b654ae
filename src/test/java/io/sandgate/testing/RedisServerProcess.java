package io.sandgate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

/**
 * A real {@code redis-server} child process on a free loopback port, for tests that need genuine
 * Redis behaviour (Redisson reconnects, keyspace semantics) rather than a fake.
 *
 * <p>The server is ephemeral by construction: no RDB snapshots, no AOF, a private working
 * directory. {@link #kill()} and {@link #restart()} exist so tests can exercise what the gateway
 * does when Redis disappears abruptly and comes back empty on the same address.
 */
public final class RedisServerProcess extends ProcessFixture
{
    private final Path executable;
    private final boolean persistent;
    private int port;
    private Process process;

    private RedisServerProcess(Path executable, boolean persistent)
    {
        super("redis");
        this.executable = executable;
        this.persistent = persistent;
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
        RedisServerProcess server = new RedisServerProcess(executable("redis-server", "apt-get install redis-server"), persistent);
        server.onAFreePort(port ->
        {
            server.port = port;
            server.launchAndAwaitPong();
        });
        return server;
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
        Process dying = process;
        process = null;
        crash(dying, port);
    }

    /**
     * Stops the server's process (SIGSTOP) until {@link #thaw}: its connections stay open and
     * nothing on them is answered, as with a Redis that hangs rather than goes away.
     */
    public synchronized void freeze()
    {
        signal("STOP");
    }

    /** Lets a {@link #freeze frozen} server run again (SIGCONT). */
    public synchronized void thaw()
    {
        signal("CONT");
    }

    private void signal(String name)
    {
        if (process == null)
            throw new IllegalStateException("redis-server on port " + port + " is not running");
        try
        {
            int exit = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start().waitFor();
            if (exit != 0)
                throw new IllegalStateException("kill -" + name + " exited with " + exit);
        }
        catch (IOException x)
        {
            throw new UncheckedIOException(x);
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(x);
        }
    }

    /**
     * Kills the server if it is running and starts a new, empty one on the same port, returning
     * once it answers PING. The port is kept because clients under test hold the address and are
     * expected to reconnect to it.
     */
    public synchronized void restart()
    {
        if (isClosed())
            throw new IllegalStateException("redis-server on port " + port + " is closed");
        kill();
        launchAndAwaitPong();
    }

    @Override
    protected void stopProcesses()
    {
        kill();
    }

    @Override
    public String diagnostics()
    {
        return "--- " + consoleFile() + '\n' + tail(consoleFile()) + "--- " + logFile() + '\n' + tail(logFile());
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
        // Config errors are printed before the log file is opened: the console keeps them.
        Process started = launch(command, consoleFile(), consoleFile());
        process = started;
        try
        {
            awaitReady(started, "redis-server on port " + port, "answer PING", () -> answersPong(port));
        }
        catch (IllegalStateException e)
        {
            process = null;
            throw e;
        }
    }

    private Path consoleFile()
    {
        return directory.resolve("redis-console.log");
    }

    static boolean answersPong(int port)
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
}
