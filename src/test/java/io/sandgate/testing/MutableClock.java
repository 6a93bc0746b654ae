package io.sandgate.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock tests move by hand, so expiry is tested without sleeping. Made with an instant it stands
 * still there until moved; made {@link #ticking()}, it is the system's time plus whatever a test
 * moved it by, so that it goes on as the gateway's other parts do (Redis, sockets) and two events
 * are never stamped with one instant unless they are.
 */
public final class MutableClock extends Clock
{
    /** The instant it stands at, or null when it ticks with the system's time. */
    private volatile Instant standing;
    private volatile Duration moved = Duration.ZERO;

    public MutableClock(Instant now)
    {
        this.standing = now;
    }

    private MutableClock()
    {
    }

    /** The system's time, moved ahead by each {@link #advance}. */
    public static MutableClock ticking()
    {
        return new MutableClock();
    }

    public void set(Instant instant)
    {
        standing = instant;
        moved = Duration.ZERO;
    }

    public void advance(Duration duration)
    {
        moved = moved.plus(duration);
    }

    @Override
    public ZoneId getZone()
    {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone)
    {
        return this;
    }

    @Override
    public Instant instant()
    {
        Instant base = standing;
        return (base == null ? Instant.now() : base).plus(moved);
    }
}
