package io.sandgate.store;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BiFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.core.StoreUnavailableException;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RoutePage;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Pages of the route hash's fields that match a pattern, read with HSCAN and MATCH, never the whole
 * hash: a hash of many routes must not hold Redis up, nor a search for a rare prefix the caller.
 * The cursor a page hands on is {@code <HSCAN cursor>:<pairs to skip>}, as a page may fill up
 * within one HSCAN step and the next must start where it stopped.
 */
final class RouteSearch
{
    /**
     * One HSCAN step, its field-value pairs flattened after the cursor. Through a script because
     * Redisson's own map scans hide the cursor, and a page must hand it on to the next request.
     */
    private static final String HSCAN = "local r = redis.call('HSCAN', KEYS[1], ARGV[1], 'MATCH', ARGV[2], 'COUNT', ARGV[3]) "
        + "local out = {r[1]} for _, v in ipairs(r[2]) do out[#out + 1] = v end return out";
    /** Fields HSCAN looks at per step: small enough that no step holds Redis up. */
    private static final int SCAN_COUNT = 1000;
    /** Steps one page may take, so that a rare prefix in a huge hash answers in bounded time, with a next page. */
    private static final int SCAN_STEPS_PER_PAGE = 200;
    private static final Pattern CURSOR = Pattern.compile("(\\d{1,20}):(\\d{1,7})");

    private final RScript script;
    private final String key;
    private final BiFunction<String, String, Route> parse;

    /** @param parse the route of an id and its stored value, null for a value that is no route */
    RouteSearch(RedissonClient redisson, String key, BiFunction<String, String, Route> parse)
    {
        this.script = redisson.getScript(StringCodec.INSTANCE);
        this.key = key;
        this.parse = parse;
    }

    /**
     * @param match the ids' glob pattern, as HSCAN's MATCH takes it
     * @param cursor the next of a page this search gave, or null for the first page
     */
    RoutePage page(String match, String cursor, int limit)
    {
        String scan = "0";
        int skip = 0;
        if (cursor != null)
        {
            Matcher parsed = CURSOR.matcher(cursor);
            if (!parsed.matches())
                throw new IllegalArgumentException("cursor: " + cursor + " (expected: the next of a page this store gave)");
            scan = parsed.group(1);
            skip = Integer.parseInt(parsed.group(2));
        }
        Map<String, Route> found = new TreeMap<>();
        try
        {
            for (int step = 0; step < SCAN_STEPS_PER_PAGE; step++)
            {
                List<String> reply = script.eval(key, RScript.Mode.READ_ONLY, HSCAN, RScript.ReturnType.LIST, List.of(key),
                    scan, match, Integer.toString(SCAN_COUNT));
                String following = reply.get(0);
                for (int pair = skip; pair < (reply.size() - 1) / 2; pair++)
                {
                    if (found.size() == limit)
                        return new RoutePage(found, Optional.of(scan + ":" + pair));
                    String id = reply.get(1 + 2 * pair);
                    Route route = parse.apply(id, reply.get(2 + 2 * pair));
                    if (route != null)
                        found.put(id, route);
                }
                skip = 0;
                if (following.equals("0"))
                    return new RoutePage(found, Optional.empty());
                scan = following;
                if (found.size() == limit)
                    break;
            }
        }
        catch (RuntimeException x)
        {
            throw new StoreUnavailableException("route store unreachable", x);
        }
        return new RoutePage(found, Optional.of(scan + ":0"));
    }
}
