package io.sandgate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntPredicate;

import org.eclipse.jetty.toolchain.test.FS;

import static org.awaitility.Awaitility.await;

/**
 * Several {@code redis-server} processes of one fixture, each on a free loopback port in a directory
 * of its own: what {@link RedisCluster} and {@link RedisSentinels} have in common. Like
 * {@link RedisServerProcess} the servers keep nothing on disk but what Redis insists on (a cluster's
 * node table, a sentinel's configuration).
 */
abstract class RedisProcesses extends ProcessFixture implements ReplicatedRedis
{
    private static final Duration CLI_TIMEOUT = Duration.ofSeconds(10);

    protected final Path server = executable("redis-server", "apt-get install redis-server");
    protected final Path cli = executable("redis-cli", "apt-get install redis-tools");
    protected final List<Node> nodes = new ArrayList<>();

    /** One server; its process is null once killed. */
    protected static final class Node
    {
        final String name;
        final int port;
        final Path home;
        volatile Process process;

        private Node(String name, int port, Path home)
        {
            this.name = name;
            this.port = port;
            this.home = home;
        }

        boolean alive()
        {
            Process running = process;
            return running != null && running.isAlive();
        }

        Path log()
        {
            return home.resolve("redis.log");
        }

        @Override
        public String toString()
        {
            return name + "@" + port;
        }
    }

    protected RedisProcesses(String name)
    {
        super(name);
    }

    /**
     * Starts a server named {@code name} on a free port with the command {@code command} makes for
     * it, and returns once it answers PING; a server that lost its port to another process is
     * started again on a fresh one.
     */
    protected final Node startNode(String name, Function<Node, List<String>> command)
    {
        return onFreshPorts(port ->
        {
            Node node = new Node(name, port, directory.resolve(name));
            // A failed attempt's files (a cluster node's table names its port) must not be read by the next.
            FS.ensureEmpty(node.home);
            Path console = node.home.resolve("console.log");
            node.process = launch(command.apply(node), console, console);
            // Listed before it is ready, so that a failure's diagnostics include its log.
            nodes.add(node);
            try
            {
                awaitReady(node.process, name + " on port " + node.port, "answer PING", () -> RedisServerProcess.answersPong(node.port));
            }
            catch (IllegalStateException e)
            {
                nodes.remove(node);
                throw e;
            }
            return node;
        });
    }

    /**
     * Starts the fixture's servers with {@code start} and returns the fixture; if they do not come
     * up, closes it and says why, with the servers' logs.
     */
    protected static <T extends RedisProcesses> T started(T fixture, Consumer<T> start)
    {
        try
        {
            start.accept(fixture);
            return fixture;
        }
        catch (RuntimeException e)
        {
            throw fixture.closeAfter(new IllegalStateException(fixture + " did not come up\n" + fixture.diagnostics(), e));
        }
    }

    /** Returns once every one of {@code servers} passes {@code ready}, asked by its port; {@code readiness} says what that means. */
    protected final void awaitEach(List<Node> servers, String readiness, IntPredicate ready, Duration atMost)
    {
        await().alias(servers + " to " + readiness).atMost(atMost).pollInterval(POLL_INTERVAL).ignoreExceptions()
            .until(() -> servers.stream().allMatch(node -> ready.test(node.port)));
    }

    /** What every server here starts with: loopback only, no snapshots, its own directory and log. */
    protected final List<String> serverCommand(Node node, String... more)
    {
        List<String> command = new ArrayList<>(List.of(server.toString(),
            "--port", Integer.toString(node.port),
            "--bind", "127.0.0.1",
            "--protected-mode", "no",
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
            "--dir", node.home.toString(),
            "--logfile", node.log().toString()));
        command.addAll(List.of(more));
        return command;
    }

    protected final Node node(int port)
    {
        return nodes.stream().filter(node -> node.port == port).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("no server of " + this + " on port " + port));
    }

    /** SIGKILL, as a crash; returns once the port refuses connections. */
    protected final void kill(Node node)
    {
        Process dying = node.process;
        node.process = null;
        crash(dying, node.port);
    }

    /** A reply of the server on that port, through a client of the test's own. */
    protected static Object command(int port, String... args)
    {
        try (RawRedis redis = RawRedis.connect(port))
        {
            return redis.command(args);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether the server on that port calls itself a master ({@code INFO replication}). */
    protected static boolean isMaster(int port)
    {
        return ((String)command(port, "INFO", "replication")).contains("role:master");
    }

    /** Runs redis-cli against the server on that port; {@code -c} follows a cluster's redirections. */
    protected final String cli(int port, boolean cluster, String... args)
    {
        List<String> command = new ArrayList<>(List.of(cli.toString(), "-h", "127.0.0.1", "-p", Integer.toString(port)));
        if (cluster)
            command.add("-c");
        command.addAll(List.of(args));
        return runToEnd(command, CLI_TIMEOUT).trim();
    }

    @Override
    public String diagnostics()
    {
        StringBuilder out = new StringBuilder();
        for (Node node : nodes)
            out.append("--- ").append(node).append(' ').append(node.log()).append('\n').append(tail(node.log()));
        return out.toString();
    }

    @Override
    protected void stopProcesses()
    {
        for (Node node : nodes)
        {
            Process running = node.process;
            node.process = null;
            stop(running, Duration.ZERO);
        }
    }

    @Override
    public String toString()
    {
        return getClass().getSimpleName() + nodes + "[dir=" + directory + "]";
    }
}
