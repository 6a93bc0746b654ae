package io.sandgate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;

/**
 * Redis with Sentinel, all real processes on loopback: one master, one replica, and three
 * {@code redis-server --sentinel} watching them with a quorum of two. Killing the master lets the
 * sentinels promote the replica after {@link #DOWN_AFTER}.
 */
public final class RedisSentinels extends RedisProcesses
{
    public static final String MASTER_NAME = "sandgate";
    private static final int SENTINELS = 3;
    /** How long the master may be silent before the sentinels call it down: low, so a failover takes seconds. */
    public static final Duration DOWN_AFTER = Duration.ofMillis(1000);
    private static final Duration MONITORING_TIMEOUT = Duration.ofSeconds(30);

    private final List<Node> sentinels = new ArrayList<>();

    private RedisSentinels()
    {
        super("redis-sentinel");
    }

    /**
     * Starts the master, its replica and the sentinels, and returns once the replica is in sync and
     * every sentinel knows the replica and the two other sentinels, so that a failover can be voted.
     */
    public static RedisSentinels start()
    {
        return started(new RedisSentinels(), redis ->
        {
            Node master = redis.startNode("master", node -> redis.serverCommand(node));
            redis.startNode("replica", node -> redis.serverCommand(node, "--replicaof", "127.0.0.1", Integer.toString(master.port)));
            for (int i = 0; i < SENTINELS; i++)
                redis.sentinels.add(redis.startNode("sentinel-" + i, node -> redis.sentinelCommand(node, master.port)));
            redis.awaitEach(redis.sentinels, "know the replica and each other", redis::monitoring, MONITORING_TIMEOUT);
        });
    }

    /** A sentinel rewrites its configuration file as it learns, so it gets one of its own. */
    private List<String> sentinelCommand(Node node, int masterPort)
    {
        Path file = node.home.resolve("sentinel.conf");
        try
        {
            Files.writeString(file, String.join("\n",
                "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + masterPort + " 2",
                "sentinel down-after-milliseconds " + MASTER_NAME + " " + DOWN_AFTER.toMillis(),
                // A failover whose election split the sentinels' votes is tried again after twice this:
                // at 10 s the retry came after the tests' 20 s of patience.
                "sentinel failover-timeout " + MASTER_NAME + " 4000",
                "sentinel parallel-syncs " + MASTER_NAME + " 1",
                ""));
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
        List<String> command = serverCommand(node);
        command.add(1, file.toString());
        command.add(2, "--sentinel");
        return command;
    }

    private boolean monitoring(int sentinel)
    {
        List<?> replicas = (List<?>)command(sentinel, "SENTINEL", "REPLICAS", MASTER_NAME);
        List<?> others = (List<?>)command(sentinel, "SENTINEL", "SENTINELS", MASTER_NAME);
        return replicas.size() == 1 && "slave".equals(field((List<?>)replicas.get(0), "flags"))
            && "ok".equals(field((List<?>)replicas.get(0), "master-link-status"))
            && others.size() == SENTINELS - 1;
    }

    /** A field of a sentinel's flat name-value reply. */
    private static Object field(List<?> flat, String name)
    {
        for (int i = 0; i + 1 < flat.size(); i += 2)
        {
            if (name.equals(flat.get(i)))
                return flat.get(i + 1);
        }
        return null;
    }

    @Override
    public Map<String, Object> storeSettings()
    {
        return Map.of("store.redis.sentinel-nodes", sentinels.stream().map(node -> "127.0.0.1:" + node.port).toList(),
            "store.redis.sentinel-master", MASTER_NAME);
    }

    @Override
    public String cli(String... args)
    {
        return cli(master(), false, args);
    }

    /** Sentinel has one master for every key. */
    @Override
    public int masterOf(String key)
    {
        return master();
    }

    @Override
    public int killMasterOf(String key)
    {
        int port = master();
        kill(node(port));
        return port;
    }

    @Override
    public int awaitPromotion(String key, Duration atMost)
    {
        int[] promoted = new int[1];
        await().alias("the sentinels to promote the replica").atMost(atMost).pollInterval(POLL_INTERVAL).ignoreExceptions().until(() ->
        {
            promoted[0] = master();
            return node(promoted[0]).alive() && isMaster(promoted[0]);
        });
        return promoted[0];
    }

    /** The master's port as a live sentinel names it. */
    private int master()
    {
        Node sentinel = sentinels.stream().filter(Node::alive).findFirst().orElseThrow(() -> new IllegalStateException("no sentinel of " + this + " runs"));
        List<?> address = (List<?>)command(sentinel.port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
        return Integer.parseInt((String)address.get(1));
    }
}
