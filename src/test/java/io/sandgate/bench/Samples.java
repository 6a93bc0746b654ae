package io.sandgate.bench;

import java.util.Arrays;

/**
 * Latency samples in nanoseconds, kept whole so that percentiles are exact (nearest rank on the
 * sorted samples; HdrHistogram is not on the classpath and a run records at most a few million).
 */
final class Samples
{
    private long[] values = new long[1 << 16];
    private int size;

    synchronized void add(long nanos)
    {
        if (size == values.length)
            values = Arrays.copyOf(values, size * 2);
        values[size++] = nanos;
    }

    synchronized int size()
    {
        return size;
    }

    /** Sorted copy; percentiles are read from it. */
    synchronized long[] sorted()
    {
        long[] copy = Arrays.copyOf(values, size);
        Arrays.sort(copy);
        return copy;
    }

    /** Nearest-rank percentile in milliseconds, {@code q} in [0, 1]; NaN without samples. */
    static double millis(long[] sorted, double q)
    {
        if (sorted.length == 0)
            return Double.NaN;
        int rank = (int)Math.ceil(q * sorted.length);
        return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] / 1e6;
    }

    /** The {@code RESULT} line fields shared by the load tools: p50, p99, p99.9 and max in ms. */
    static String percentiles(long[] sorted)
    {
        return String.format(java.util.Locale.ROOT, "p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f",
            millis(sorted, 0.50), millis(sorted, 0.99), millis(sorted, 0.999), millis(sorted, 1.0));
    }
}
