package io.sandgate.egress;

import java.time.Duration;
import java.util.Optional;

/**
 * Which egress node an agent session is pinned to, with a sliding TTL; in memory for one replica,
 * a TTL map in Redis for several, so every replica pins a session to the same node.
 */
public interface StickySessions
{
    /** The pinned node, renewing the pin's TTL. */
    Optional<String> get(String sessionKey, Duration ttl);

    void put(String sessionKey, String nodeId, Duration ttl);
}
