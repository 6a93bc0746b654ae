package io.sandgate.store;

import io.sandgate.egress.InspectionCa;
import org.redisson.api.RBucket;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * The generated CA of egress inspection, kept in one key written once ({@code SET NX}): the first
 * replica to start stores its CA, every other one adopts it, so a leaf minted by any replica is
 * trusted by a sandbox that trusts the CA one of them served. The key has no expiry: replacing the
 * CA is deleting it (and restarting the replicas), which sandboxes must learn of anyway.
 */
final class RedisInspectionCa implements InspectionCa.SharedCa
{
    static final String KEY = "sandgate:egress:inspect:ca";

    private final RBucket<String> bucket;

    RedisInspectionCa(RedissonClient redisson)
    {
        this.bucket = redisson.getBucket(KEY, StringCodec.INSTANCE);
    }

    @Override
    public String adopt(String pem)
    {
        if (bucket.setIfAbsent(pem))
            return pem;
        String stored = bucket.get();
        // Deleted between the two calls: this one is stored at the next try.
        return stored != null ? stored : adopt(pem);
    }
}
