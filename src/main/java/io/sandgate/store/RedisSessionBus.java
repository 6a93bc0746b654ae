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
import org.redisson.api.RScript;
import org.redisson.api.RSet;
import org.redisson.api.RStream;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.client.codec.StringCodec;

/**
 * Sessions shared by every replica through Redis. Per session: a hash with the record, a stream
 * with the event log (capped, with the session's TTL), and the pub/sub channel
 * {@code mcp-server-sse:<sessionId>} (Higress's naming) that wakes the replica holding the client's
 * stream. The stream is the authority: a wake-up lost while Redis blinks or while no one listens
 * costs latency (the next poll), never a message, and the stream ids are the SSE event ids a client
 * resumes from. In Redis Cluster the channel is a shard channel in the session's slot ({@link WakeUps}).
 * The wake-up carries the event and the id of the one before it, so a subscriber that
 * delivered that one delivers this without reading the stream: one round trip from the appending
 * replica through Redis to the client's. Keys share the hash tag {@code {sessionId}} so a cluster
 * keeps them in one slot.
 */
final class RedisSessionBus implements SessionBus
{
    /** The message's field in a stream entry; {@code k}, the append's key, is another (see {@link #APPEND}). */
    private static final String MESSAGE = "m";
    /** The trace context's field in a stream entry, present when the message was appended in a trace. */
    private static final String TRACE = "t";
    /** How far back a retried append looks for its earlier attempt. */
    private static final int RETRY_LOOKBACK = 200;
    private static final String ENDED = "end";
    private static final int BATCH = 256;
    /**
     * Messages up to this size travel in the wake-up too. Larger ones are announced by id only and
     * read from the stream: Redis cuts a subscriber off whose pub/sub output falls behind by 8 MiB
     * for a minute (client-output-buffer-limit), and one connection carries every session's wake-ups.
     */
    private static final int PUSH_LIMIT = 64 * 1024;
    /**
     * Appends in one round trip, atomically: nothing for a session that has ended; on a retry, the
     * id of the earlier attempt if it landed (XADD is not idempotent); else XADD with the cap, the
     * TTL, and the wake-up {@code "<id> <previous id>\n<message>"} ({@code "<id> <previous id>
     * <traceparent>\n<message>"} in a trace, {@code "<id>"} alone for a large message). KEYS: record,
     * log. ARGV: key, message, capacity, TTL in ms, channel, how far back a retry looks (0 on a first
     * attempt), push limit, publishing command ({@link WakeUps}), traceparent (empty outside a trace).
     */
    private static final String APPEND = """
        if redis.call('EXISTS', KEYS[1]) == 0 then return false end
        local lookback = tonumber(ARGV[6])
        if lookback > 0 then
          for _, entry in ipairs(redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', lookback)) do
            local fields = entry[2]
            for i = 1, #fields, 2 do
              if fields[i] == 'k' and fields[i + 1] == ARGV[1] then return entry[1] end
            end
          end
        end
        local newest = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
        local previous = newest[1] and newest[1][1] or ''
        local id
        local head
        if ARGV[9] == '' then
          id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'k', ARGV[1], 'm', ARGV[2])
          head = id .. ' ' .. previous
        else
          id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'k', ARGV[1], 'm', ARGV[2], 't', ARGV[9])
          head = id .. ' ' .. previous .. ' ' .. ARGV[9]
        end
        redis.call('PEXPIRE', KEYS[2], ARGV[4])
        if #ARGV[2] <= tonumber(ARGV[7]) then
          redis.call(ARGV[8], ARGV[5], head .. '\\n' .. ARGV[2])
        else
          redis.call(ARGV[8], ARGV[5], id)
        end
        return id
        """;

    private final RedissonClient redisson;
    private final RScript script;
    private final Duration ttl;
    private final int capacity;
    private final WakeUps wakeUps;
    /** Deliveries read Redis and write to client streams, both of which may block. */
    private final Executor delivery;
    private final ScheduledFuture<?> poller;
    private final Set<SerialDrain> subscriptions = ConcurrentHashMap.newKeySet();
    /** Keys whose last append failed: it may have landed all the same, so look before adding again. */
    private final Set<String> uncertain = ConcurrentHashMap.newKeySet();

