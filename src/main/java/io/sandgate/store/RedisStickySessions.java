package io.sandgate.store;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import io.sandgate.egress.MemoryStickySessions;
import io.sandgate.egress.StickySessions;
import org.redisson.api.RMapCache;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Sticky pins in a Redisson map cache ({@code sandgate:egress:sticky}) with a TTL per entry, so every
 * replica pins an agent session to the same node. While Redis is unreachable, pins are not shared:
 * requests still go through a healthy node, only the stickiness is lost.
 */
final class RedisStickySessions implements StickySessions
{
    private final RMapCache<String, String> pins;
    private final MemoryStickySessions fallback = new MemoryStickySessions();
    private final RedisWaits waits;

    RedisStickySessions(RedissonClient redisson, RedisWaits waits)
    {
        this.pins = redisson.getMapCache("sandgate:egress:sticky", StringCodec.INSTANCE);
        this.waits = waits;
    }

    @Override
    public Optional<String> get(String sessionKey, Duration ttl)
    {
        try
        {
            String node = waits.call("sticky sessions", () -> pins.get(sessionKey));
            if (node != null)
                pins.fastPutAsync(sessionKey, node, ttl.toMillis(), TimeUnit.MILLISECONDS);
            return Optional.ofNullable(node);
        }
        catch (RuntimeException x)
        {
            return fallback.get(sessionKey, ttl);
        }
    }

    @Override
    public void put(String sessionKey, String nodeId, Duration ttl)
    {
        try
        {
            waits.call("sticky sessions", () -> pins.fastPut(sessionKey, nodeId, ttl.toMillis(), TimeUnit.MILLISECONDS));
        }
        catch (RuntimeException x)
        {
            fallback.put(sessionKey, nodeId, ttl);
        }
    }
}
