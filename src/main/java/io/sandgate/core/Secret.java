package io.sandgate.core;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A configuration value that must never be printed: {@link #toString()} hides it, so a secret that
 * slips into a log line, an error body or a config dump shows as {@code ****}.
 */
public final class Secret
{
    private final String value;

    public Secret(String value)
    {
        Objects.requireNonNull(value, "value");
        if (value.isEmpty())
            throw new IllegalArgumentException("empty secret");
        this.value = value;
    }

    /** The clear value, for the one place that needs it (a MAC key, a Redis password). */
    public String reveal()
    {
        return value;
    }

    public byte[] bytes()
    {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o)
    {
        return o instanceof Secret other && other.value.equals(value);
    }

    @Override
    public int hashCode()
    {
        return value.hashCode();
    }

    @Override
    public String toString()
    {
        return "****";
    }
}
