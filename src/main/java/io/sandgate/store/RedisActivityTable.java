package io.sandgate.store;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.sandgate.ingress.lifecycle.ActivityTable;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RFuture;
import org.redisson.api.RMapAsync;
import org.redisson.api.RScoredSortedSetAsync;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * The sandboxes' activity in Redis, each replica in keys of its own, so that a replica writes without
 * reading and a dead one's entries expire with its keys:
 * <ul>
 * <li>{@code sandgate:activity:{<replica>}}: hash, sandbox id to the replica's last traffic for it
 * (epoch millis), expiring the retention after the replica's last write;</li>
 * <li>{@code sandgate:websockets:{<replica>}}: hash, sandbox id to the WebSockets the replica holds
 * open for it, expiring a few flushes after its last write (they died with it);</li>
 * <li>{@code sandgate:activity:replicas}: sorted set of the replicas whose keys may still exist,
 * scored by when they run out, so that a reader finds them without a SCAN.</li>
 * </ul>
 * A flush is one pipelined batch (the hash writes and their expiries); the replica announces itself
 * in the sorted set only every quarter of the retention. The braces keep a replica's two hashes in
 * one Redis Cluster slot.
 */
final class RedisActivityTable implements ActivityTable
{
    private static final String REPLICAS = "sandgate:activity:replicas";

    private final RedissonClient redisson;
    private final Clock clock;
    /** When this process last announced each replica it writes for, epoch millis; one in practice. */
    private final Map<String, Long> announced = new java.util.concurrent.ConcurrentHashMap<>();

    RedisActivityTable(RedissonClient redisson, Clock clock)
    {
        this.redisson = redisson;
        this.clock = clock;
    }

    private static String activityKey(String replica)
    {
        return "sandgate:activity:{" + replica + "}";
    }

    private static String webSocketsKey(String replica)
    {
        return "sandgate:websockets:{" + replica + "}";
    }

    @Override
    public CompletableFuture<Void> publish(Flush flush)
    {
        long now = clock.millis();
        RBatch batch = redisson.createBatch(BatchOptions.defaults());
        RMapAsync<String, String> activity = batch.getMap(activityKey(flush.replica()), StringCodec.INSTANCE);
        if (!flush.lastActivity().isEmpty())
        {
            Map<String, String> values = new HashMap<>();
            flush.lastActivity().forEach((id, millis) -> values.put(id, Long.toString(millis)));
            activity.putAllAsync(values);
            activity.expireAsync(flush.retention());
        }
        if (!flush.forgotten().isEmpty())
            activity.fastRemoveAsync(flush.forgotten().toArray(String[]::new));
        RMapAsync<String, String> webSockets = batch.getMap(webSocketsKey(flush.replica()), StringCodec.INSTANCE);
        if (!flush.closedWebSockets().isEmpty())
            webSockets.fastRemoveAsync(flush.closedWebSockets().toArray(String[]::new));
        if (!flush.openWebSockets().isEmpty())
        {
            // Every count, each flush: the hash expires within a few flushes, and must not lose one that did not change.
            Map<String, String> counts = new HashMap<>();
            flush.openWebSockets().forEach((id, open) -> counts.put(id, Integer.toString(open)));
            webSockets.putAllAsync(counts);
            webSockets.expireAsync(flush.webSocketTtl());
        }
        Long last = announced.get(flush.replica());
        boolean announce = last == null || now - last > flush.retention().toMillis() / 4;
        if (announce)
        {
            // Scored past the activity hash's own expiry, which the next announcement, a quarter of the retention on, moves again.
            long until = now + flush.retention().toMillis() + flush.retention().toMillis() / 4;
            RScoredSortedSetAsync<String> replicas = batch.getScoredSortedSet(REPLICAS, StringCodec.INSTANCE);
            replicas.addAsync(until, flush.replica());
            replicas.removeRangeByScoreAsync(Double.NEGATIVE_INFINITY, true, now, true);
            replicas.expireAsync(Duration.ofMillis(until - now));
        }
        return batch.executeAsync().toCompletableFuture().thenAccept(written ->
        {
            if (announce)
                announced.put(flush.replica(), now);
        });
    }

    /** The replicas whose keys may still exist. */
    private CompletableFuture<Collection<String>> replicas()
    {
        return redisson.<String>getScoredSortedSet(REPLICAS, StringCodec.INSTANCE)
            .valueRangeAsync(clock.millis(), false, Double.POSITIVE_INFINITY, true).toCompletableFuture();
    }

    @Override
    public CompletableFuture<SandboxActivity> sandbox(String sandboxId)
    {
        return replicas().thenCompose(replicas ->
        {
            RBatch batch = redisson.createBatch(BatchOptions.defaults());
            Map<String, RFuture<String>> last = new HashMap<>();
            Map<String, RFuture<String>> open = new HashMap<>();
            for (String replica : replicas)
            {
                last.put(replica, batch.<String, String>getMap(activityKey(replica), StringCodec.INSTANCE).getAsync(sandboxId));
                open.put(replica, batch.<String, String>getMap(webSocketsKey(replica), StringCodec.INSTANCE).getAsync(sandboxId));
            }
            return execute(batch, replicas.isEmpty()).thenApply(read ->
            {
                Map<String, SandboxActivity.Replica> found = new HashMap<>();
                long latest = 0;
                for (String replica : replicas)
                {
                    Optional<Long> millis = Optional.ofNullable(last.get(replica).toCompletableFuture().join()).map(RedisActivityTable::number);
                    int webSockets = Optional.ofNullable(open.get(replica).toCompletableFuture().join()).map(v -> (int)number(v)).orElse(0);
                    if (millis.isEmpty() && webSockets == 0)
                        continue;
                    found.put(replica, new SandboxActivity.Replica(millis.map(Instant::ofEpochMilli), webSockets));
                    latest = Math.max(latest, millis.orElse(0L));
                }
                return new SandboxActivity(latest == 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(latest)), found);
            });
        });
    }

    @Override
    public CompletableFuture<Map<String, Summary>> all()
    {
        return replicas().thenCompose(replicas ->
        {
            RBatch batch = redisson.createBatch(BatchOptions.defaults());
            List<RFuture<Map<String, String>>> last = new ArrayList<>();
            List<RFuture<Map<String, String>>> open = new ArrayList<>();
            for (String replica : replicas)
            {
                last.add(batch.<String, String>getMap(activityKey(replica), StringCodec.INSTANCE).readAllMapAsync());
                open.add(batch.<String, String>getMap(webSocketsKey(replica), StringCodec.INSTANCE).readAllMapAsync());
            }
            return execute(batch, replicas.isEmpty()).thenApply(read ->
            {
                Map<String, Summary> merged = new HashMap<>();
                for (RFuture<Map<String, String>> values : last)
                    values.toCompletableFuture().join().forEach((id, millis) -> merged.merge(id, new Summary(number(millis), 0), Summary::merge));
                for (RFuture<Map<String, String>> values : open)
                    values.toCompletableFuture().join().forEach((id, count) -> merged.merge(id, new Summary(0, (int)number(count)), Summary::merge));
                return merged;
            });
        });
    }

    private static CompletableFuture<?> execute(RBatch batch, boolean empty)
    {
        return empty ? CompletableFuture.completedFuture(null) : batch.executeAsync().toCompletableFuture();
    }

    /** A value this table wrote; anything else (a hand-edited key) reads as nothing. */
    private static long number(String value)
    {
        try
        {
            return Math.max(0, Long.parseLong(value));
        }
        catch (NumberFormatException x)
        {
            return 0;
        }
    }
}
