package io.sandgate.web;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How many of something (requests in progress, open streams) each client holds, up to a limit. A
 * client that holds none takes no memory, so addresses seen once do not pile up.
 */
public final class ClientCounts
{
    private final int limit;
    private final Map<String, Integer> counts = new ConcurrentHashMap<>();

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
        boolean[] taken = {false};
        counts.compute(client, (key, held) ->
        {
            int count = held == null ? 0 : held;
            if (count >= limit)
                return held;
            taken[0] = true;
            return count + 1;
        });
        return taken[0];
    }

    /** Gives one back; a client holding none is forgotten. */
    public void release(String client)
    {
        counts.computeIfPresent(client, (key, held) -> held <= 1 ? null : held - 1);
    }

    /** How many the client holds now. */
    public int count(String client)
    {
        return counts.getOrDefault(client, 0);
    }

    /** How many clients hold at least one. */
    public int clients()
    {
        return counts.size();
    }
}
