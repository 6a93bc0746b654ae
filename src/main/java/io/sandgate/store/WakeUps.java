package io.sandgate.store;

import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * How the replica that appends to a session's event log wakes the replica holding the client's
 * stream: the channel's name, the command the append script publishes with, and the topic a
 * subscriber listens on. The three must agree, so they are chosen together, once per store.
 */
enum WakeUps
{
    /** {@code PUBLISH} on {@code mcp-server-sse:<sessionId>}, Higress's naming: every topology. */
    BROADCAST("PUBLISH")
    {
        @Override
        String channel(String sessionId)
        {
            return "mcp-server-sse:" + sessionId;
        }

        @Override
        RTopic topic(RedissonClient redisson, String sessionId)
        {
            return redisson.getTopic(channel(sessionId), StringCodec.INSTANCE);
        }
    },
    /**
     * {@code SPUBLISH} (Redis 7) on {@code mcp-server-sse:{<sessionId>}}, meant for Redis Cluster:
     * a cluster forwards a plain PUBLISH to every node over its bus, while a shard channel stays
     * with the shard owning its slot. The hash tag puts the channel in the slot of the session's
     * keys, which the append script needs: a script may only touch its own slot. Not chosen for now
     * (see {@link RedisStore}): Redisson 4.7.0 keeps the subscription across a failover but not
     * across a resharding. Still tested, to be chosen again once that holds.
     */
    SHARDED("SPUBLISH")
    {
        @Override
        String channel(String sessionId)
        {
            return "mcp-server-sse:{" + sessionId + "}";
        }

        @Override
        RTopic topic(RedissonClient redisson, String sessionId)
        {
            return redisson.getShardedTopic(channel(sessionId), StringCodec.INSTANCE);
        }
    };

    /** The publishing command, as the append script calls it. */
    final String command;

    WakeUps(String command)
    {
        this.command = command;
    }

    abstract String channel(String sessionId);

    abstract RTopic topic(RedissonClient redisson, String sessionId);
}
