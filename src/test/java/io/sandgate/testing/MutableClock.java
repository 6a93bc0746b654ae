package io.sandgate.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock tests move by hand, so expiry is tested without sleeping. */
public final class MutableClock extends Clock
{
    private volatile Instant now;

    public MutableClock(Instant now)
    {
        this.now = now;
    }

    public void set(Instant instant)
    {
        now = instant;
    }

    public void advance(Duration duration)
    {
        now = now.plus(duration);
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
        return now;
    }
}
