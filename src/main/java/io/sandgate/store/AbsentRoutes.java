package io.sandgate.store;

import java.time.Clock;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Sandbox ids that Redis recently said have no route, so that a browser polling a sandbox that is
 * not ready yet, or a client sending made-up ids, costs Redis one HGET per id and TTL rather than
 * one per request.
 *
 * <p>Each entry carries the route store's change count from when its HGET was sent, and counts
 * only while that is still the count. A keyspace notification does not say which field changed,
 * so one change must forget every entry: bumping the count does that at once, without walking
 * them, and a read that raced with a write is never remembered as an absence. The TTL bounds what
 * a notification lost without a disconnect can hide.</p>
 */
final class AbsentRoutes
{
    private record Entry(long changes, long expiresMillis)
    {
    }

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final long ttlMillis;
    private final int capacity;
    private final Clock clock;

    /**
     * @param ttl how long an absence is believed; zero remembers none
     * @param capacity most ids remembered
     */
    AbsentRoutes(Duration ttl, int capacity, Clock clock)
    {
        if (ttl.isNegative())
            throw new IllegalArgumentException("ttl: " + ttl + " (expected: >= 0)");
        if (capacity < 1)
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: > 0)");
        this.ttlMillis = ttl.toMillis();
        this.capacity = capacity;
        this.clock = clock;
    }

    /**
     * @param changes the store's change count now
     * @return whether the id is known to have no route
     */
    boolean contains(String id, long changes)
    {
        Entry entry = entries.get(id);
        if (entry == null)
            return false;
        if (valid(entry, changes, clock.millis()))
            return true;
        entries.remove(id, entry);
        return false;
    }

    /**
     * Remembers that an HGET found no route for the id.
     *
     * @param sent the store's change count when the HGET was sent
     * @param changes the store's change count now; when it moved, the HGET may have missed a write
     */
    void add(String id, long sent, long changes)
    {
        if (ttlMillis == 0 || sent != changes)
            return;
        if (entries.size() >= capacity)
            evict(changes);
        entries.put(id, new Entry(sent, clock.millis() + ttlMillis));
    }

    /** Forgets the id, whose route this replica has just written. */
    void remove(String id)
    {
        entries.remove(id);
    }

    /** Ids remembered, some of them possibly no longer valid. */
    int size()
    {
        return entries.size();
    }

    private static boolean valid(Entry entry, long changes, long now)
    {
        return entry.changes() == changes && now - entry.expiresMillis() < 0;
    }

    /**
     * Cheap bound rather than LRU, as for the cached routes: what is no longer valid goes first,
     * then arbitrary entries, a tenth at least, so that the walk is paid once per many additions.
     */
    private void evict(long changes)
    {
        int drop = Math.max(1, capacity / 10);
        long now = clock.millis();
        Iterator<Entry> walk = entries.values().iterator();
        while (walk.hasNext())
        {
            if (!valid(walk.next(), changes, now))
            {
                walk.remove();
                drop--;
            }
        }
        walk = entries.values().iterator();
        while (drop-- > 0 && walk.hasNext())
        {
            walk.next();
            walk.remove();
        }
    }
}
