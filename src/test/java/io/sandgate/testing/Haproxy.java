package io.sandgate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Debian's HAProxy as a child process on a free loopback port: a round-robin balancer in front of
 * gateway replicas, as a deployment has one, taking a replica out when its {@code /readyz} fails.
 * Checks run every 200 ms and two failures (a 503 from a replica that drains) take a replica out,
 * so that a drain's grace of a couple of seconds is long enough for it to notice. Each answer says which replica gave it
 * ({@code X-Replica}), and WebSockets pass as tunnels. The configuration and the log are in the
 * fixture's scratch directory.
 */
public final class Haproxy extends ProcessFixture
{
    /** The answer header naming the replica (its name in {@link #start}) that answered. */
    public static final String REPLICA_HEADER = "X-Replica";

    private Process process;
    private int port;

    private Haproxy()
    {
        super("haproxy");
    }

    /**
     * Starts HAProxy and returns once its port accepts connections.
     *
     * @param replicas name to port of each replica on loopback, in the order round robin takes them
     * @throws IllegalStateException if HAProxy is not installed or does not come up
     */
    public static Haproxy roundRobin(Map<String, Integer> replicas)
    {
        Path executable = executable("haproxy", "apt-get install -y haproxy (scripts/test.sh does this)", "/usr/sbin");
        Haproxy haproxy = new Haproxy();
        haproxy.onAFreePort(port -> haproxy.launch(executable, port, replicas));
        return haproxy;
    }

    public int port()
    {
        return port;
    }

    /** The balancer's base URL, to which clients send everything. */
    public String baseUrl()
    {
        return "http://127.0.0.1:" + port;
    }

    @Override
    public String diagnostics()
    {
        return "--- haproxy log\n" + tail(directory.resolve("haproxy.log"));
    }

    @Override
    protected void stopProcesses()
    {
        stop(process, Duration.ofSeconds(2));
    }

    private void launch(Path executable, int port, Map<String, Integer> replicas)
    {
        this.port = port;
        List<String> lines = new ArrayList<>(List.of(
            "global",
            "  maxconn 1024",
            "  log stdout format raw local0 info",
            "defaults",
            "  mode http",
            "  log global",
            "  option httplog",
            "  timeout connect 2s",
            "  timeout client 60s",
            "  timeout server 60s",
            "  timeout tunnel 1h",
            // Its default is the check interval: on a busy machine a readiness answer takes longer
            // than 200 ms now and then, and every replica would be taken out for being slow.
            "  timeout check 2s",
            // A connection refused by a replica that is gone but not yet marked down goes to another.
            "  retries 2",
            "  option redispatch",
            "frontend gateway",
            "  bind 127.0.0.1:" + port,
            "  default_backend replicas",
            "backend replicas",
            "  balance roundrobin",
            "  option httpchk GET /readyz",
            "  http-check expect status 200",
            "  http-response set-header " + REPLICA_HEADER + " %s",
            "  default-server inter 200ms fall 2 rise 2"));
        replicas.forEach((name, replicaPort) -> lines.add("  server " + name + " 127.0.0.1:" + replicaPort + " check"));
        Path config = directory.resolve("haproxy.cfg");
        try
        {
            Files.write(config, lines);
        }
        catch (IOException x)
        {
            throw new UncheckedIOException("cannot write " + config, x);
        }
        Path log = directory.resolve("haproxy.log");
        // -db: in the foreground, so that the fixture owns the process it started.
        process = launch(List.of(executable.toString(), "-db", "-f", config.toString()), log, log);
        awaitReady(process, "haproxy on port " + port, "accept connections", () -> acceptsConnections(port));
    }
}
