package io.sandgate.secrets;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the {@link FileSecretSource}.
 *
 * @param path           YAML file of {@code name: value} lines; must not be readable or writable by
 *                       group or others on POSIX file systems
 * @param reloadInterval how often, at most, the file's modification time and size are looked at
 *                       (default 1 s); a rotated value is seen within this interval
 */
public record FileSecretSettings(Path path, Duration reloadInterval)
{
    public static final Duration DEFAULT_RELOAD_INTERVAL = Duration.ofSeconds(1);

    public FileSecretSettings
    {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(reloadInterval, "reloadInterval");
        if (reloadInterval.isNegative())
            throw new IllegalArgumentException("reloadInterval: " + reloadInterval + " (expected: >= 0)");
    }

    public FileSecretSettings(Path path)
    {
        this(path, DEFAULT_RELOAD_INTERVAL);
    }
}
