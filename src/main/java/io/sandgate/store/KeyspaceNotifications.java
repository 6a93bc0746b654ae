package io.sandgate.store;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.sandgate.config.StoreConfig;
import org.redisson.api.RPatternTopic;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.client.RedisException;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The route store's ear for writes made by any Redis client: keyspace notifications of the route
 * hash ({@code __keyspace@*__:key}), which Redis emits for every {@code HSET}, {@code HDEL} or
 * {@code DEL} whoever sends it, once {@code notify-keyspace-events} says so. They say that the
 * hash changed, not which field.
 *
 * <p>In Redis Cluster and behind Sentinel the events come from whichever master holds the hash's
 * slot, and only if that master has them turned on: Redisson subscribes on every master, the
 * events are turned on at every master, and both are done again when the set of masters changes,
 * which is what a failover looks like from here. Until both are in place the store polls, and the
 * re-read that follows covers what was written meanwhile.</p>
 *
 * <p>Set up on the store's thread; {@link #lost} comes from Redisson's connection listener.</p>
 */
final class KeyspaceNotifications
{
    private static final Logger LOG = LoggerFactory.getLogger(KeyspaceNotifications.class);
    /** K: keyspace channel, h: hash commands, g: DEL/RENAME/EXPIRE, x: expired keys. */
    private static final String REQUIRED_EVENTS = "Khgx";

    private final RedissonClient redisson;
    private final StoreConfig.Redis config;
    private final RPatternTopic topic;
    private final Runnable onChange;
    /** Whether our PSUBSCRIBE is in place; only the store thread sets it true. */
    private volatile boolean subscribed;
    /** Whether the server emits the events and we hear them; until then, poll. */
    private volatile boolean confirmed;
    /** The masters the events were turned on at and subscribed to; another set means a failover. */
    private volatile Set<InetSocketAddress> watched = Set.of();

    /**
     * @param keyPattern the hash's name as a glob pattern that matches it alone
     * @param onChange told of every notification, on a Redisson thread
     */
    KeyspaceNotifications(RedissonClient redisson, String keyPattern, StoreConfig.Redis config, Runnable onChange)
    {
        this.redisson = redisson;
        this.config = config;
        this.topic = redisson.getPatternTopic("__keyspace@*__:" + keyPattern, StringCodec.INSTANCE);
        this.onChange = onChange;
    }

    /** Whether every change of the hash is heard; if not, the store polls. */
    boolean confirmed()
    {
        return confirmed;
    }

    /**
     * A connection was lost. A restarted Redis has forgotten notify-keyspace-events and our
     * subscription, and events sent while we were away are lost: both are set up again.
     */
    void lost()
    {
        subscribed = false;
        confirmed = false;
    }

    /** Redis did not answer: whether the events still come is unknown until they are set up again. */
    void unconfirmed()
    {
        confirmed = false;
    }

    /**
     * Notices a failover that put a replica in charge of the hash: it has neither the events turned
     * on (only masters get CONFIG SET) nor our PSUBSCRIBE, and a planned failover drops no
     * connection that would have told us.
     */
    void checkMasters()
    {
        if (!knownMasters().equals(watched))
            lost();
    }

    /** Subscribes and turns the events on, whichever is not in place; throws when Redis does not answer. */
    void setUp()
    {
        if (!subscribed)
            subscribe();
        if (!confirmed)
        {
            // Asked after subscribing, which connects a client that is still lazy.
            List<? extends RedisNode> masters = masters();
            confirmed = enable(masters);
            watched = addresses(masters);
        }
    }

    /**
     * (Re)places the pattern subscription. Done by hand rather than trusting the client's own
     * resubscription, because a subscription made while Redis was unreachable never completes.
     */
    private void subscribe()
    {
        // Asynchronous with a bound of our own: a dead master's PUNSUBSCRIBE would otherwise hold
        // the store's thread, and with it every re-read, for Redisson's whole subscription timeout.
        long bound = config.timeout().toMillis() * 2;
        topic.removeAllListenersAsync().toCompletableFuture().orTimeout(bound, TimeUnit.MILLISECONDS).join();
        // In a cluster Redisson places one PSUBSCRIBE on every master, as each emits the events of
        // its own slots only.
        topic.addListenerAsync(String.class, (pattern, channel, event) -> onChange.run())
            .toCompletableFuture().orTimeout(bound, TimeUnit.MILLISECONDS).join();
        subscribed = true;
    }

    /** Turns the events on where they are emitted: on every master, each for its own slots. */
    private boolean enable(List<? extends RedisNode> masters)
    {
        // Not connected yet (the client is lazy): nothing is confirmed, the next tick tries again.
        if (masters.isEmpty())
            return false;
        try
        {
            for (RedisNode node : masters)
            {
                String current = node.getConfig("notify-keyspace-events").getOrDefault("notify-keyspace-events", "");
                String wanted = merge(current);
                if (!wanted.equals(current))
                    node.setConfig("notify-keyspace-events", wanted);
            }
            return true;
        }
        catch (RedisException x)
        {
            if (x.getMessage() != null && x.getMessage().contains("ERR"))
            {
                // CONFIG is often renamed or forbidden on managed Redis: say how to fix it, and poll.
                LOG.warn("Route store: cannot enable keyspace notifications ({}); set notify-keyspace-events to include '{}' on the server. Polling every {} meanwhile.",
                    x.getMessage(), REQUIRED_EVENTS, config.pollInterval());
                return false;
            }
            throw x;
        }
    }

    /** The masters as the client knows them, without asking Redis; none before it has connected. */
    private Set<InetSocketAddress> knownMasters()
    {
        try
        {
            return addresses(masters());
        }
        catch (RuntimeException x)
        {
            return Set.of();
        }
    }

    private static Set<InetSocketAddress> addresses(List<? extends RedisNode> nodes)
    {
        return nodes.stream().map(RedisNode::getAddr).collect(Collectors.toSet());
    }

    private List<? extends RedisNode> masters()
    {
        if (!config.clusterNodes().isEmpty())
            return new ArrayList<>(redisson.getRedisNodes(RedisNodes.CLUSTER).getMasters());
        if (!config.sentinelNodes().isEmpty())
            return List.of(redisson.getRedisNodes(RedisNodes.SENTINEL_MASTER_SLAVE).getMaster());
        return List.of(redisson.getRedisNodes(RedisNodes.SINGLE).getInstance());
    }

    /** Adds the flags we need to the server's current ones, keeping whatever else it emits. */
    private static String merge(String current)
    {
        if (current.contains("A") && current.contains("K"))
            return current;
        StringBuilder flags = new StringBuilder(current);
        for (char flag : REQUIRED_EVENTS.toCharArray())
        {
            boolean covered = flags.indexOf(String.valueOf(flag)) >= 0 || (flag != 'K' && flags.indexOf("A") >= 0);
            if (!covered)
                flags.append(flag);
        }
        return flags.toString();
    }
}
