package io.sandgate.store;

import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.StoreConfig;
import io.sandgate.core.StoreHealth;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RoutePage;
import io.sandgate.ingress.RouteStore;
import org.redisson.api.RMap;
import org.redisson.api.RPatternTopic;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.client.RedisException;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes in a Redis hash, {@code id -> host:port}, as any Redis client writes them.
 *
 * <p>Each replica keeps the routes it has used in a local map, so a cached route costs no Redis
 * round trip. Redisson's local-cached map would not do: it only hears of writes made through
 * Redisson, and the pod watcher of the seed architecture writes with a plain {@code HSET}. Instead
 * this store subscribes to Redis keyspace notifications for the hash ({@code __keyspace@*__:key}),
 * which Redis emits for every {@code HSET}, {@code HDEL} or {@code DEL} whoever sends it, and then
 * re-reads the cached ids with one {@code HMGET}. Notifications say that the hash changed, not
 * which field, hence the re-read of all cached ids; bursts are coalesced into one.</p>
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
 *
 * <p>In Redis Cluster and behind Sentinel the events come from whichever master holds the hash's
 * slot, and only if that master has them turned on: Redisson subscribes on every master, the
 * events are turned on at every master, and both are done again when the set of masters changes,
 * which is what a failover looks like from here. The re-read that follows covers what was written
 * meanwhile.</p>
 */
final class RedisRouteStore implements RouteStore
{
    private static final Logger LOG = LoggerFactory.getLogger(RedisRouteStore.class);
    /** K: keyspace channel, h: hash commands, g: DEL/RENAME/EXPIRE, x: expired keys. */
    private static final String REQUIRED_EVENTS = "Khgx";
    private static final int BATCH = 1000;
    private static final int REVOKE_ATTEMPTS = 10;
    /**
     * How often the store pings Redis on its own, so that a failure is counted (and readiness is
     * current) even where nothing asks {@code /readyz}.
     */
    private static final long PING_PERIOD_MILLIS = 5000;
    /**
     * One HSCAN step, its field-value pairs flattened after the cursor. Through a script because
     * Redisson's own map scans hide the cursor, and a page must hand it on to the next request.
     */
    private static final String HSCAN = "local r = redis.call('HSCAN', KEYS[1], ARGV[1], 'MATCH', ARGV[2], 'COUNT', ARGV[3]) "
        + "local out = {r[1]} for _, v in ipairs(r[2]) do out[#out + 1] = v end return out";
    /** Fields HSCAN looks at per step: small enough that no step holds Redis up. */
    private static final int SCAN_COUNT = 1000;
    /** Steps one page may take, so that a rare prefix in a huge hash answers in bounded time, with a next page. */
    private static final int SCAN_STEPS_PER_PAGE = 200;
    private static final Pattern SEARCH_CURSOR = Pattern.compile("(\\d{1,20}):(\\d{1,7})");

    /** An HGET in flight, and the lookups waiting for it. */
    private record Read(long sent, CompletableFuture<Optional<Route>> route)
    {
    }

    private final RedissonClient redisson;
    private final RedisWaits waits;
    private final String key;
    private final RMap<String, String> hash;
    private final StoreConfig.Redis config;
    private final int cacheSize;
    private final ScheduledExecutorService scheduler;
    private final Map<String, Route> cache = new ConcurrentHashMap<>();
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
    private final RPatternTopic topic;
    /** Whether our PSUBSCRIBE is in place; only the store thread sets it true. */
    private volatile boolean subscribed;
    /** Whether the server emits the events and we hear them; until then, poll. */
    private volatile boolean notificationsConfirmed;
    private volatile boolean reachable = true;
    private volatile long lastFullRefreshNanos = System.nanoTime();
    /** The masters the events were turned on at and subscribed to; another set means a failover. */
    private volatile Set<InetSocketAddress> watched = Set.of();

    RedisRouteStore(RedissonClient redisson, String key, StoreConfig.Redis config, int cacheSize, MeterRegistry registry, ScheduledExecutorService scheduler,
                    Clock clock, RedisWaits waits)
    {
        this.redisson = redisson;
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
        this.topic = redisson.getPatternTopic("__keyspace@*__:" + globEscape(key), StringCodec.INSTANCE);
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
            return join(route);
        return waits.call("route store", () -> join(route));
    }

