package io.sandgate.secrets;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.sandgate.core.Secret;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rotation with overlap on top of a {@link SecretSource}: each read remembers the value seen, and
 * when a value changes the old one stays valid for the overlap window, so work that started with
 * it (an agent holding the old internal token, an exchange in flight with the old key) is not cut
 * off. Sources only ever know the current value; the ring is the one place that knows history.
 */
public final class SecretRing
{
    private static final Logger LOG = LoggerFactory.getLogger(SecretRing.class);

    private final SecretSource source;
    private final Duration overlap;
    private final Clock clock;
    private final Map<String, Versions> byName = new ConcurrentHashMap<>();

    /** The current value and the rotated-out ones still inside their overlap. */
    private record Versions(Secret current, List<Retired> retired)
    {
    }

    private record Retired(Secret value, Instant until)
    {
    }

    public SecretRing(SecretSource source, Duration overlap, Clock clock)
    {
        this.source = source;
        this.overlap = overlap;
        this.clock = clock;
    }

    /** The value to use now; a change since the last read starts the old value's overlap. */
    public Secret current(String name)
    {
        Secret value = source.get(name);
        byName.compute(name, (n, known) ->
        {
            if (known == null)
                return new Versions(value, List.of());
            if (known.current().equals(value))
                return known;
            LOG.info("Secret '{}' rotated; the previous value stays valid for {}", name, overlap);
            List<Retired> retired = new ArrayList<>(live(known.retired()));
            retired.add(new Retired(known.current(), clock.instant().plus(overlap)));
            return new Versions(value, List.copyOf(retired));
        });
        return value;
    }

    /** A value and until when it is valid ({@link Instant#MAX} for the current one). */
    public record Valid(Secret value, Instant until)
    {
    }

    /**
     * The values of this secret that are valid now: the current one as last read, then rotated-out
     * ones still inside their overlap. Never reads the source: request paths must not wait on it.
     */
    public List<Valid> valid(String name)
    {
        Versions versions = byName.get(name);
        if (versions == null)
            return List.of();
        List<Valid> values = new ArrayList<>();
        values.add(new Valid(versions.current(), Instant.MAX));
        live(versions.retired()).forEach(r -> values.add(new Valid(r.value(), r.until())));
        return values;
    }

    /** Every value of these secrets valid now, for the leak scanner's list of keys the gateway holds. */
    public Set<String> held(Collection<String> names)
    {
        Set<String> values = new HashSet<>();
        for (String name : names)
            valid(name).forEach(v -> values.add(v.value().reveal()));
        return values;
    }

    /**
     * Reads every name again; a name the source cannot answer for keeps what was known, a name it
     * no longer has loses every value. Returns how many could not be read (their names are logged,
     * never values).
     */
    public int refresh(Collection<String> names)
    {
        int failed = 0;
        for (String name : names)
        {
            try
            {
                current(name);
            }
            catch (SecretUnavailableException x)
            {
                failed++;
                if (x.reason() == SecretUnavailableException.Reason.UNKNOWN && byName.remove(name) != null)
                {
                    // Deleted from the source: that is how an operator cuts a token off, so nothing
                    // of it stays valid (no overlap either).
                    LOG.warn("Secret '{}' is gone from {}; its values are no longer valid", name, source.kind());
                    continue;
                }
                LOG.warn("Cannot refresh secret '{}' from {}: {}", name, source.kind(), x.getMessage());
            }
        }
        return failed;
    }

    public SecretSource source()
    {
        return source;
    }

    private List<Retired> live(List<Retired> retired)
    {
        Instant now = clock.instant();
        return retired.stream().filter(r -> r.until().isAfter(now)).toList();
    }
}
