package io.sandgate.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import io.sandgate.mcp.ToolPinStore;
import org.redisson.api.RMap;
import org.redisson.api.RScript;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Pinned MCP tool definitions in Redis: one hash per server ({@code sandgate:mcp:pins:{server}},
 * tool name -> JSON), written only by compare-and-set, and every write announced on the topic
 * {@code sandgate:mcp:pins} with the server's name, so that every replica re-reads that server. A
 * replica that missed an announcement (its subscription was down) catches up at its next periodic read.
 */
final class RedisToolPinStore implements ToolPinStore
{
    private static final String PREFIX = "sandgate:mcp:pins:";
    private static final String TOPIC = "sandgate:mcp:pins";
    /** KEYS[1]: the server's hash; ARGV: field, value, field, value... Set only on a server with no records. */
    private static final String TRUST_FIRST = "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end "
        + "for i = 1, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end return 1";

    private final RedissonClient redisson;
    private final RTopic changes;
    private final RScript script;
    /** The listener to subscribe, until a subscription is made: Redis may be down when the gateway starts. */
    private final AtomicReference<Consumer<String>> unsubscribed = new AtomicReference<>();

    RedisToolPinStore(RedissonClient redisson)
    {
        this.redisson = redisson;
        this.changes = redisson.getTopic(TOPIC, StringCodec.INSTANCE);
        this.script = redisson.getScript(StringCodec.INSTANCE);
    }

    private RMap<String, String> records(String server)
    {
        return redisson.getMap(PREFIX + server, StringCodec.INSTANCE);
    }

    @Override
    public CompletableFuture<Map<String, String>> all(String server)
    {
        subscribe();
        return records(server).readAllMapAsync().toCompletableFuture();
    }

    @Override
    public CompletableFuture<Boolean> replace(String server, String tool, String expected, String value)
    {
        RMap<String, String> records = records(server);
        CompletableFuture<Boolean> set = (expected == null ? records.fastPutIfAbsentAsync(tool, value) : records.replaceAsync(tool, expected, value))
            .toCompletableFuture();
        return set.thenCompose(done -> done ? changes.publishAsync(server).toCompletableFuture().handle((receivers, failure) -> true)
            : CompletableFuture.completedFuture(false));
    }

    @Override
    public CompletableFuture<Boolean> trustFirst(String server, Map<String, String> records)
    {
        if (records.isEmpty())
            return CompletableFuture.completedFuture(false);
        List<Object> fieldsAndValues = new ArrayList<>();
        records.forEach((tool, value) ->
        {
            fieldsAndValues.add(tool);
            fieldsAndValues.add(value);
        });
        String key = PREFIX + server;
        CompletableFuture<Boolean> set = script.<Boolean>evalAsync(key, RScript.Mode.READ_WRITE, TRUST_FIRST, RScript.ReturnType.BOOLEAN, List.of(key),
            fieldsAndValues.toArray()).toCompletableFuture();
        return set.thenCompose(done -> done ? changes.publishAsync(server).toCompletableFuture().handle((receivers, failure) -> true)
            : CompletableFuture.completedFuture(false));
    }

    /**
     * Subscribes without waiting, so that a gateway starts while Redis is down; a subscription that
     * could not be made is tried again by the next read (the periodic catch-up), which Redisson then
     * keeps across reconnects.
     */
    @Override
    public void onChange(Consumer<String> listener)
    {
        unsubscribed.set(listener);
        subscribe();
    }

    private void subscribe()
    {
        Consumer<String> listener = unsubscribed.getAndSet(null);
        if (listener == null)
            return;
        try
        {
            changes.addListenerAsync(String.class, (channel, server) -> listener.accept(server)).whenComplete((id, failure) ->
            {
                if (failure != null)
                    unsubscribed.compareAndSet(null, listener);
            });
        }
        catch (RuntimeException x)
        {
            // Redisson may refuse at once when it has no connection: the next read tries again.
            unsubscribed.compareAndSet(null, listener);
        }
    }
}