    private static Optional<Route> join(CompletableFuture<Optional<Route>> route)
    {
        try
        {
            return route.join();
        }
        catch (CompletionException x)
        {
            // Thrown as find promises, not wrapped: StoreUnavailableException when Redis gave no answer.
            if (x.getCause() instanceof RuntimeException cause)
                throw cause;
            throw x;
        }
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

    @Override
    public void put(String id, Route route)
    {
        hash.fastPut(id, route.format());
        cache.put(id, route);
        absent.remove(id);
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

    /**
     * HSCAN with MATCH, never the whole hash: the cursor is {@code <HSCAN cursor>:<pairs to skip>},
     * as a page may fill up within one HSCAN step and the next must start where it stopped.
     */
    @Override
    public RoutePage search(String prefix, String cursor, int limit)
    {
        String scan = "0";
        int skip = 0;
        if (cursor != null)
        {
            Matcher parsed = SEARCH_CURSOR.matcher(cursor);
            if (!parsed.matches())
                throw new IllegalArgumentException("cursor: " + cursor + " (expected: the next of a page this store gave)");
            scan = parsed.group(1);
            skip = Integer.parseInt(parsed.group(2));
        }
        String match = globEscape(prefix) + "*";
        RScript script = redisson.getScript(StringCodec.INSTANCE);
        Map<String, Route> found = new TreeMap<>();
        try
        {
            for (int step = 0; step < SCAN_STEPS_PER_PAGE; step++)
            {
                List<String> reply = script.eval(key, RScript.Mode.READ_ONLY, HSCAN, RScript.ReturnType.LIST, List.of(key),
                    scan, match, Integer.toString(SCAN_COUNT));
                String following = reply.get(0);
                for (int pair = skip; pair < (reply.size() - 1) / 2; pair++)
                {
                    if (found.size() == limit)
                        return new RoutePage(found, Optional.of(scan + ":" + pair));
                    String id = reply.get(1 + 2 * pair);
                    Route route = parse(id, reply.get(2 + 2 * pair));
                    if (route != null)
                        found.put(id, route);
                }
                skip = 0;
                if (following.equals("0"))
                    return new RoutePage(found, Optional.empty());
                scan = following;
                if (found.size() == limit)
                    break;
            }
        }
        catch (RuntimeException x)
        {
            throw new StoreUnavailableException("route store unreachable", x);
        }
        return new RoutePage(found, Optional.of(scan + ":0"));
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
        String mode = notificationsConfirmed ? "keyspace notifications" : "polling every " + config.pollInterval().toMillis() + "ms";
        return new StoreHealth("redis", reachable, reachable
            ? "reachable; " + cache.size() + " routes cached; changes seen by " + mode
            : "unreachable; serving " + cache.size() + " cached routes");
    }

    void onDisconnect()
    {
        // A restarted Redis has forgotten notify-keyspace-events and our subscription, and events
        // sent while we were away are lost: poll until the tick has subscribed again, re-enabled
        // the events and re-read everything. Ids found absent may have been written meanwhile.
        subscribed = false;
        notificationsConfirmed = false;
        changes.incrementAndGet();
    }

    private void onChange()
    {
        changes.incrementAndGet();
        if (refreshScheduled.compareAndSet(false, true))
        {
            // A short delay folds a burst of writes (a pod watcher resync) into one HMGET.
            scheduler.schedule(() ->
            {
                refreshScheduled.set(false);
                refreshQuietly();
            }, 20, TimeUnit.MILLISECONDS);
        }
    }

    private void tick()
    {
        try
        {
            if (!knownMasters().equals(watched))
            {
                // A failover put a replica in charge of the hash: it has neither the events turned on
                // (only masters get CONFIG SET) nor our PSUBSCRIBE, and a planned failover drops no
                // connection that would have told us.
                subscribed = false;
                notificationsConfirmed = false;
            }
            boolean due = System.nanoTime() - lastFullRefreshNanos > config.revalidateInterval().toNanos();
            if (notificationsConfirmed && !due)
                return;
            if (!subscribed)
                subscribe();
            if (!notificationsConfirmed)
            {
                // Asked after subscribing, which connects a client that is still lazy.
                List<? extends RedisNode> masters = masters();
                notificationsConfirmed = enableNotifications(masters);
                watched = addresses(masters);
            }
            // Polling, or just subscribed again, or the safety net: a write may have gone unheard,
            // so ids found absent are forgotten as the cached routes are re-read. Only now, with the
            // subscription in place, so that an absence found later is one a notification would end.
            changes.incrementAndGet();
            refresh();
            lastFullRefreshNanos = System.nanoTime();
        }
        catch (RuntimeException x)
        {
            notificationsConfirmed = false;
            changes.incrementAndGet();
            if (reachable)
                LOG.warn("Route store: Redis unreachable ({}); serving {} cached routes", x.getClass().getSimpleName(), cache.size());
            reachable = false;
        }
    }

    /**
     * (Re)places the pattern subscription. Done by hand rather than trusting the client's own
     * resubscription, because a subscription made while Redis was unreachable never completes.
     */
    private void subscribe()
    {
        // Asynchronous with a bound of our own: a dead master's PUNSUBSCRIBE would otherwise hold
        // this thread, and with it every re-read, for Redisson's whole subscription timeout.
        long bound = config.timeout().toMillis() * 2;
        topic.removeAllListenersAsync().toCompletableFuture().orTimeout(bound, TimeUnit.MILLISECONDS).join();
        // In a cluster Redisson places one PSUBSCRIBE on every master, as each emits the events of
        // its own slots only.
        topic.addListenerAsync(String.class, (pattern, channel, event) -> onChange())
            .toCompletableFuture().orTimeout(bound, TimeUnit.MILLISECONDS).join();
        subscribed = true;
    }

    private void refreshQuietly()
    {
        try
        {
            refresh();
        }
        catch (RuntimeException x)
        {
            notificationsConfirmed = false;
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
    }

    /** Turns the events on where they are emitted: on every master, each for its own slots. */
    private boolean enableNotifications(List<? extends RedisNode> masters)
    {
        // Not connected yet (the client is lazy): nothing is confirmed, the next tick tries again.
        if (masters.isEmpty())
            return false;
        try
        {
            for (RedisNode node : masters)
            {
                String current = node.getConfig("notify-keyspace-events").getOrDefault("notify-keyspace-events", "");
                String wanted = merge(current);
                if (!wanted.equals(current))
                    node.setConfig("notify-keyspace-events", wanted);
            }
            return true;
        }
        catch (RedisException x)
        {
            if (x.getMessage() != null && x.getMessage().contains("ERR"))
            {
                // CONFIG is often renamed or forbidden on managed Redis: say how to fix it, and poll.
                LOG.warn("Route store: cannot enable keyspace notifications ({}); set notify-keyspace-events to include '{}' on the server. Polling every {} meanwhile.",
                    x.getMessage(), REQUIRED_EVENTS, config.pollInterval());
                return false;
            }
            throw x;
        }
    }

    /** The masters as the client knows them, without asking Redis; none before it has connected. */
    private Set<InetSocketAddress> knownMasters()
    {
        try
        {
            return addresses(masters());
        }
        catch (RuntimeException x)
        {
            return Set.of();
        }
    }

    private static Set<InetSocketAddress> addresses(List<? extends RedisNode> nodes)
    {
        return nodes.stream().map(RedisNode::getAddr).collect(Collectors.toSet());
    }

    private List<? extends RedisNode> masters()
    {
        if (!config.clusterNodes().isEmpty())
            return new ArrayList<>(redisson.getRedisNodes(RedisNodes.CLUSTER).getMasters());
        if (!config.sentinelNodes().isEmpty())
            return List.of(redisson.getRedisNodes(RedisNodes.SENTINEL_MASTER_SLAVE).getMaster());
        return List.of(redisson.getRedisNodes(RedisNodes.SINGLE).getInstance());
    }

    /** Adds the flags we need to the server's current ones, keeping whatever else it emits. */
    static String merge(String current)
    {
        if (current.contains("A") && current.contains("K"))
            return current;
        StringBuilder flags = new StringBuilder(current);
        for (char flag : REQUIRED_EVENTS.toCharArray())
        {
            boolean covered = flags.indexOf(String.valueOf(flag)) >= 0 || (flag != 'K' && flags.indexOf("A") >= 0);
            if (!covered)
                flags.append(flag);
        }
        return flags.toString();
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

    private static String globEscape(String text)
    {
        return text.replaceAll("([*?\\[\\]\\\\])", "\\\\$1");
    }
}
