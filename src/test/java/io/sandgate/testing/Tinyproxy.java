package io.sandgate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

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
public final class Tinyproxy extends ProxyProcess
{

    private Tinyproxy(String name)
    {
        super("tinyproxy", name);
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
        Path executable = executable("tinyproxy", "apt-get install -y tinyproxy (scripts/test.sh does this)", "/usr/bin", "/usr/sbin");
        Set<Integer> allowed = new LinkedHashSet<>();
        allowed.add(443);
        for (int p : connectPorts)
            allowed.add(p);
        Tinyproxy proxy = new Tinyproxy(name);
        proxy.onAFreePort(port -> proxy.launch(executable, port, allowed));
        return proxy;
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
    public String diagnostics()
    {
        return log();
    }

    @Override
    protected void stopProcesses()
    {
        // SIGTERM first: tinyproxy then closes its sockets and removes its pid file.
        stop(process, Duration.ofSeconds(2));
    }

    private void launch(Path executable, int port, Set<Integer> connectPorts)
    {
        this.port = port;
        Path config = directory.resolve("tinyproxy.conf");
        List<String> lines = new ArrayList<>(List.of(
            "Port " + port,
            "Listen 127.0.0.1",
            "Timeout 30",
            "MaxClients 64",
            "Allow 127.0.0.1",
            // LogFile rather than Syslog; the two are mutually exclusive.
            "LogFile \"" + logFile() + "\"",
            "LogLevel Info",
            "PidFile \"" + directory.resolve("tinyproxy.pid") + "\"",
            "ViaProxyName \"" + name() + "\""));
        // No User/Group: run as whoever runs the tests (root in CI logs a warning and stays root),
        // so the directory stays writable for log and pid file.
        for (int p : connectPorts)
            lines.add("ConnectPort " + p);
        try
        {
            Files.write(config, lines, StandardCharsets.UTF_8);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot write " + config, e);
        }
        run(List.of(executable.toString(), "-d", "-c", config.toString()), directory.resolve("tinyproxy.pid"));
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
}
