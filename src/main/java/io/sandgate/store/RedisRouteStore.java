package io.sandgate.store;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.StoreConfig;
import io.sandgate.core.Futures;
import io.sandgate.core.StoreHealth;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RoutePage;
import io.sandgate.ingress.RouteStore;
import org.redisson.api.RMap;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes in a Redis hash, {@code id -> host:port}, as any Redis client writes them.
 *
 * <p>Each replica keeps the routes it has used in a local map, so a cached route costs no Redis
 * round trip. Redisson's local-cached map would not do: it only hears of writes made through
 * Redisson, and the pod watcher of the seed architecture writes with a plain {@code HSET}. Instead
 * this store hears of every write to the hash, whoever sends it, through Redis keyspace
 * notifications ({@link KeyspaceNotifications}), and then re-reads the cached ids with one
 * {@code HMGET}. Notifications say that the hash changed, not which field, hence the re-read of all
 * cached ids; bursts are coalesced into one.</p>
 *
 * <p>Ids Redis has no route for are remembered too, for {@code store.redis.negative-cache-ttl}, so
 * that a client repeating lookups of such an id (a browser polling a sandbox not ready yet, or
 * made-up ids sent on purpose) costs one HGET per id, not one per request. Any change notification
 * forgets them all at once ({@link AbsentRoutes}). Concurrent misses of one id share one HGET.</p>
 *
 * <p>Pub/sub is fire-and-forget, so three safety nets bound staleness: notifications are
 * (re-)enabled with {@code CONFIG SET} whenever a connection was lost (a restarted Redis forgets
 * them); while they are not confirmed, cached ids are re-read every poll interval; and every
 * revalidate interval they are re-read regardless. Ids known to have no route are forgotten
 * whenever those nets re-read, as a write may have gone unheard. When Redis is down, cached routes
 * keep routing and misses fail fast with {@link StoreUnavailableException}.</p>
 */
final class RedisRouteStore implements RouteStore
{
    private static final Logger LOG = LoggerFactory.getLogger(RedisRouteStore.class);
    /** Ids one HMGET re-reads. */
    private static final int BATCH = 1000;
    private static final int REVOKE_ATTEMPTS = 10;
    /**
     * How often the store pings Redis on its own, so that a failure is counted (and readiness is
     * current) even where nothing asks {@code /readyz}.
     */
    private static final long PING_PERIOD_MILLIS = 5000;

    /** An HGET in flight, and the lookups waiting for it. */
    private record Read(long sent, CompletableFuture<Optional<Route>> route)
    {
    }

    private final RedisWaits waits;
    private final String key;
    private final RMap<String, String> hash;
    private final StoreConfig.Redis config;
    private final int cacheSize;
    private final ScheduledExecutorService scheduler;
    private final Map<String, Route> cache = new ConcurrentHashMap<>();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private final AbsentRoutes absent;
    /**
     * Bumped on every change notification, and whenever a change may have gone unheard: a miss that
     * raced with either re-reads, and every id remembered as absent before it is forgotten.
     */
    private final AtomicLong changes = new AtomicLong();
    private final AtomicBoolean refreshScheduled = new AtomicBoolean();
    /** The HGET in flight for each id being read, with the change count it was sent at. */
    private final Map<String, Read> reading = new ConcurrentHashMap<>();
    private final Counter hits;
    private final Counter absentHits;
    private final Counter misses;
    private final Counter pingFailures;
    private final KeyspaceNotifications notifications;
    private final RouteSearch search;
    private volatile boolean reachable = true;
    private volatile long lastFullRefreshNanos = System.nanoTime();

