package io.sandgate.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import io.sandgate.core.Schedulers;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.mcp.McpSession;
import io.sandgate.mcp.SessionBus;
import org.redisson.api.RBatch;
import org.redisson.api.RFuture;
import org.redisson.api.RMap;
import org.redisson.api.RSet;
import org.redisson.api.RedissonClient;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.client.codec.StringCodec;

/**
 * Sessions shared by every replica through Redis: a record per session, and its event log, which is
 * the authority on what a client is sent. A wake-up lost while Redis blinks or while no one listens
 * costs latency, never a message, and the log's entry ids are the SSE event ids a client resumes
 * from. Where each lies in Redis, and the scripts that change them, are {@link SessionLayout}; the
 * client streams this replica holds are {@link SessionSubscriptions}.
 *
 * <p>Appending and publishing are one script, so a writer never stores a message without
 * publishing its wake-up. The wake-up carries the event and the id of the one before it, so a
 * subscriber that delivered that one delivers this without reading the log: one round trip from the
 * appending replica through Redis to the client's. How the wake-up is published is {@link WakeUps}:
 * plain pub/sub for now, in a cluster too.</p>
 */
final class RedisSessionBus implements SessionBus
{
    private final RedissonClient redisson;
    private final RedisWaits waits;
    private final Duration ttl;
    private final SessionLayout layout;
    private final SessionSubscriptions subscriptions;
    /** Keys whose last append failed: it may have landed all the same, so look before adding again. */
    private final Set<String> uncertain = ConcurrentHashMap.newKeySet();

    RedisSessionBus(RedissonClient redisson, Duration ttl, int capacity, long capacityBytes, Duration pollInterval, WakeUps wakeUps, Schedulers schedulers,
                    RedisWaits waits)
    {
        this.redisson = redisson;
        this.waits = waits;
        this.ttl = ttl;
        this.layout = new SessionLayout(redisson, ttl, capacity, capacityBytes, wakeUps);
        this.subscriptions = new SessionSubscriptions(redisson, layout, pollInterval, schedulers);
    }

    @Override
    public void create(McpSession session)
    {
        update(session);
    }

    @Override
    public boolean create(McpSession session, String client, int limit)
    {
        return call(() ->
        {
            RSet<String> owned = layout.held(client);
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
                exists.add(batch.getMap(SessionLayout.recordKey(id), StringCodec.INSTANCE).isExistsAsync());
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
        return SessionLayout.validId(id) != null;
    }

    @Override
    public String lastEventId(String sessionId)
    {
        return call(() ->
        {
            Map<StreamMessageId, Map<String, String>> newest = layout.log(sessionId).rangeReversed(1, StreamMessageId.MAX, StreamMessageId.MIN);
            return newest.isEmpty() ? null : newest.keySet().iterator().next().toString();
        });
    }

    @Override
    public List<McpSession> list(int limit)
    {
        // SCAN, not KEYS: it does not block Redis however many sessions there are.
        List<String> keys = call(() -> redisson.getKeys().getKeysStreamByPattern(SessionLayout.RECORDS).limit(limit).toList());
        List<McpSession> result = new ArrayList<>();
        for (String key : keys)
            find(SessionLayout.sessionId(key)).ifPresent(result::add);
        return result;
    }

    @Override
    public Optional<McpSession> find(String id)
    {
        Map<String, String> fields = call(() -> layout.record(id).readAllMap());
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
            fields.put(SessionLayout.HOLDER, holder);
        RMap<String, String> record = layout.record(session.id());
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
        layout.touch(id).thenAccept(client ->
        {
            if (client != null)
                layout.held(client).expireAsync(ttl);
        });
    }

    @Override
    public void delete(String id)
    {
        call(() ->
        {
            layout.record(id).delete();
            layout.log(id).delete();
            layout.channel(id).publish(SessionLayout.ENDED);
            return null;
        });
    }

    @Override
    public String append(String sessionId, String key, String message, String traceparent)
    {
        // A retry looks back for the attempt whose answer was lost: it may have landed.
        boolean retry = uncertain.contains(key);
        String id;
        try
        {
            id = call(() -> layout.append(sessionId, key, message, traceparent, retry));
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
        return subscriptions.subscribe(sessionId, SessionLayout.validId(afterEventId), listener);
    }

    /** The safety poll now, whatever its schedule: what one costs is measured in tests. */
    void pollNow()
    {
        subscriptions.pollNow();
    }

    private <T> T call(Supplier<T> command)
    {
        return waits.call("session store", command);
    }

    @Override
    public void close()
    {
        subscriptions.close();
    }
}
