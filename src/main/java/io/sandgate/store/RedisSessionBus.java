package io.sandgate.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import io.sandgate.core.Schedulers;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.mcp.McpSession;
import io.sandgate.mcp.SerialDrain;
import io.sandgate.mcp.SessionBus;
import org.redisson.api.RBatch;
import org.redisson.api.RFuture;
import org.redisson.api.RMap;
import org.redisson.api.RScript;
import org.redisson.api.RSet;
import org.redisson.api.RStream;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.api.listener.BaseStatusListener;
import org.redisson.api.listener.MessageListener;
import org.redisson.api.listener.StatusListener;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sessions shared by every replica through Redis. Per session: a hash with the record, a stream
 * with the event log (capped, with the session's TTL), and the pub/sub channel
 * {@code mcp-server-sse:<sessionId>} (Higress's naming) that wakes the replica holding the client's
 * stream. The stream is the authority: a wake-up lost while Redis blinks or while no one listens
 * costs latency, never a message, and the stream ids are the SSE event ids a client resumes from.
 * How the wake-up is published is {@link WakeUps}: plain pub/sub for now, in a cluster too.
 *
 * <p>Wake-ups are lost where pub/sub is: a connection that drops (a blink, a restart, a subscriber
 * cut off for a full output buffer) misses what is published until it has subscribed again. So
 * every subscribe Redis confirms, a reconnect's included, wakes the session to read its log, and a
 * subscribe that failed is tried again within a second. Appending and publishing are one script, so
 * a writer never stores a message without publishing its wake-up. A slow safety poll remains for
 * what nothing notices; it looks at every session in pipelined batches, two cheap commands each
 * that send nothing back for an idle session, and wakes only those with something to read.</p>
 * The wake-up carries the event and the id of the one before it, so a subscriber that
 * delivered that one delivers this without reading the stream: one round trip from the appending
 * replica through Redis to the client's. Keys share the hash tag {@code {sessionId}} so a cluster
 * keeps them in one slot.
 */
final class RedisSessionBus implements SessionBus
{
    private static final Logger LOG = LoggerFactory.getLogger(RedisSessionBus.class);
    /** The message's field in a stream entry; {@code k}, the append's key, is another (see {@link #APPEND}). */
    private static final String MESSAGE = "m";
    /** The trace context's field in a stream entry, present when the message was appended in a trace. */
    private static final String TRACE = "t";
    /** The record's field naming whom a session counts for, when it was created under a limit: its renewals renew that count too. */
    private static final String HOLDER = "holder";
    /** How far back a retried append looks for its earlier attempt. */
    private static final int RETRY_LOOKBACK = 200;
    private static final String ENDED = "end";
    private static final int BATCH = 256;
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

    /** Sessions looked at in one pipelined batch. */
    private static final int CHECK_BATCH = 1000;
    /**
     * How soon a subscribe or a read that failed is tried again, at most: delivery after Redis
     * comes back must not wait for the safety poll.
     */
    private static final long REPAIR_MILLIS = 1000;

    private final RedissonClient redisson;
    private final RedisWaits waits;
    private final RScript script;
    private final Duration ttl;
    private final int capacity;
    /** Bytes of messages a session's log keeps at most, besides its newest message. */
    private final long capacityBytes;
    private final WakeUps wakeUps;
    /** Deliveries read Redis and write to client streams, both of which may block. */
    private final Executor delivery;
    private final long pollNanos;
    private final ScheduledFuture<?> ticker;
    private final Set<Listening> subscriptions = ConcurrentHashMap.newKeySet();
    /** Keys whose last append failed: it may have landed all the same, so look before adding again. */
    private final Set<String> uncertain = ConcurrentHashMap.newKeySet();
    /** Set with a subscription's {@code broken}: the next tick repairs what is broken. */
    private final AtomicBoolean repairNeeded = new AtomicBoolean();
    private final AtomicBoolean checking = new AtomicBoolean();
    private volatile long lastPollNanos = System.nanoTime();

    RedisSessionBus(RedissonClient redisson, Duration ttl, int capacity, long capacityBytes, Duration pollInterval, WakeUps wakeUps, Schedulers schedulers,
                    RedisWaits waits)
    {
        this.redisson = redisson;
        this.waits = waits;
        this.wakeUps = wakeUps;
        this.script = redisson.getScript(StringCodec.INSTANCE);
        this.ttl = ttl;
        this.capacity = capacity;
        this.capacityBytes = capacityBytes;
        this.delivery = schedulers.workers();
        this.pollNanos = pollInterval.toNanos();
        long tick = Math.min(pollInterval.toMillis(), REPAIR_MILLIS);
        // Deciding whether to look stays on the timer; looking, which waits for Redis, goes to a worker.
        this.ticker = schedulers.timer().scheduleWithFixedDelay(this::tick, tick, tick, TimeUnit.MILLISECONDS);
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
            // at its limit pays for checking which of its sessions still live, in one pipelined
            // batch: one round trip per id would hold a thread, and a permit of the waits, for as
            // many round trips as the limit on every attempt of a client knocking at it.
            if (owned.size() < limit)
                return store(session, client, owned);
            List<String> ids = new ArrayList<>(owned.readAll());
            RBatch batch = redisson.createBatch();
            List<RFuture<Boolean>> exists = new ArrayList<>(ids.size());
            for (String id : ids)
                exists.add(batch.getMap(recordKey(id), StringCodec.INSTANCE).isExistsAsync());
            batch.execute();
            List<String> ended = new ArrayList<>();
            for (int i = 0; i < ids.size(); i++)
            {
                if (!exists.get(i).toCompletableFuture().join())
                    ended.add(ids.get(i));
            }
            if (!ended.isEmpty())
                owned.removeAll(ended);
            return ids.size() - ended.size() < limit && store(session, client, owned);
        });
    }

    private boolean store(McpSession session, String client, RSet<String> owned)
    {
        write(session, client);
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
        // SCAN, not KEYS: it does not block Redis however many sessions there are.
        List<String> keys = call(() -> redisson.getKeys().getKeysStreamByPattern("sandgate:mcp:{*}:session").limit(limit).toList());
        List<McpSession> result = new ArrayList<>();
        for (String key : keys)
            find(key.substring("sandgate:mcp:{".length(), key.length() - "}:session".length())).ifPresent(result::add);
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
        call(() ->
        {
            write(session, null);
            return null;
        });
    }

    /** @param holder whom the session counts for; null keeps what the record says */
    private void write(McpSession session, String holder)
    {
        Map<String, String> fields = new HashMap<>();
        fields.put("server", session.server());
        session.upstreamSessionId().ifPresent(v -> fields.put("upstreamSessionId", v));
        session.upstreamMessageUrl().ifPresent(v -> fields.put("upstreamMessageUrl", v));
        session.protocolVersion().ifPresent(v -> fields.put("protocolVersion", v));
        fields.put("owner", session.owner());
        session.client().ifPresent(v -> fields.put("client", v));
        if (holder != null)
            fields.put(HOLDER, holder);
        RMap<String, String> record = record(session.id());
        record.putAll(fields);
        record.expire(ttl);
    }

    /**
     * Sent without waiting for Redis: the session was just read, and a renewal lost while Redis
     * blinks is made by the session's next request, long before its TTL runs out.
     */
    @Override
    public void touch(String id)
    {
        // The client's set of ids, which its limit counts, lives as long as its newest session:
        // expired under sessions still in use, it would let the client open as many again. It is in
        // another slot, so it is renewed once the script has said whose it is.
        script.<String>evalAsync(recordKey(id), RScript.Mode.READ_WRITE, TOUCH, RScript.ReturnType.VALUE,
            List.of(recordKey(id), logKey(id)), Long.toString(ttl.toMillis()), HOLDER).thenAccept(client ->
        {
            if (client != null)
                held(client).expireAsync(ttl);
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
    public String append(String sessionId, String key, String message, String traceparent)
    {
        // A retry looks back for the attempt whose answer was lost: it may have landed.
        int lookback = uncertain.contains(key) ? RETRY_LOOKBACK : 0;
        String id;
        try
        {
            id = call(() -> script.eval(recordKey(sessionId), RScript.Mode.READ_WRITE, APPEND, RScript.ReturnType.VALUE,
                List.of(recordKey(sessionId), logKey(sessionId)), key, message, Integer.toString(capacity), Long.toString(ttl.toMillis()),
                wakeUps.channel(sessionId), Integer.toString(lookback), Integer.toString(PUSH_LIMIT), wakeUps.command, traceparent == null ? "" : traceparent,
                Long.toString(capacityBytes)));
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
        Listening subscription = new Listening(sessionId, validId(afterEventId), listener);
        subscriptions.add(subscription);
        // The caller's thread does not wait for Redis, which may hang: the drain first reads the
        // log once the listeners are in, so what was published before is read then. A failure to
        // subscribe marks the subscription broken, and the next tick subscribes again and wakes it.
        subscription.listen().whenComplete((done, failure) -> subscription.wake());
        return subscription;
    }

    /**
     * One stream's subscription: its drain and its two listeners on the session's channel, one for
     * wake-ups, one told of every subscribe Redis confirms. After a reconnect or a failover Redisson
     * subscribes again by itself, and what was published meanwhile reached no one: that confirmation
     * wakes the drain to read the log.
     */
    private final class Listening extends SerialDrain
    {
        private final String sessionId;
        private final RTopic channel;
        private final MessageListener<String> wakeUp = (topic, message) -> onWakeUp(this, message);
        private final StatusListener resubscribed = new BaseStatusListener()
        {
            @Override
            public void onSubscribe(String name)
            {
                wake();
            }
        };
        /** Registrations of the two listeners, null until made; guarded by this. */
        private Integer wakeUpId;
        private Integer resubscribedId;
        private boolean attempting;
        private boolean released;
        /**
         * A read or a subscribe failed: what a spent wake-up announced may be unread, or no wake-up
         * comes at all. Repaired by the next tick that finds Redis answering.
         */
        private final AtomicBoolean broken = new AtomicBoolean();

        Listening(String sessionId, String afterEventId, Listener listener)
        {
            super(delivery, afterEventId, listener);
            this.sessionId = sessionId;
            this.channel = channel(sessionId);
        }

        /**
         * Adds whichever listener is missing, wake-ups first; completes at once when both are there,
         * the subscription has ended or an attempt is under way. A failure asks the next tick to try
         * again. What was published before it completes was not heard: the caller wakes the drain.
         */
        CompletableFuture<Void> listen()
        {
            boolean wakeUpMissing;
            synchronized (this)
            {
                if (released || attempting || resubscribedId != null)
                    return CompletableFuture.completedFuture(null);
                attempting = true;
                wakeUpMissing = wakeUpId == null;
            }
            CompletableFuture<Void> wakeUps = wakeUpMissing
                ? channel.addListenerAsync(String.class, wakeUp).toCompletableFuture().thenAccept(id -> registered(id, true))
                : CompletableFuture.completedFuture(null);
            return wakeUps.thenCompose(done -> channel.addListenerAsync(resubscribed).toCompletableFuture())
                .thenAccept(id -> registered(id, false))
                .whenComplete((done, failure) ->
                {
                    synchronized (this)
                    {
                        attempting = false;
                    }
                    if (failure != null)
                        broke();
                });
        }

        private void broke()
        {
            broken.set(true);
            repairNeeded.set(true);
        }

        /** When broken: subscribes again if it could not, and reads its log. */
        void repair()
        {
            if (!broken.getAndSet(false))
                return;
            if (listening())
                wake();
            else
                listen().thenRun(this::wake);
        }

        boolean isBroken()
        {
            return broken.get();
        }

        /** Keeps a registration, or undoes it when the subscription ended while it was being made. */
        private void registered(int id, boolean wakeUps)
        {
            synchronized (this)
            {
                if (!released)
                {
                    if (wakeUps)
                        wakeUpId = id;
                    else
                        resubscribedId = id;
                    return;
                }
            }
            channel.removeListenerAsync(id);
        }

        boolean listening()
        {
            synchronized (this)
            {
                return resubscribedId != null;
            }
        }

        /**
         * Queues the safety poll's look at this session in a batch: whether the record still exists,
         * and the first event after the last delivered, which an idle session has not. True when the
         * drain must read: to end the subscription, or to deliver.
         */
        CompletableFuture<Boolean> check(RBatch batch)
        {
            String last = lastDelivered();
            StreamMessageId from = last == null ? StreamMessageId.MIN : next(last);
            CompletableFuture<Boolean> exists = batch.getMap(recordKey(sessionId), StringCodec.INSTANCE).isExistsAsync().toCompletableFuture();
            CompletableFuture<Boolean> unread = batch.<String, String>getStream(logKey(sessionId), StringCodec.INSTANCE)
                .rangeAsync(1, from, StreamMessageId.MAX).toCompletableFuture().thenApply(range -> !range.isEmpty());
            return exists.thenCombine(unread, (live, news) -> !live || news);
        }

        @Override
        protected List<Event> readAfter(String afterId)
        {
            try
            {
                StreamMessageId from = afterId == null ? StreamMessageId.MIN : next(afterId);
                Map<StreamMessageId, Map<String, String>> range = log(sessionId).range(BATCH, from, StreamMessageId.MAX);
                List<Event> events = new ArrayList<>(range.size());
                range.forEach((id, fields) -> events.add(new Event(id.toString(), fields.get(MESSAGE), fields.get(TRACE))));
                return events;
            }
            catch (RuntimeException x)
            {
                // The wake-up that led here is spent: without a repair, what it announced would wait for the poll.
                broke();
                throw x;
            }
        }

        @Override
        protected boolean sessionExists()
        {
            try
            {
                return record(sessionId).isExists();
            }
            catch (RuntimeException x)
            {
                broke();
                throw x;
            }
        }

        @Override
        protected void release()
        {
            subscriptions.remove(this);
            List<Integer> ids = new ArrayList<>(2);
            synchronized (this)
            {
                released = true;
                if (wakeUpId != null)
                    ids.add(wakeUpId);
                if (resubscribedId != null)
                    ids.add(resubscribedId);
            }
            if (ids.isEmpty())
                return;
            try
            {
                channel.removeListener(ids.toArray(Integer[]::new));
            }
            catch (RuntimeException x)
            {
                // Redis down. Should Redisson keep the listeners and subscribe them again, they wake a
                // closed drain, which does nothing.
            }
        }
    }

    /** On the timer: starts a look at the sessions when the poll is due or something failed, never two at once. */
    private void tick()
    {
        long now = System.nanoTime();
        boolean due = now - lastPollNanos >= pollNanos;
        if (!(due || repairNeeded.get()) || !checking.compareAndSet(false, true))
            return;
        // Taken here rather than when the worker starts, so that a poll due every tick runs every tick.
        if (due)
            lastPollNanos = now;
        try
        {
            delivery.execute(() ->
            {
                try
                {
                    check(due);
                }
                finally
                {
                    checking.set(false);
                }
            });
        }
        catch (RejectedExecutionException x)
        {
            // Shutting down.
            checking.set(false);
        }
    }

    /**
     * The safety poll when {@code due}: wakes the sessions whose log holds what they have not
     * delivered, or that have ended. Then the repair of what failed, once Redis answers again.
     */
    private void check(boolean due)
    {
        repairNeeded.set(false);
        List<Listening> all = List.copyOf(subscriptions);
        if (due)
        {
            try
            {
                for (int from = 0; from < all.size(); from += CHECK_BATCH)
                    checkBatch(all.subList(from, Math.min(all.size(), from + CHECK_BATCH)));
            }
            catch (RuntimeException x)
            {
                // Unanswered (a node down, a timeout): every session reads for itself once Redis answers.
                LOG.debug("MCP session safety poll failed", x);
                all.forEach(Listening::broke);
            }
        }
        repair(all);
    }

    /**
     * Subscribes again and wakes the broken subscriptions, once one command shows Redis answering:
     * while it is down, that one command is all a tick costs, not a failing read per session.
     */
    private void repair(List<Listening> all)
    {
        Listening probe = all.stream().filter(Listening::isBroken).findFirst().orElse(null);
        if (probe == null)
            return;
        try
        {
            record(probe.sessionId).isExists();
        }
        catch (RuntimeException x)
        {
            repairNeeded.set(true);
            return;
        }
        all.forEach(Listening::repair);
    }

    /** The safety poll now, whatever its schedule: what one costs is measured in tests. */
    void pollNow()
    {
        check(true);
    }

    private void checkBatch(List<Listening> sessions)
    {
        RBatch batch = redisson.createBatch();
        List<CompletableFuture<Boolean>> answers = new ArrayList<>(sessions.size());
        for (Listening subscription : sessions)
            answers.add(subscription.check(batch));
        batch.execute();
        for (int i = 0; i < sessions.size(); i++)
        {
            if (answers.get(i).join())
                sessions.get(i).wake();
        }
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

    /**
     * A Last-Event-ID that is not a stream id is treated as absent: replay all that is retained.
     * Both numbers of one must fit a long, as Redisson takes them, and the second must have a
     * successor, where a read after the id starts: a client's id of the right shape that does not
     * would fail every read of its subscription, and the safety poll, which looks at every
     * subscription in one batch, for all of them.
     */
    private static String validId(String id)
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

    private static StreamMessageId next(String id)
    {
        int dash = id.indexOf('-');
        return new StreamMessageId(Long.parseLong(id.substring(0, dash)), Long.parseLong(id.substring(dash + 1)) + 1);
    }

    private <T> T call(Supplier<T> command)
    {
        return waits.call("session store", command);
    }

    @Override
    public void close()
    {
        ticker.cancel(false);
    }
}
