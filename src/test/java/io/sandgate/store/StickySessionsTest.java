package io.sandgate.store;

import java.time.Duration;
import java.util.Optional;

import io.sandgate.egress.MemoryStickySessions;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Sticky pins expire after their TTL unless used, and each use renews it. */
class StickySessionsTest
{
    @Test
    void pin_expiresAfterTheTtl_unlessUsed()
    {
        MemoryStickySessions sticky = new MemoryStickySessions();
        Duration ttl = Duration.ofMillis(300);
        sticky.put("agent-1", "n1", ttl);
        sticky.put("agent-2", "n2", ttl);
        long end = System.nanoTime() + 600_000_000L;
        // agent-1 is used every 100 ms, well within its TTL, for twice the TTL: it stays pinned.
        while (System.nanoTime() < end)
        {
            assertEquals(Optional.of("n1"), sticky.get("agent-1", ttl));
            await().pollDelay(Duration.ofMillis(100)).until(() -> true);
        }
        assertEquals(Optional.empty(), sticky.get("agent-2", ttl), "unused for longer than its TTL");
    }
}
