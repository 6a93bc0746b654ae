package io.sandgate.store;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.regex.Pattern;

import io.sandgate.mcp.SerialDrain;
import org.redisson.api.RMap;
import org.redisson.api.RScript;
import org.redisson.api.RSet;
import org.redisson.api.RStream;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.client.codec.StringCodec;

/**
 * How an MCP session lies in Redis: its keys, the fields of its record and its log, the scripts
 * that change them atomically and the wake-up those scripts publish. Replicas of another version
 * read what this one writes, so the layout is written down in one place: each script's arguments
 * beside the script, the wake-up's reading beside the script that writes it.
 *
 * <p>Per session: a hash with the record, a stream with the event log (capped, with the session's
 * TTL), and the channel of {@link WakeUps}. Keys share the hash tag {@code {sessionId}} so a cluster
 * keeps them in one slot, as a script may only touch keys of its own slot.</p>
 */
final class SessionLayout
{
    /** The message's field in a stream entry; {@code k}, the append's key, is another (see {@link #APPEND}). */
    static final String MESSAGE = "m";
    /** The trace context's field in a stream entry, present when the message was appended in a trace. */
    static final String TRACE = "t";
    /** The record's field naming whom a session counts for, when it was created under a limit: its renewals renew that count too. */
    static final String HOLDER = "holder";
    /** The wake-up that ends a deleted session's subscriptions. */
    static final String ENDED = "end";
    private static final String KEY_PREFIX = "sandgate:mcp:{";
    private static final String RECORD_SUFFIX = "}:session";
    /** Every session's record, as SCAN matches them. */
    static final String RECORDS = KEY_PREFIX + "*" + RECORD_SUFFIX;
    /** How far back a retried append looks for its earlier attempt. */
    private static final int RETRY_LOOKBACK = 200;
    /** The shape of a stream entry's id, as {@link #validId} checks a client's Last-Event-ID. */
    private static final Pattern STREAM_ID = Pattern.compile("\\d{1,19}-\\d{1,19}");
    /**
     * Messages up to this size travel in the wake-up too. Larger ones are announced by id only and
     * read from the stream: Redis cuts a subscriber off whose pub/sub output falls behind by 8 MiB
     * for a minute (client-output-buffer-limit), and one connection carries every session's wake-ups.
     */
    private static final int PUSH_LIMIT = 64 * 1024;
    /**
     * Appends in one round trip, atomically: nothing for a session that has ended; on a retry, the
     * id of the earlier attempt if it landed (XADD is not idempotent); else XADD, the oldest entries
     * trimmed while the log holds more than its count or its bytes (the record keeps the log's bytes
     * in {@code lb}; the newest entry always stays), the TTL, and the wake-up {@code "<id> <previous
     * id>\n<message>"} ({@code "<id> <previous id> <traceparent>\n<message>"} in a trace, {@code
     * "<id>"} alone for a large message). KEYS: record, log. ARGV: key, message, capacity, TTL in
     * ms, channel, how far back a retry looks (0 on a first attempt), push limit, publishing command
     * ({@link WakeUps}), traceparent (empty outside a trace), capacity in bytes.
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
          id = redis.call('XADD', KEYS[2], '*', 'k', ARGV[1], 'm', ARGV[2])
          head = id .. ' ' .. previous
        else
          id = redis.call('XADD', KEYS[2], '*', 'k', ARGV[1], 'm', ARGV[2], 't', ARGV[9])
          head = id .. ' ' .. previous .. ' ' .. ARGV[9]
        end
        local bytes = redis.call('HINCRBY', KEYS[1], 'lb', #ARGV[2])
        local capacity = tonumber(ARGV[3])
        local capacityBytes = tonumber(ARGV[10])
        local length = redis.call('XLEN', KEYS[2])
        while length > 1 and (length > capacity or bytes > capacityBytes) do
          local oldest = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
          local fields = oldest[2]
          local size = 0
          for i = 1, #fields, 2 do
            if fields[i] == 'm' then size = #fields[i + 1] end
          end
          redis.call('XDEL', KEYS[2], oldest[1])
          bytes = redis.call('HINCRBY', KEYS[1], 'lb', -size)
          length = length - 1
        end
        redis.call('PEXPIRE', KEYS[2], ARGV[4])
        if #ARGV[2] <= tonumber(ARGV[7]) then
          redis.call(ARGV[8], ARGV[5], head .. '\\n' .. ARGV[2])
        else
          redis.call(ARGV[8], ARGV[5], id)
        end
        return id
        """;

    /** Renews a session's record and log, and answers whom it counts for. KEYS: record, log. ARGV: TTL in ms, {@link #HOLDER}. */
    private static final String TOUCH = """
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        redis.call('PEXPIRE', KEYS[2], ARGV[1])
        return redis.call('HGET', KEYS[1], ARGV[2])
        """;

