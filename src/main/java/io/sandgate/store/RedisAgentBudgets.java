package io.sandgate.store;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.sandgate.config.AgentPolicy;
import io.sandgate.egress.AgentBudgets;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.LongCodec;

/**
 * Agents' budget counters in Redis: one key per agent and budget, expiring with its window, added
 * to, checked and counted in one script, so that a call costs one round trip and replicas racing
 * for the last call of a window cannot both get it. An agent's keys share a hash tag, so that a
 * cluster keeps them on one node.
 */
final class RedisAgentBudgets implements AgentBudgets
{
    private static final String[] NAMES = {AgentPolicy.Budgets.REQUESTS_PER_MINUTE, AgentPolicy.Budgets.REQUEST_BYTES_PER_HOUR,
        AgentPolicy.Budgets.RESPONSE_BYTES_PER_HOUR};

    /**
     * KEYS: requests, request bytes, response bytes. ARGV: the three maxima (0: none), the request and
     * response bytes to add, whether a call is counted (1 or 0), the minute and the hour in ms.
     * Returns {0, 0} when the call may go, else {budget (1 to 3, as KEYS), ms until its window ends}.
     */
    private static final String TAKE = "local function add(key, n, window) "
        + "  if n > 0 and redis.call('INCRBY', key, n) == n or redis.call('PTTL', key) == -1 then redis.call('PEXPIRE', key, window) end "
        + "end "
        + "local function left(key, window) local ttl = redis.call('PTTL', key) if ttl < 1 then return window end return ttl end "
        + "if tonumber(ARGV[2]) > 0 then add(KEYS[2], tonumber(ARGV[4]), ARGV[8]) end "
        + "if tonumber(ARGV[3]) > 0 then add(KEYS[3], tonumber(ARGV[5]), ARGV[8]) end "
        + "if ARGV[6] ~= '1' then return {0, 0} end "
        + "for i = 2, 3 do "
        + "  local max = tonumber(ARGV[i]) "
        + "  if max > 0 and tonumber(redis.call('GET', KEYS[i]) or '0') >= max then return {i, left(KEYS[i], ARGV[8])} end "
        + "end "
        + "local max = tonumber(ARGV[1]) "
        + "if max > 0 then "
        + "  if tonumber(redis.call('GET', KEYS[1]) or '0') + 1 > max then return {1, left(KEYS[1], ARGV[7])} end "
        + "  add(KEYS[1], 1, ARGV[7]) "
        + "end "
        + "return {0, 0}";

    private final RScript script;

    RedisAgentBudgets(RedissonClient redisson)
    {
        this.script = redisson.getScript(LongCodec.INSTANCE);
    }

    @Override
    public CompletableFuture<Verdict> take(String agent, AgentPolicy.Budgets budgets, boolean call, long requestBytes, long responseBytes)
    {
        String tag = "sandgate:egress:budget:{" + agent.length() + ":" + agent + "}:";
        List<Object> keys = List.of(tag + "requests", tag + "request-bytes", tag + "response-bytes");
        Object[] args = {budgets.requestsPerMinute(), budgets.requestBytesPerHour(), budgets.responseBytesPerHour(), requestBytes, responseBytes,
            call ? 1 : 0, MINUTE_MILLIS, HOUR_MILLIS};
        return script.<List<Object>>evalAsync((String)keys.get(0), RScript.Mode.READ_WRITE, TAKE, RScript.ReturnType.LIST, keys, args)
            .toCompletableFuture()
            .thenApply(RedisAgentBudgets::verdict);
    }

    private static Verdict verdict(List<Object> result)
    {
        int budget = ((Number)result.get(0)).intValue();
        return budget == 0 ? Verdict.GO : new Verdict(NAMES[budget - 1], Math.max(1, ((Number)result.get(1)).longValue()));
    }

    private static final long MINUTE_MILLIS = 60_000;
    private static final long HOUR_MILLIS = 3_600_000;
}
