package io.sandgate.secrets;

import java.time.Duration;

/** A duration as people read it in messages and logs: {@code 45s}, {@code 5m 30s}, {@code 2h 10m}. */
final class HumanDuration
{
    private HumanDuration()
    {
    }

    static String of(Duration duration)
    {
        long s = Math.max(0, duration.toSeconds());
        if (s < 120)
            return s + "s";
        if (s < 2 * 3600)
            return (s / 60) + "m" + (s % 60 == 0 ? "" : " " + (s % 60) + "s");
        return (s / 3600) + "h" + ((s % 3600) / 60 == 0 ? "" : " " + (s % 3600) / 60 + "m");
    }
}