    private final RedissonClient redisson;
    private final RScript script;
    private final Duration ttl;
    private final int capacity;
    /** Bytes of messages a session's log keeps at most, besides its newest message. */
    private final long capacityBytes;
    private final WakeUps wakeUps;

    SessionLayout(RedissonClient redisson, Duration ttl, int capacity, long capacityBytes, WakeUps wakeUps)
    {
        this.redisson = redisson;
        this.script = redisson.getScript(StringCodec.INSTANCE);
        this.ttl = ttl;
        this.capacity = capacity;
        this.capacityBytes = capacityBytes;
        this.wakeUps = wakeUps;
    }

    static String recordKey(String sessionId)
    {
        return KEY_PREFIX + sessionId + RECORD_SUFFIX;
    }

    static String logKey(String sessionId)
    {
        return KEY_PREFIX + sessionId + "}:events";
    }

    /** The session id in a key that {@link #RECORDS} matched. */
    static String sessionId(String recordKey)
    {
        return recordKey.substring(KEY_PREFIX.length(), recordKey.length() - RECORD_SUFFIX.length());
    }

    RMap<String, String> record(String sessionId)
    {
        return redisson.getMap(recordKey(sessionId), StringCodec.INSTANCE);
    }

    RStream<String, String> log(String sessionId)
    {
        return redisson.getStream(logKey(sessionId), StringCodec.INSTANCE);
    }

    RTopic channel(String sessionId)
    {
        return wakeUps.topic(redisson, sessionId);
    }

    /** Ids of a client's sessions, some perhaps expired: counting checks each. Its key lives as long as its newest session. */
    RSet<String> held(String client)
    {
        return redisson.getSet("sandgate:mcp:client:{" + client + "}", StringCodec.INSTANCE);
    }

    /**
     * Runs {@link #APPEND}.
     *
     * @param retry whether an earlier attempt's answer was lost: it may have landed
     * @return the entry's id, or null when the session has ended
     */
    String append(String sessionId, String key, String message, String traceparent, boolean retry)
    {
        return script.eval(recordKey(sessionId), RScript.Mode.READ_WRITE, APPEND, RScript.ReturnType.VALUE,
            List.of(recordKey(sessionId), logKey(sessionId)), key, message, Integer.toString(capacity), Long.toString(ttl.toMillis()),
            wakeUps.channel(sessionId), Integer.toString(retry ? RETRY_LOOKBACK : 0), Integer.toString(PUSH_LIMIT), wakeUps.command,
            traceparent == null ? "" : traceparent, Long.toString(capacityBytes));
    }

    /** Runs {@link #TOUCH} without waiting for it: completes with whom the session counts for, or null. */
    CompletionStage<String> touch(String sessionId)
    {
        return script.<String>evalAsync(recordKey(sessionId), RScript.Mode.READ_WRITE, TOUCH, RScript.ReturnType.VALUE,
            List.of(recordKey(sessionId), logKey(sessionId)), Long.toString(ttl.toMillis()), HOLDER);
    }

    /**
     * Acts on a wake-up: {@code "end"}, {@code "<id> <previous id>\n<message>"} (an empty previous id
     * for a stream's first event) or {@code "<id> <previous id> <traceparent>\n<message>"}, or anything
     * else (an id alone) to read the stream. A replica that predates the traceparent takes {@code
     * "<previous id> <traceparent>"} for an id it never delivered, and reads the stream: slower, never
     * wrong.
     */
    static void onWakeUp(SerialDrain subscription, String message)
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

    /**
     * A Last-Event-ID that is not a stream id is treated as absent: replay all that is retained.
     * Both numbers of one must fit a long, as Redisson takes them, and the second must have a
     * successor, where a read after the id starts: a client's id of the right shape that does not
     * would fail every read of its subscription, and the safety poll, which looks at every
     * subscription in one batch, for all of them.
     */
    static String validId(String id)
    {
        if (id == null || !STREAM_ID.matcher(id).matches())
            return null;
        int dash = id.indexOf('-');
        try
        {
            Long.parseLong(id.substring(0, dash));
            return Long.parseLong(id.substring(dash + 1)) < Long.MAX_VALUE ? id : null;
        }
        catch (NumberFormatException x)
        {
            return null;
        }
    }

    /** Where a read after the stream id {@code id} starts. */
    static StreamMessageId next(String id)
    {
        int dash = id.indexOf('-');
        return new StreamMessageId(Long.parseLong(id.substring(0, dash)), Long.parseLong(id.substring(dash + 1)) + 1);
    }
}
