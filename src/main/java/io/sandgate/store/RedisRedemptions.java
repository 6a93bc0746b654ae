package io.sandgate.store;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.sandgate.ingress.Redemptions;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Redeemed grants in Redis, one key per grant ({@code sandgate:grant:<nonce>}), written with
 * {@code SET NX PXAT}: the first replica to present a grant creates the key and wins, every later
 * presentation finds it, and Redis forgets it when the grant has expired. One key per command, so
 * in Redis Cluster any slot will do.
 */
final class RedisRedemptions implements Redemptions
{
    static final String PREFIX = "sandgate:grant:";
    /**
     * Keys live this much past the grant's expiry: Redis expires them by its own clock, a replica
     * refuses expired grants by its own, and the two may disagree by a little.
     */
    static final Duration CLOCK_SKEW = Duration.ofMinutes(1);
    private static final String SET_NX_PXAT = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PXAT', ARGV[2]) then return 1 else return 0 end";

    private final RScript script;
    private final RedisWaits waits;

    RedisRedemptions(RedissonClient redisson, RedisWaits waits)
    {
        this.script = redisson.getScript(StringCodec.INSTANCE);
        this.waits = waits;
    }

    @Override
    public boolean redeem(String nonce, Instant until)
    {
        String key = PREFIX + nonce;
        // No answer, so no redemption: the caller answers 503 and the grant stays unspent.
        Boolean first = waits.call("redemption store", () -> script.eval(key, RScript.Mode.READ_WRITE, SET_NX_PXAT, RScript.ReturnType.BOOLEAN,
            List.of(key), "1", Long.toString(until.plus(CLOCK_SKEW).toEpochMilli())));
        return Boolean.TRUE.equals(first);
    }
}
