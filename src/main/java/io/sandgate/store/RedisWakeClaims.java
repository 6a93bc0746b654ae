package io.sandgate.store;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import io.sandgate.ingress.lifecycle.WakeClaims;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Wake claims shared by the replicas: {@code SET sandgate:wake:<id> 1 NX PX <ttl>}, so exactly one
 * replica asks the manager, and a claim whose replica died expires on its own.
 */
final class RedisWakeClaims implements WakeClaims
{
    private static final String PREFIX = "sandgate:wake:";

    private final RedissonClient redisson;

    RedisWakeClaims(RedissonClient redisson)
    {
        this.redisson = redisson;
    }

    @Override
    public CompletableFuture<Boolean> claim(String sandboxId, Duration ttl)
    {
        return redisson.<String>getBucket(PREFIX + sandboxId, StringCodec.INSTANCE).setIfAbsentAsync("1", ttl).toCompletableFuture();
    }

    @Override
    public CompletableFuture<Void> release(String sandboxId)
    {
        return redisson.getBucket(PREFIX + sandboxId, StringCodec.INSTANCE).deleteAsync().toCompletableFuture().thenApply(deleted -> null);
    }
}
