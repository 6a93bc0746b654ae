package io.sandgate.config;

import java.time.Duration;
import java.util.Objects;

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
        Objects.requireNonNull(interval, "interval");
    }
}
