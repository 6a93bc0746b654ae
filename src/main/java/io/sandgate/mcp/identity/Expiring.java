package io.sandgate.mcp.identity;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Answers kept until a time each, by a key that is never a token itself (its digest, a principal):
 * verified tokens, introspection answers, exchanged tokens. Bounded: past {@link #MAX} entries the
 * expired go, and if that is not enough, all, so that a flood of distinct tokens costs memory for
 * {@code MAX} of them at most.
 */
final class Expiring<V>
{
    static final int MAX = 10_000;

    private record Entry<V>(V value, Instant until)
    {
    }

    private final Map<String, Entry<V>> entries = new ConcurrentHashMap<>();
    private final int max;

    Expiring()
    {
        this(MAX);
    }

    /** @param max how many entries are kept at most */
    Expiring(int max)
    {
        this.max = max;
    }

    /** The value kept under the key, or null when there is none or it expired. */
    V get(String key, Instant now)
    {
        Entry<V> entry = entries.get(key);
        return entry == null || !entry.until().isAfter(now) ? null : entry.value();
    }

    void put(String key, V value, Instant until, Instant now)
    {
        if (entries.size() >= max)
        {
            entries.values().removeIf(entry -> !entry.until().isAfter(now));
            if (entries.size() >= max)
                entries.clear();
        }
        entries.put(key, new Entry<>(value, until));
    }

    int size()
    {
        return entries.size();
    }
}
