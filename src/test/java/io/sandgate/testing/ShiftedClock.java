package io.sandgate.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The system's time plus a shift a test adds to: time goes on as it does for the gateway's other
 * parts (Redis, sockets), and a test that needs a second to pass moves it at once instead of
 * sleeping. Unlike {@link MutableClock} it never stands still, so two events are never stamped
 * with one instant unless they are.
 */
public final class ShiftedClock extends Clock
{
    private volatile Duration shift = Duration.ZERO;

    public void advance(Duration duration)
    {
        shift = shift.plus(duration);
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
        return Instant.now().plus(shift);
    }
}
