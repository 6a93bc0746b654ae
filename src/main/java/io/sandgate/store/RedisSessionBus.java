package io.sandgate.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.sandgate.core.Schedulers;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.mcp.McpSession;
import io.sandgate.mcp.SerialDrain;
import io.sandgate.mcp.SessionBus;
import org.redisson.api.RMap;
import org.redisson.api.RSet;
import org.redisson.api.RStream;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.api.stream.StreamAddArgs;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.client.codec.StringCodec;

/**
 * Sessions shared by every replica through Redis. Per session: a hash with the record, a stream
 * with the event log (capped, with the session's TTL), and the pub/sub channel
 * {@code mcp-server-sse:<sessionId>} (Higress's naming) that wakes the replica holding the client's
 * stream. The stream, not the channel, carries the messages: a wake-up lost while Redis blinks or
 * while no one listens costs latency (the next poll), never a message, and the stream ids are the
 * SSE event ids a client resumes from. Keys share the hash tag {@code {sessionId}} so a cluster
 * keeps them in one slot.
 */
final class RedisSessionBus implements SessionBus
{
    private static final String MESSAGE = "m";
    private static final String KEY = "k";
    /** How far back a retried append looks for its earlier attempt. */
    private static final int RETRY_LOOKBACK = 200;
    private static final String ENDED = "end";
    private static final int BATCH = 256;

    private final RedissonClient redisson;
    private final Duration ttl;
    private final int capacity;
    /** Deliveries read Redis and write to client streams, both of which may block. */
    private final Executor delivery;
    private final ScheduledFuture<?> poller;
    private final Set<SerialDrain> subscriptions = ConcurrentHashMap.newKeySet();
    /** Keys whose last append failed: it may have landed all the same, so look before adding again. */
    private final Set<String> uncertain = ConcurrentHashMap.newKeySet();

    RedisSessionBus(RedissonClient redisson, Duration ttl, int capacity, Duration pollInterval, Schedulers schedulers)
    {
        this.redisson = redisson;
        this.ttl = ttl;
        this.capacity = capacity;
        this.delivery = schedulers.workers();
        long poll = pollInterval.toMillis();
        // The safety net under pub/sub: every live subscription re-reads its stream this often.
        // Waking only hands the drain to a worker, so the tick stays on the timer.
        this.poller = schedulers.timer().scheduleWithFixedDelay(() -> subscriptions.forEach(SerialDrain::wake), poll, poll, TimeUnit.MILLISECONDS);
    }

    private RMap<String, String> record(String id)
    {
        return redisson.getMap("sandgate:mcp:{" + id + "}:session", StringCodec.INSTANCE);
    }

    private RStream<String, String> log(String id)
    {
        return redisson.getStream("sandgate:mcp:{" + id + "}:events", StringCodec.INSTANCE);
    }

    private RTopic channel(String id)
    {
        return redisson.getTopic("mcp-server-sse:" + id, StringCodec.INSTANCE);
    }

    @Override
    public void create(McpSession session)
    {
        update(session);
    }

    /** Ids of a client's sessions, some perhaps expired: counting checks each. Its key lives as long as its newest session. */
    private RSet<String> held(String client)
    {
        return redisson.getSet("sandgate:mcp:client:{" + client + "}", StringCodec.INSTANCE);
    }

    @Override
    public boolean create(McpSession session, String client, int limit)
    {
        return call(() ->
        {
            RSet<String> owned = held(client);
            // Fewer ids than the limit, live or not: below it, with one round trip. Only a client
            // at its limit pays for checking which of its sessions still live.
            if (owned.size() < limit)
                return store(session, owned);
            int live = 0;
            for (String id : owned.readAll())
            {
                if (record(id).isExists())
                    live++;
                else
                    owned.remove(id);
            }
            return live < limit && store(session, owned);
        });
    }

    private boolean store(McpSession session, RSet<String> owned)
    {
        update(session);
        owned.add(session.id());
        owned.expire(ttl);
        return true;
    }

    @Override
    public boolean isEventId(String id)
    {
        return validId(id) != null;
    }

    @Override
    public String lastEventId(String sessionId)
    {
        return call(() ->
        {
            Map<StreamMessageId, Map<String, String>> newest = log(sessionId).rangeReversed(1, StreamMessageId.MAX, StreamMessageId.MIN);
            return newest.isEmpty() ? null : newest.keySet().iterator().next().toString();
        });
    }

    @Override
    public List<McpSession> list(int limit)
    {
        List<McpSession> result = new ArrayList<>();
        call(() ->
        {
            // SCAN, not KEYS: it does not block Redis however many sessions there are.
            redisson.getKeys().getKeysStreamByPattern("sandgate:mcp:{*}:session").limit(limit).forEach(key ->
            {
                String id = key.substring("sandgate:mcp:{".length(), key.length() - "}:session".length());
                find(id).ifPresent(result::add);
            });
            return null;
        });
        return result;
    }

