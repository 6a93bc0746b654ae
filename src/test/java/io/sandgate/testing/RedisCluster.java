package io.sandgate.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;

/**
 * A Redis Cluster of six real {@code redis-server} processes on loopback: three masters, each with
 * one replica, made by {@code redis-cli --cluster create} as an operator would. Killing a master
 * lets its replica take over its slots after {@link #NODE_TIMEOUT}.
 */
public final class RedisCluster extends RedisProcesses
{
    private static final int MASTERS = 3;
    /**
     * How long a master may be silent before its replica takes over: low, so that a failover takes
     * seconds in a test; Redis's default is 15 s.
     */
    public static final Duration NODE_TIMEOUT = Duration.ofMillis(2000);
    private static final Duration FORMING_TIMEOUT = Duration.ofSeconds(30);

    private RedisCluster()
    {
        super("redis-cluster");
    }

    /**
     * Starts six servers, joins them into a cluster and returns once every node sees every slot
     * served and every replica is in sync with its master.
     */
    public static RedisCluster start()
    {
        return started(new RedisCluster(), cluster ->
        {
            List<String> create = new ArrayList<>(List.of(cluster.cli.toString(), "--cluster", "create"));
            for (int i = 0; i < 2 * MASTERS; i++)
                create.add("127.0.0.1:" + cluster.startNode("node-" + i, cluster::nodeCommand).port);
            create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
            cluster.runToEnd(create, FORMING_TIMEOUT);
            cluster.awaitEach(cluster.nodes, "serve every slot, with every replica in sync", cluster::formed, FORMING_TIMEOUT);
        });
    }

    private List<String> nodeCommand(Node node)
    {
        return serverCommand(node,
            "--cluster-enabled", "yes",
            "--cluster-config-file", node.home.resolve("nodes.conf").toString(),
            // A port of its own for the bus rather than port + 10000, which may be taken or past 65535.
            "--cluster-port", Integer.toString(busPort(node.port)),
            "--cluster-node-timeout", Long.toString(NODE_TIMEOUT.toMillis()),
            // The slots of a dead master wait for its replica; the other masters' slots keep serving.
            "--cluster-require-full-coverage", "no");
    }

    /**
     * A free port for a node's bus, not its client port: that one is not bound yet either, and the
     * kernel may hand a just-probed port out again.
     */
    private static int busPort(int clientPort)
    {
        int bus;
        do
            bus = LocalResources.freeLoopbackPort();
        while (bus == clientPort);
        return bus;
    }

    private boolean formed(int port)
    {
        String cluster = (String)command(port, "CLUSTER", "INFO");
        String replication = (String)command(port, "INFO", "replication");
        return cluster.contains("cluster_state:ok") && cluster.contains("cluster_known_nodes:" + 2 * MASTERS)
            && (replication.contains("connected_slaves:1") || replication.contains("master_link_status:up"));
    }

    /** Every node, as {@code host:port}: Redisson learns the topology from any of them. */
    @Override
    public Map<String, Object> storeSettings()
    {
        return Map.of("store.redis.cluster-nodes", nodes.stream().map(node -> "127.0.0.1:" + node.port).toList());
    }

    @Override
    public String cli(String... args)
    {
        return cli(anyLiveNode().port, true, args);
    }

    @Override
    public int masterOf(String key)
    {
        int asked = anyLiveNode().port;
        long slot = (Long)command(asked, "CLUSTER", "KEYSLOT", key);
        for (Object range : (List<?>)command(asked, "CLUSTER", "SLOTS"))
        {
            List<?> slots = (List<?>)range;
            if ((Long)slots.get(0) <= slot && slot <= (Long)slots.get(1))
                return ((Long)((List<?>)slots.get(2)).get(1)).intValue();
        }
        throw new IllegalStateException("no master serves slot " + slot + " of " + key + " as node " + asked + " sees it");
    }

    @Override
    public int killMasterOf(String key)
    {
        int port = masterOf(key);
        kill(node(port));
        return port;
    }

    @Override
    public int awaitPromotion(String key, Duration atMost)
    {
        int[] promoted = new int[1];
        await().alias("a replica to take over the slot of " + key).atMost(atMost).pollInterval(POLL_INTERVAL).ignoreExceptions().until(() ->
        {
            promoted[0] = masterOf(key);
            return node(promoted[0]).alive() && isMaster(promoted[0])
                && ((String)command(promoted[0], "CLUSTER", "INFO")).contains("cluster_state:ok");
        });
        return promoted[0];
    }

    /**
     * Moves the slot of {@code key}, its keys included, to another master, the steps an operator's
     * resharding takes ({@code CLUSTER SETSLOT} IMPORTING and MIGRATING, {@code MIGRATE}, then
     * {@code SETSLOT NODE} on every master); returns the port of the master that now serves it.
     */
    public int moveSlotOf(String key)
    {
        int from = masterOf(key);
        String slot = command(from, "CLUSTER", "KEYSLOT", key).toString();
        List<Integer> masters = nodes.stream().filter(Node::alive).map(node -> node.port).filter(RedisProcesses::isMaster).toList();
        int to = masters.stream().filter(port -> port != from).findFirst().orElseThrow();
        String fromId = (String)command(from, "CLUSTER", "MYID");
        String toId = (String)command(to, "CLUSTER", "MYID");
        command(to, "CLUSTER", "SETSLOT", slot, "IMPORTING", fromId);
        command(from, "CLUSTER", "SETSLOT", slot, "MIGRATING", toId);
        List<?> keys;
        while (!(keys = (List<?>)command(from, "CLUSTER", "GETKEYSINSLOT", slot, "100")).isEmpty())
        {
            List<String> migrate = new ArrayList<>(List.of("MIGRATE", "127.0.0.1", Integer.toString(to), "", "0", "5000", "KEYS"));
            keys.forEach(k -> migrate.add((String)k));
            command(from, migrate.toArray(String[]::new));
        }
        // The new owner first, then the old, as redis-cli does: a client sent back and forth in between is told the truth.
        command(to, "CLUSTER", "SETSLOT", slot, "NODE", toId);
        command(from, "CLUSTER", "SETSLOT", slot, "NODE", toId);
        for (int port : masters)
        {
            if (port != from && port != to)
                command(port, "CLUSTER", "SETSLOT", slot, "NODE", toId);
        }
        return to;
    }

    private Node anyLiveNode()
    {
        return nodes.stream().filter(Node::alive).findFirst().orElseThrow(() -> new IllegalStateException("every node of " + this + " is dead"));
    }
}