    RedisRouteStore(RedissonClient redisson, String key, StoreConfig.Redis config, int cacheSize, MeterRegistry registry, ScheduledExecutorService scheduler,
                    Clock clock, RedisWaits waits)
    {
        this.waits = waits;
        this.key = key;
        this.hash = redisson.getMap(key, StringCodec.INSTANCE);
        this.config = config;
        this.cacheSize = cacheSize;
        this.scheduler = scheduler;
        this.absent = new AbsentRoutes(config.negativeCacheTtl(), cacheSize, clock);
        this.hits = Counter.builder("sandgate.route.cache").tag("result", "hit").description("Route lookups answered from the local cache").register(registry);
        // Never tagged with the id: made-up ids would each make a time series.
        this.absentHits = Counter.builder("sandgate.route.cache").tag("result", "absent")
            .description("Route lookups answered from the local cache of ids known to have no route").register(registry);
        this.misses = Counter.builder("sandgate.route.cache").tag("result", "miss").description("Route lookups that asked Redis").register(registry);
        registry.gauge("sandgate.route.cache.size", cache, Map::size);
        this.pingFailures = Counter.builder("sandgate.store.redis.ping.failures").description("Health checks of Redis that got no answer").register(registry);
        this.notifications = new KeyspaceNotifications(redisson, globEscape(key), config, this::heard);
        this.search = new RouteSearch(redisson, key, this::parse);
    }