    @Override
    public Optional<McpSession> find(String id)
    {
        Map<String, String> fields = call(() -> record(id).readAllMap());
        if (fields.isEmpty())
            return Optional.empty();
        return Optional.of(new McpSession(id, fields.get("server"), Optional.ofNullable(fields.get("upstreamSessionId")),
            Optional.ofNullable(fields.get("upstreamMessageUrl")), Optional.ofNullable(fields.get("protocolVersion")),
            fields.getOrDefault("owner", ""), Optional.ofNullable(fields.get("client"))));
    }

    @Override
    public void update(McpSession session)
    {
        Map<String, String> fields = new HashMap<>();
        fields.put("server", session.server());
        session.upstreamSessionId().ifPresent(v -> fields.put("upstreamSessionId", v));
        session.upstreamMessageUrl().ifPresent(v -> fields.put("upstreamMessageUrl", v));
        session.protocolVersion().ifPresent(v -> fields.put("protocolVersion", v));
        fields.put("owner", session.owner());
        session.client().ifPresent(v -> fields.put("client", v));
        call(() ->
        {
            RMap<String, String> record = record(session.id());
            record.putAll(fields);
            record.expire(ttl);
            return null;
        });
    }

    @Override
    public void touch(String id)
    {
        call(() ->
        {
            record(id).expire(ttl);
            log(id).expire(ttl);
            return null;
        });
    }

    @Override
    public void delete(String id)
    {
        call(() ->
        {
            record(id).delete();
            log(id).delete();
            channel(id).publish(ENDED);
            return null;
        });
    }

    @Override
    public String append(String sessionId, String key, String message)
    {
        try
        {
            return call(() ->
            {
                RStream<String, String> log = log(sessionId);
                if (uncertain.contains(key))
                {
                    // XADD is not idempotent: a retry first checks whether the lost attempt landed.
                    for (Map.Entry<StreamMessageId, Map<String, String>> entry : log.rangeReversed(RETRY_LOOKBACK, StreamMessageId.MAX, StreamMessageId.MIN).entrySet())
                    {
                        if (key.equals(entry.getValue().get(KEY)))
                        {
                            uncertain.remove(key);
                            return entry.getKey().toString();
                        }
                    }
                }
                StreamMessageId id = log.add(StreamAddArgs.<String, String>entries(KEY, key, MESSAGE, message).trimNonStrict().maxLen(capacity).noLimit());
                uncertain.remove(key);
                log.expire(ttl);
                channel(sessionId).publish(id.toString());
                return id.toString();
            });
        }
        catch (StoreUnavailableException x)
        {
            uncertain.add(key);
            throw x;
        }
    }

    @Override
    public Subscription subscribe(String sessionId, String afterEventId, Listener listener)
    {
        RTopic channel = channel(sessionId);
        int[] registration = new int[1];
        SerialDrain subscription = new SerialDrain(delivery, validId(afterEventId), listener)
        {
            @Override
            protected List<Event> readAfter(String afterId)
            {
                StreamMessageId from = afterId == null ? StreamMessageId.MIN : next(afterId);
                Map<StreamMessageId, Map<String, String>> range = log(sessionId).range(BATCH, from, StreamMessageId.MAX);
                List<Event> events = new ArrayList<>(range.size());
                range.forEach((id, fields) -> events.add(new Event(id.toString(), fields.get(MESSAGE))));
                return events;
            }

            @Override
            protected boolean sessionExists()
            {
                return record(sessionId).isExists();
            }

            @Override
            protected void release()
            {
                subscriptions.remove(this);
                try
                {
                    channel.removeListener(registration[0]);
                }
                catch (RuntimeException x)
                {
                    // Redis down: the listener dies with the connection anyway.
                }
            }
        };
        subscriptions.add(subscription);
        try
        {
            registration[0] = channel.addListener(String.class, (topic, message) ->
            {
                if (ENDED.equals(message))
                    subscription.ended();
                else
                    subscription.wake();
            });
        }
        catch (RuntimeException x)
        {
            // Subscribing failed (Redis blinking): the poller still drives delivery.
        }
        subscription.wake();
        return subscription;
    }

    /** A Last-Event-ID that is not a stream id is treated as absent: replay all that is retained. */
    private static String validId(String id)
    {
        return id != null && id.matches("\\d{1,19}-\\d{1,19}") ? id : null;
    }

    private static StreamMessageId next(String id)
    {
        int dash = id.indexOf('-');
        return new StreamMessageId(Long.parseLong(id.substring(0, dash)), Long.parseLong(id.substring(dash + 1)) + 1);
    }

    private static <T> T call(java.util.function.Supplier<T> command)
    {
        try
        {
            return command.get();
        }
        catch (RuntimeException x)
        {
            throw new StoreUnavailableException("session store unreachable", x);
        }
    }

    @Override
    public void close()
    {
        poller.cancel(false);
    }
}
