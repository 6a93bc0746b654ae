package io.sandgate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Debian's real {@code squid} as a child process on a free loopback port, the egress node most
 * deployments run. Its configuration is the package's own {@code /etc/squid/squid.conf}, read at
 * start, with only what a test needs changed:
 * <ul>
 *   <li>{@code http_port} is {@code 127.0.0.1:<free port>} instead of 3128;</li>
 *   <li>an ACL allows loopback clients (stock squid already allows {@code localhost});</li>
 *   <li>{@code SSL_ports}, the ports CONNECT may reach (stock: 443 only), also lists the ports
 *       passed to {@link #start(String, int...)}, typically the target's https port;</li>
 *   <li>pid file and logs go to the scratch directory, and shutdown waits 1 s instead of 30.</li>
 * </ul>
 * Everything else stays stock: {@code Safe_ports}, {@code deny CONNECT !SSL_ports}, the Via and
 * X-Forwarded-For squid adds. Squid drops root for its {@code proxy} user, so the scratch
 * directory is opened to it.
 */
public final class Squid extends ProxyProcess
{
    private static final Path STOCK_CONFIG = Path.of("/etc/squid/squid.conf");


    private Squid(String name)
    {
        // Squid drops root for its proxy user, which must reach its logs: the system's temporary
        // directory is open to every user wherever the clone sits.
        super("squid", name, Path.of(System.getProperty("java.io.tmpdir")));
    }

    /**
     * Starts squid and returns once its port accepts connections.
     *
     * @param name         the node's name in the pool (squid's Via names its host, not this)
     * @param connectPorts ports CONNECT may reach besides 443, typically {@code target.httpsPort()}
     * @throws IllegalStateException if squid is not installed or does not come up
     */
    public static Squid start(String name, int... connectPorts)
    {
        Objects.requireNonNull(name, "name");
        Path executable = executable("squid", "apt-get install -y squid (scripts/test.sh does this)", "/usr/sbin");
        if (!Files.isRegularFile(STOCK_CONFIG))
            throw new IllegalStateException(STOCK_CONFIG + " is missing; install Debian's squid package (scripts/test.sh does this)");
        Squid squid = new Squid(name);
        squid.onAFreePort(port -> squid.launch(executable, port, connectPorts));
        return squid;
    }

    @Override
    public String diagnostics()
    {
        return tail(directory.resolve("cache.log")) + tail(directory.resolve("console.log"));
    }

    @Override
    protected void stopProcesses()
    {
        // SIGTERM: squid closes its ports and, after shutdown_lifetime, exits.
        stop(process, Duration.ofSeconds(5));
    }

    private void launch(Path executable, int port, int[] connectPorts)
    {
        this.port = port;
        Path config = directory.resolve("squid.conf");
        try
        {
            Files.write(config, config(port, connectPorts), StandardCharsets.UTF_8);
            // The proxy user squid switches to writes its logs and pid file here.
            Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxrwxrwx"));
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot write " + config, e);
        }
        // -N: in the foreground and without a master process, so that this process is squid itself.
        run(List.of(executable.toString(), "-N", "-f", config.toString()), directory.resolve("squid.pid"));
    }

    /** The stock configuration, changed only where the class comment says. */
    private List<String> config(int port, int[] connectPorts) throws IOException
    {
        List<String> lines = new ArrayList<>();
        for (String line : Files.readAllLines(STOCK_CONFIG, StandardCharsets.UTF_8))
        {
            String trimmed = line.trim();
            if (trimmed.startsWith("http_port "))
            {
                lines.add("http_port 127.0.0.1:" + port);
                continue;
            }
            if (trimmed.equals("http_access deny all"))
            {
                lines.add("acl sandgate_loopback src 127.0.0.0/8");
                lines.add("http_access allow sandgate_loopback");
            }
            lines.add(line);
            if (trimmed.startsWith("acl SSL_ports port 443"))
            {
                for (int p : connectPorts)
                    lines.add("acl SSL_ports port " + p);
            }
        }
        lines.add("pid_filename " + directory.resolve("squid.pid"));
        lines.add("access_log stdio:" + directory.resolve("access.log"));
        lines.add("cache_log " + directory.resolve("cache.log"));
        lines.add("coredump_dir " + directory);
        lines.add("netdb_filename none");
        lines.add("shutdown_lifetime 1 seconds");
        return lines;
    }
}