    void start()
    {
        long period = config.pollInterval().toMillis();
        scheduler.scheduleWithFixedDelay(this::tick, 0, period, TimeUnit.MILLISECONDS);
        scheduler.scheduleWithFixedDelay(this::health, PING_PERIOD_MILLIS, PING_PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** A miss holds the calling thread until Redis answers, so it counts against {@link RedisWaits}; a cached answer does not. */
    @Override
    public Optional<Route> find(String id)
    {
        CompletableFuture<Optional<Route>> route = findAsync(id);
        if (route.isDone())
            return Futures.join(route);
        return waits.call("route store", () -> Futures.join(route));
    }

    @Override
    public Optional<Route> cached(String id)
    {
        Route cached = cache.get(id);
        if (cached == null)
            return Optional.empty();
        hits.increment();
        return Optional.of(cached);
    }

    /** A miss is an HGET that no thread waits for; the route is cached when it answers, as with {@link #find}. */
    @Override
    public CompletableFuture<Optional<Route>> findAsync(String id)
    {
        Optional<Route> cached = cached(id);
        if (cached.isPresent())
            return CompletableFuture.completedFuture(cached);
        long before = changes.get();
        if (absent.contains(id, before))
        {
            absentHits.increment();
            return CompletableFuture.completedFuture(Optional.empty());
        }
        misses.increment();
        // A copy, so that no caller can complete or cancel what the others wait for.
        return read(id, before).copy();
    }

    /**
     * Reads the id with HGET, or joins a read of it already in flight, so that a burst of lookups of
     * one id (a page's requests, a client hammering a made-up id) costs one. A read is joined only if
     * no change was heard since it was sent, or it might not show that change.
     *
     * @param before the change count now, before the read is sent
     */
    private CompletableFuture<Optional<Route>> read(String id, long before)
    {
        Read mine = new Read(before, new CompletableFuture<>());
        Read read = reading.compute(id, (ignored, current) -> current != null && current.sent() == before ? current : mine);
        if (read != mine)
            return read.route();
        CompletionStage<String> hget;
        try
        {
            hget = hash.getAsync(id);
        }
        catch (RuntimeException x)
        {
            // The client shutting down.
            hget = CompletableFuture.failedFuture(x);
        }
        hget.whenComplete((value, failure) ->
        {
            if (failure != null)
            {
                // RedisException in all its forms, or the client shutting down: either way, no answer.
                reachable = false;
                reading.remove(id, mine);
                mine.route().completeExceptionally(new StoreUnavailableException("route store unreachable", failure));
                return;
            }
            reachable = true;
            try
            {
                // Cached before the read is let go, so that a lookup from now on finds the answer
                // (or, if a change was heard meanwhile, sends a read of its own).
                Route route = remember(id, value, before);
                reading.remove(id, mine);
                mine.route().complete(Optional.ofNullable(route));
            }
            catch (RuntimeException x)
            {
                reading.remove(id, mine);
                mine.route().completeExceptionally(x);
            }
        });
        return mine.route();
    }

    /**
     * Caches what a miss read: the route, or that there is none.
     *
     * @param before the change count when the read was sent
     */
    private Route remember(String id, String value, long before)
    {
        Route route = parse(id, value);
        if (route == null)
        {
            // Not if a change was heard since the HGET was sent: it may be the write of this route.
            absent.add(id, before, changes.get());
            return null;
        }
        if (cache.size() >= cacheSize)
            evict();
        cache.put(id, route);
        // A write that landed between our HGET and the put may have been applied to the cache
        // before our stale value: read again.
        if (changes.get() != before)
            onChange();
        return route;
    }

    /** An HGET whatever the cache holds, joined with one in flight only if no change was heard since it was sent. */
    @Override
    public CompletableFuture<Optional<Route>> lookUp(String id)
    {
        misses.increment();
        return read(id, changes.get()).copy();
    }

    @Override
    public void onChanges(Runnable listener)
    {
        listeners.add(listener);
    }

    /** Tells the listeners, which only look up what they wait for; one that fails must not stop the refresh. */
    private void tellListeners()
    {
        for (Runnable listener : listeners)
        {
            try
            {
                listener.run();
            }
            catch (RuntimeException x)
            {
                LOG.warn("Route store: a change listener failed", x);
            }
        }
    }

    @Override
    public void put(String id, Route route)
    {
        hash.fastPut(id, route.format());
        cache.put(id, route);
        absent.remove(id);
        tellListeners();
    }

    @Override
    public boolean remove(String id)
    {
        cache.remove(id);
        return hash.fastRemove(id) > 0;
    }

    @Override
    public boolean removeIf(String id, String generation)
    {
        String value = hash.get(id);
        Route current = value == null ? null : parse(id, value);
        if (current == null || !current.generation().equals(Optional.of(generation)))
            return false;
        // HDEL only if the value is still the one just read (Redisson does the compare atomically).
        boolean removed = hash.remove(id, value);
        if (removed)
            cache.remove(id);
        return removed;
    }

    @Override
    public Optional<Route> revoke(String id, Instant before)
    {
        try
        {
            // Compare-and-set on the stored text: a route someone writes meanwhile is read again and
            // stamped in turn, never overwritten with the one read before it.
            for (int attempt = 0; attempt < REVOKE_ATTEMPTS; attempt++)
            {
                String value = hash.get(id);
                Route current = parse(id, value);
                if (current == null)
                    return Optional.empty();
                Route stamped = current.revokedBefore(before);
                if (stamped == current || hash.replace(id, value, stamped.format()))
                {
                    cache.put(id, stamped);
                    absent.remove(id);
                    return Optional.of(stamped);
                }
            }
        }
        catch (RuntimeException x)
        {
            throw new StoreUnavailableException("route store unreachable", x);
        }
        throw new StoreUnavailableException("route of sandbox " + id + " kept changing; revocation not written", null);
    }

    @Override
    public Map<String, Route> all()
    {
        Map<String, Route> routes = new TreeMap<>();
        hash.readAllMap().forEach((id, value) ->
        {
            Route route = parse(id, value);
            if (route != null)
                routes.put(id, route);
        });
        return routes;
    }

    @Override
    public RoutePage search(String prefix, String cursor, int limit)
    {
        return search.page(globEscape(prefix) + "*", cursor, limit);
    }

    StoreHealth health()
    {
        try
        {
            hash.isExists();
            reachable = true;
        }
        catch (RuntimeException x)
        {
            // RedisException in all its forms, or the client shutting down: no answer either way.
            reachable = false;
            pingFailures.increment();
        }
        String mode = notifications.confirmed() ? "keyspace notifications" : "polling every " + config.pollInterval().toMillis() + "ms";
        return new StoreHealth("redis", reachable, reachable
            ? "reachable; " + cache.size() + " routes cached; changes seen by " + mode
            : "unreachable; serving " + cache.size() + " cached routes");
    }

    void onDisconnect()
    {
        // Events sent while we were away are lost: poll until the tick has set the notifications up
        // again and re-read everything. Ids found absent may have been written meanwhile.
        notifications.lost();
        changes.incrementAndGet();
    }

    /**
     * A keyspace notification: the cache is re-read shortly, folding a burst into one read, but a
     * listener waiting for a sandbox asks for it at once ({@link #lookUp}) rather than after the fold.
     */
    private void heard()
    {
        onChange();
        tellListeners();
    }

    private void onChange()
    {
        changes.incrementAndGet();
        if (refreshScheduled.compareAndSet(false, true))
        {
            // A short delay folds a burst of writes (a pod watcher resync) into one HMGET.
            try
            {
                scheduler.schedule(() ->
                {
                    refreshScheduled.set(false);
                    refreshQuietly();
                }, 20, TimeUnit.MILLISECONDS);
            }
            catch (RejectedExecutionException x)
            {
                // The store is closing: a notification that arrives now has no cache left to refresh.
            }
        }
    }

    private void tick()
    {
        try
        {
            notifications.checkMasters();
            boolean due = System.nanoTime() - lastFullRefreshNanos > config.revalidateInterval().toNanos();
            if (notifications.confirmed() && !due)
                return;
            notifications.setUp();
            // Polling, or just subscribed again, or the safety net: a write may have gone unheard,
            // so ids found absent are forgotten as the cached routes are re-read. Only now, with the
            // subscription in place, so that an absence found later is one a notification would end.
            changes.incrementAndGet();
            refresh();
            lastFullRefreshNanos = System.nanoTime();
        }
        catch (RuntimeException x)
        {
            notifications.unconfirmed();
            changes.incrementAndGet();
            if (reachable)
                LOG.warn("Route store: Redis unreachable ({}); serving {} cached routes", x.getClass().getSimpleName(), cache.size());
            reachable = false;
        }
    }

    private void refreshQuietly()
    {
        try
        {
            refresh();
        }
        catch (RuntimeException x)
        {
            notifications.unconfirmed();
            reachable = false;
        }
    }

    /**
     * Re-reads every cached id with HMGET, in batches; drops ids whose route is gone. An unchanged
     * route keeps its cached instance: replacing it with the equal one just parsed would make every
     * cached route new garbage in the old generation and a survivor for the next young collection to
     * copy, at each revalidation and after every route write anywhere in the hash.
     */
    private void refresh()
    {
        List<String> ids = new ArrayList<>(cache.keySet());
        for (int from = 0; from < ids.size(); from += BATCH)
        {
            List<String> batch = ids.subList(from, Math.min(ids.size(), from + BATCH));
            Map<String, String> values = hash.getAll(new HashSet<>(batch));
            for (String id : batch)
            {
                Route route = parse(id, values.get(id));
                if (route == null)
                    cache.remove(id);
                else if (!route.equals(cache.get(id)))
                    cache.put(id, route);
            }
        }
        if (!reachable)
            LOG.info("Route store: Redis reachable again");
        reachable = true;
        tellListeners();
    }

    private Route parse(String id, String value)
    {
        if (value == null)
            return null;
        try
        {
            return Route.parse(value);
        }
        catch (IllegalArgumentException x)
        {
            LOG.warn("Route store: ignoring malformed route for sandbox {} in {}: {}", id, key, x.getMessage());
            return null;
        }
    }

    private void evict()
    {
        // Cheap bound rather than LRU: dropping an entry only costs one HGET on its next use.
        int drop = Math.max(1, cacheSize / 10);
        for (String id : cache.keySet())
        {
            if (drop-- <= 0)
                break;
            cache.remove(id);
        }
    }

    /** Ids and the hash's name are literal text inside Redis's glob patterns (PSUBSCRIBE, HSCAN's MATCH). */
    private static String globEscape(String text)
    {
        return text.replaceAll("([*?\\[\\]\\\\])", "\\\\$1");
    }
}
