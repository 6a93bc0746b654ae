package io.sandgate.store;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.sandgate.mcp.CallQuotas;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.LongCodec;

/**
 * Tool-call counters in Redis: one key per limit, expiring with its window, checked and counted in
 * one script, so that a call costs one round trip and replicas racing for the last call of a window
 * cannot both get it. The caller's keys share a hash tag, so that a cluster keeps them on one node.
 */
final class RedisCallQuotas implements CallQuotas
{
    /** KEYS: the limits' keys, a key once per call it counts; ARGV: each key's max and window (ms), in turn. */
    private static final String TAKE = "local wait = 0 "
        + "local counts = {} "
        + "for _, key in ipairs(KEYS) do counts[key] = (counts[key] or 0) + 1 end "
        + "for i, key in ipairs(KEYS) do "
        + "  local current = tonumber(redis.call('GET', key) or '0') "
        + "  if current + counts[key] > tonumber(ARGV[2 * i - 1]) then "
        + "    local ttl = redis.call('PTTL', key) "
        + "    if ttl < 1 then ttl = tonumber(ARGV[2 * i]) end "
        + "    if ttl > wait then wait = ttl end "
        + "  end "
        + "end "
        + "if wait > 0 then return wait end "
        + "for i, key in ipairs(KEYS) do "
        + "  if redis.call('INCR', key) == 1 or redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ARGV[2 * i]) end "
        + "end "
        + "return 0";

    private final RScript script;

    RedisCallQuotas(RedissonClient redisson)
    {
        this.script = redisson.getScript(LongCodec.INSTANCE);
    }

    @Override
    public CompletableFuture<Long> take(List<Limit> limits)
    {
        if (limits.isEmpty())
            return CompletableFuture.completedFuture(0L);
        List<Object> keys = new ArrayList<>();
        List<Object> args = new ArrayList<>();
        for (Limit limit : limits)
        {
            keys.add("sandgate:quota:" + limit.key());
            args.add(limit.max());
            args.add(Math.max(1, limit.window().toMillis()));
        }
        return script.<Long>evalAsync((String)keys.get(0), RScript.Mode.READ_WRITE, TAKE, RScript.ReturnType.LONG, keys, args.toArray())
            .toCompletableFuture();
    }
}
