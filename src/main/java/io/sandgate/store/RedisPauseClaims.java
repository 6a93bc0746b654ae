package io.sandgate.store;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.sandgate.ingress.lifecycle.PauseClaims;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Pause claims shared by the replicas: {@code sandgate:pause:<id>} holds when the claim was made
 * (epoch millis) and expires on its own. Claimed in one script, so that two leaders for an instant
 * (one demoted, one elected) cannot both find the spell unclaimed.
 */
final class RedisPauseClaims implements PauseClaims
{
    private static final String PREFIX = "sandgate:pause:";
    /** ARGV: the spell's start, now, the claim's time to live in milliseconds. */
    private static final String CLAIM = "local made = tonumber(redis.call('GET', KEYS[1])) "
        + "if made and made >= tonumber(ARGV[1]) then return 0 end "
        + "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1";

    private final RedissonClient redisson;
    private final RScript script;
    private final Clock clock;

    /** @param clock when a claim is made, on the clock the leader judges idle spells by */
    RedisPauseClaims(RedissonClient redisson, Clock clock)
    {
        this.redisson = redisson;
        this.script = redisson.getScript(StringCodec.INSTANCE);
        this.clock = clock;
    }

    @Override
    public CompletableFuture<Boolean> claim(String sandboxId, long idleSince, Duration ttl)
    {
        String key = PREFIX + sandboxId;
        return script.<Boolean>evalAsync(key, RScript.Mode.READ_WRITE, CLAIM, RScript.ReturnType.BOOLEAN, List.of(key),
            Long.toString(idleSince), Long.toString(clock.millis()), Long.toString(Math.max(1, ttl.toMillis()))).toCompletableFuture();
    }

    @Override
    public void retryAfter(String sandboxId, Duration delay)
    {
        // Asked and forgotten: at worst the claim holds its whole time, and the sandbox is asked again later.
        redisson.getBucket(PREFIX + sandboxId, StringCodec.INSTANCE).expireAsync(delay.isZero() ? Duration.ofMillis(1) : delay);
    }
}
