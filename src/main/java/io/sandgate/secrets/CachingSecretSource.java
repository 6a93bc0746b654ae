package io.sandgate.secrets;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import io.sandgate.core.Secret;
import io.sandgate.secrets.SecretUnavailableException.Reason;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stale-while-revalidate over any {@link SecretSource}. The first {@code get} of a name asks the
 * source while the caller waits. Once a value is older than the refresh interval, {@code get}
 * still answers with it and asks the source again in the background, so the source's latency and
 * outages stay off the request path. While the source cannot answer, the value read last is
 * served until it is older than the max age; then the secret is {@link Reason#EXPIRED}. A name
 * that was never read cannot be served while the source is down ({@link Reason#SOURCE_DOWN}), and a
 * name the source no longer knows ({@link Reason#UNKNOWN}) stops being served at once.
 *
 * <p>Hand-written rather than Caffeine. Caffeine's {@code refreshAfterWrite} tries a failed
 * reload again on every read that follows it, where this cache waits a whole refresh interval, so
 * that an outage does not turn each request into a call to a source that is down; and Caffeine's
 * expiry evicts the value whose age and outage the {@code EXPIRED} message reports. What remains
 * once both are worked around (one map, and the set of names being refreshed) is this class.
 */
public final class CachingSecretSource implements SecretSource
{
    private static final Logger LOG = LoggerFactory.getLogger(CachingSecretSource.class);

    /** A value and when the source last gave it; {@code lastAttempt} paces background refreshes. */
    private record Entry(Secret value, Instant readAt, Instant lastAttempt)
    {
    }

    private final SecretSource source;
    private final Duration refreshInterval;
    private final Duration maxAge;
    private final Clock clock;
    private final Executor refresher;
    private final Map<String, Entry> cache = new ConcurrentHashMap<>();
    private final Set<String> refreshing = ConcurrentHashMap.newKeySet();

    /** Start of the current outage (clock time), or null while the source answers. */
    private volatile Instant outageSince;
    private volatile boolean closed;

    /**
     * @param source          asked on a miss and on every refresh; closed with this cache
     * @param refreshInterval a value this old is served while it is read again in the background
     * @param maxAge          a value older than this is not served, even while the source is down
     * @param refresher       runs the background reads, which may block
     */
    public CachingSecretSource(SecretSource source, Duration refreshInterval, Duration maxAge, Clock clock, Executor refresher)
    {
        this.source = Objects.requireNonNull(source, "source");
        this.refreshInterval = positive(refreshInterval, "refreshInterval");
        this.maxAge = positive(maxAge, "maxAge");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.refresher = Objects.requireNonNull(refresher, "refresher");
    }

    @Override
    public Secret get(String name)
    {
        Objects.requireNonNull(name, "name");
        if (closed)
            throw new IllegalStateException(source.kind() + " secret source is closed");
        Instant now = clock.instant();
        Entry entry = cache.get(name);
        if (entry == null)
            return readAndCache(name, null);
        Duration age = Duration.between(entry.readAt(), now);
        if (age.compareTo(maxAge) > 0)
            return readAndCache(name, entry);
        if (age.compareTo(refreshInterval) >= 0 && Duration.between(entry.lastAttempt(), now).compareTo(refreshInterval) >= 0)
            refreshInBackground(name);
        return entry.value();
    }

    @Override
    public String kind()
    {
        return source.kind();
    }

    @Override
    public void close()
    {
        closed = true;
        source.close();
    }

    private Secret readAndCache(String name, Entry cached)
    {
        Instant now = clock.instant();
        try
        {
            Secret value = source.get(name);
            cache.put(name, new Entry(value, now, now));
            recovered();
            return value;
        }
        catch (SecretUnavailableException x)
        {
            if (x.reason() == Reason.UNKNOWN)
            {
                // Deleted in the source: stop serving the old value.
                cache.remove(name);
                throw x;
            }
            failed(x);
            if (cached == null)
                throw x;
            cache.put(name, new Entry(cached.value(), cached.readAt(), now));
            Duration age = Duration.between(cached.readAt(), now);
            if (age.compareTo(maxAge) <= 0)
                return cached.value();
            Instant since = outageSince == null ? cached.readAt() : outageSince;
            throw new SecretUnavailableException(Reason.EXPIRED, "secret '" + name + "' expired from cache: " + source.kind()
                + " unreachable for " + HumanDuration.of(Duration.between(since, now)) + " (value read " + HumanDuration.of(age)
                + " ago, max age " + HumanDuration.of(maxAge) + "); last error: " + x.getMessage());
        }
    }

    private void refreshInBackground(String name)
    {
        if (!refreshing.add(name))
            return;
        try
        {
            refresher.execute(() ->
            {
                try
                {
                    if (!closed)
                        readAndCache(name, cache.get(name));
                }
                catch (SecretUnavailableException x)
                {
                    // Logged by failed(); callers keep getting the cached value or the error.
                }
                catch (RuntimeException x)
                {
                    LOG.warn("{} source: refresh of secret '{}' failed: {}", source.kind(), name, x.getClass().getSimpleName());
                }
                finally
                {
                    refreshing.remove(name);
                }
            });
        }
        catch (RejectedExecutionException x)
        {
            // The gateway is stopping.
            refreshing.remove(name);
        }
    }

    private void failed(SecretUnavailableException x)
    {
        if (outageSince == null)
        {
            outageSince = clock.instant();
            LOG.warn("{} source: {}; serving cached values for up to {}", source.kind(), x.getMessage(), HumanDuration.of(maxAge));
        }
    }

    private void recovered()
    {
        if (outageSince != null)
        {
            LOG.info("{} source: {} answers again after {}", source.kind(), source.kind(),
                HumanDuration.of(Duration.between(outageSince, clock.instant())));
            outageSince = null;
        }
    }

    private static Duration positive(Duration value, String what)
    {
        Objects.requireNonNull(value, what);
        if (value.isZero() || value.isNegative())
            throw new IllegalArgumentException(what + ": " + value + " (expected: > 0)");
        return value;
    }
}
