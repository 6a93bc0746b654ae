package io.sandgate.config;

import java.time.Duration;

/**
 * The short history the dashboard draws, kept in memory by each replica.
 *
 * @param interval time between two samples
 * @param samples samples kept; the oldest goes when a new one comes, so memory stays bounded
 */
public record HistoryConfig(Duration interval, int samples)
{
    public HistoryConfig
    {
        // Finer sampling would cost more than the charts show.
        if (interval.toMillis() < 100)
            throw new IllegalArgumentException(ConfigKeys.ADMIN_HISTORY_INTERVAL.name() + ": " + interval + " (expected: at least 100ms)");
    }
}
