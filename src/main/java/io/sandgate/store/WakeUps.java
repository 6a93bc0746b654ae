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
    /** {@code PUBLISH} on {@code mcp-server-sse:<sessionId>}, Higress's naming: one server, or Sentinel. */
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
     * {@code SPUBLISH} (Redis 7) on {@code mcp-server-sse:{<sessionId>}}, for Redis Cluster. A
     * cluster forwards a plain PUBLISH to every node over its bus, so every node would carry every
     * session's messages; a shard channel stays with the shard owning its slot, and Redisson moves
     * the subscription when that slot fails over. The hash tag puts the channel in the slot of the
     * session's keys, which the append script needs: a script may only touch its own slot.
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