    RedisSessionBus(RedissonClient redisson, Duration ttl, int capacity, Duration pollInterval, WakeUps wakeUps, Schedulers schedulers)
    {
        this.redisson = redisson;
        this.wakeUps = wakeUps;
        this.script = redisson.getScript(StringCodec.INSTANCE);
        this.ttl = ttl;
        this.capacity = capacity;
        this.delivery = schedulers.workers();
        long poll = pollInterval.toMillis();
        // The safety net under pub/sub: every live subscription re-reads its stream this often.
        // Waking only hands the drain to a worker, so the tick stays on the timer.
        this.poller = schedulers.timer().scheduleWithFixedDelay(() -> subscriptions.forEach(SerialDrain::wake), poll, poll, TimeUnit.MILLISECONDS);
    }

    private static String recordKey(String id)
    {
        return "sandgate:mcp:{" + id + "}:session";
    }

    private static String logKey(String id)
    {
        return "sandgate:mcp:{" + id + "}:events";
    }

    private RMap<String, String> record(String id)
    {
        return redisson.getMap(recordKey(id), StringCodec.INSTANCE);
    }

    private RStream<String, String> log(String id)
    {
        return redisson.getStream(logKey(id), StringCodec.INSTANCE);
    }

    private RTopic channel(String id)
    {
        return wakeUps.topic(redisson, id);
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

    /**
     * Sent without waiting for Redis: the session was just read, and a renewal lost while Redis
     * blinks is made by the session's next request, long before its TTL runs out.
     */
    @Override
    public void touch(String id)
    {
        record(id).expireAsync(ttl);
        log(id).expireAsync(ttl);
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
    public String append(String sessionId, String key, String message, String traceparent)
    {
        // A retry looks back for the attempt whose answer was lost: it may have landed.
        int lookback = uncertain.contains(key) ? RETRY_LOOKBACK : 0;
        String id;
        try
        {
            id = call(() -> script.eval(recordKey(sessionId), RScript.Mode.READ_WRITE, APPEND, RScript.ReturnType.VALUE,
                List.of(recordKey(sessionId), logKey(sessionId)), key, message, Integer.toString(capacity), Long.toString(ttl.toMillis()),
                wakeUps.channel(sessionId), Integer.toString(lookback), Integer.toString(PUSH_LIMIT), wakeUps.command, traceparent == null ? "" : traceparent));
        }
        catch (StoreUnavailableException x)
        {
            uncertain.add(key);
            throw x;
        }
        uncertain.remove(key);
        if (id == null)
            throw new IllegalStateException("no session " + sessionId);
        return id;
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
                range.forEach((id, fields) -> events.add(new Event(id.toString(), fields.get(MESSAGE), fields.get(TRACE))));
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
            registration[0] = channel.addListener(String.class, (topic, message) -> onWakeUp(subscription, message));
        }
        catch (RuntimeException x)
        {
            // Subscribing failed (Redis blinking): the poller still drives delivery.
        }
        subscription.wake();
        return subscription;
    }

    /**
     * A wake-up: {@code "end"}, {@code "<id> <previous id>\n<message>"} (an empty previous id for a
     * stream's first event) or {@code "<id> <previous id> <traceparent>\n<message>"}, or anything else
     * (an id alone) to read the stream. A replica that predates the traceparent takes {@code "<previous
     * id> <traceparent>"} for an id it never delivered, and reads the stream: slower, never wrong.
     */
    private static void onWakeUp(SerialDrain subscription, String message)
    {
        if (ENDED.equals(message))
        {
            subscription.ended();
            return;
        }
        int space = message.indexOf(' ');
        int newline = message.indexOf('\n');
        if (space < 0 || newline < space)
        {
            subscription.wake();
            return;
        }
        int second = message.indexOf(' ', space + 1);
        boolean traced = second >= 0 && second < newline;
        String previous = message.substring(space + 1, traced ? second : newline);
        String traceparent = traced ? message.substring(second + 1, newline) : null;
        subscription.push(previous.isEmpty() ? null : previous,
            new SerialDrain.Event(message.substring(0, space), message.substring(newline + 1), traceparent));
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
