package io.sandgate;

import java.time.Clock;
import java.util.Objects;

import io.sandgate.net.Resolver;
import io.sandgate.tracing.Tracing;

/**
 * What the gateway takes from the world around it rather than from its configuration: the time,
 * the name service, and (when given) where spans go. A deployment runs on {@link #SYSTEM}; tests
 * give a clock they move, names that answer slowly or never, and an in-memory span exporter.
 *
 * @param clock the time every expiry, grant and history sample is judged by
 * @param resolver how the egress face resolves target names
 * @param tracing where spans go whatever the configuration says, closed by whoever made it; null:
 *                as {@code tracing.*} says, made and closed by the gateway
 */
public record Surroundings(Clock clock, Resolver resolver, Tracing tracing)
{
    /** The system's clock and name service, tracing as configured. */
    public static final Surroundings SYSTEM = new Surroundings(Clock.systemUTC(), Resolver.SYSTEM, null);

    public Surroundings
    {
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(resolver, "resolver");
    }

    public Surroundings withClock(Clock clock)
    {
        return new Surroundings(clock, resolver, tracing);
    }

    public Surroundings withResolver(Resolver resolver)
    {
        return new Surroundings(clock, resolver, tracing);
    }

    public Surroundings withTracing(Tracing tracing)
    {
        return new Surroundings(clock, resolver, tracing);
    }
}
