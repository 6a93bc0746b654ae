package io.sandgate.egress;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.sandgate.egress.StickySessions;

/** Sticky pins in this process; expired pins are dropped when read or on the next write sweep. */
public final class MemoryStickySessions implements StickySessions
{
    private record Pin(String nodeId, long expiresAt)
    {
    }

    private final Map<String, Pin> pins = new ConcurrentHashMap<>();

    @Override
    public Optional<String> get(String sessionKey, Duration ttl)
    {
        long now = System.nanoTime();
        Pin pin = pins.get(sessionKey);
        if (pin == null || now - pin.expiresAt() > 0)
        {
            if (pin != null)
                pins.remove(sessionKey, pin);
            return Optional.empty();
        }
        pins.put(sessionKey, new Pin(pin.nodeId(), now + ttl.toNanos()));
        return Optional.of(pin.nodeId());
    }

    @Override
    public void put(String sessionKey, String nodeId, Duration ttl)
    {
        long now = System.nanoTime();
        if (pins.size() > 100_000)
            pins.values().removeIf(pin -> now - pin.expiresAt() > 0);
        pins.put(sessionKey, new Pin(nodeId, now + ttl.toNanos()));
    }
}
