package io.sandgate.web;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many of something (requests in progress, open streams) each client holds, up to a limit. A
 * client that holds none takes no memory, so addresses seen once do not pile up.
 */
public final class ClientCounts
{
    private final int limit;
    /**
     * Each client's count, from 1 up while it holds any. A count that reaches 0 is spent: it leaves
     * the map and no one takes from it again, so a client that comes back gets a fresh one. Taking
     * and giving back are then one compare-and-set each, not a lock on the map's bin, which two
     * selector threads serving one busy client would contend for on every request.
     */
    private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

    /** @param limit how many one client may hold at once */
    public ClientCounts(int limit)
    {
        if (limit < 1)
            throw new IllegalArgumentException("limit: " + limit + " (expected: >= 1)");
        this.limit = limit;
    }

    public int limit()
    {
        return limit;
    }

    /** Takes one for the client; false, with nothing taken, when it holds the limit already. */
    public boolean tryAcquire(String client)
    {
        while (true)
        {
            AtomicInteger held = counts.get(client);
            if (held == null)
            {
                if (counts.putIfAbsent(client, new AtomicInteger(1)) == null)
                    return true;
                continue;
            }
            int count = held.get();
            if (count == 0)
            {
                // Spent by a release that has yet to remove it: help, and start a fresh one.
                counts.remove(client, held);
                continue;
            }
            if (count >= limit)
                return false;
            if (held.compareAndSet(count, count + 1))
                return true;
        }
    }

    /** Gives one back; a client holding none is forgotten. */
    public void release(String client)
    {
        // The count taken from is still the one in the map: it cannot be spent while it counts this one.
        AtomicInteger held = counts.get(client);
        if (held == null)
            return;
        while (true)
        {
            int count = held.get();
            if (count <= 0)
                return;
            if (held.compareAndSet(count, count - 1))
            {
                if (count == 1)
                    counts.remove(client, held);
                return;
            }
        }
    }

    /** How many the client holds now. */
    public int count(String client)
    {
        AtomicInteger held = counts.get(client);
        return held == null ? 0 : held.get();
    }

    /** How many clients hold at least one. */
    public int clients()
    {
        return counts.size();
    }
}
