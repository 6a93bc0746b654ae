package io.sandgate.secrets;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.sandgate.core.Secret;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.representer.Representer;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * The default source: a local YAML file of {@code name: value} pairs, such as a Kubernetes secret
 * mounted with {@code defaultMode: 0600}.
 *
 * <p>The file is checked when the source is created: it must exist, be a YAML map of scalars, and,
 * on POSIX file systems, be neither readable nor writable by group or others. After that, at most
 * once per {@link FileSecretSettings#reloadInterval()}, a {@code get} looks at the file's
 * modification time, size and identity and re-reads it when one changed, so a rotated value is
 * used without a restart. A re-read that fails (the file is being replaced, or is broken) keeps
 * the values read last and logs a warning; a restart with a broken file fails.
 *
 * <p>No value ever appears in an exception or a log line: YAML syntax errors are reported by
 * line and column only, because the parser's own message quotes the offending text.
 */
public final class FileSecretSource implements SecretSource
{
    private static final Logger LOG = LoggerFactory.getLogger(FileSecretSource.class);

    private static final Set<PosixFilePermission> GROUP_OR_OTHERS_READ_WRITE = EnumSet.of(
        PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
        PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE);

    /** What the file looked like when it was read; a change in any part means "read it again". */
    private record Stamp(Instant modified, long size, Object fileKey)
    {
    }

    private record Snapshot(Stamp stamp, Map<String, Secret> secrets)
    {
    }

    private final FileSecretSettings settings;
    private final Clock clock;
    private volatile Snapshot snapshot;
    private volatile Instant lastCheck;
    private boolean reloadFailing;

    public FileSecretSource(FileSecretSettings settings, Clock clock)
    {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.snapshot = load(settings.path());
        this.lastCheck = clock.instant();
    }

    public FileSecretSource(FileSecretSettings settings)
    {
        this(settings, Clock.systemUTC());
    }

    @Override
    public Secret get(String name)
    {
        Objects.requireNonNull(name, "name");
        Secret secret = current().secrets().get(name);
        if (secret == null)
            throw new SecretUnavailableException(SecretUnavailableException.Reason.UNKNOWN,
                "secret '" + name + "' not found in " + settings.path());
        return secret;
    }

    @Override
    public String kind()
    {
        return "file";
    }

    private Snapshot current()
    {
        Instant now = clock.instant();
        if (now.isBefore(lastCheck.plus(settings.reloadInterval())))
            return snapshot;
        synchronized (this)
        {
            if (now.isBefore(lastCheck.plus(settings.reloadInterval())))
                return snapshot;
            lastCheck = now;
            reloadIfChanged();
            return snapshot;
        }
    }

    private void reloadIfChanged()
    {
        Path path = settings.path();
        try
        {
            if (stamp(path).equals(snapshot.stamp()))
                return;
            snapshot = load(path);
            if (reloadFailing)
                LOG.info("secrets file {} read again after earlier failures", path);
            else
                LOG.info("secrets file {} changed; {} secrets read", path, snapshot.secrets().size());
            reloadFailing = false;
        }
        catch (RuntimeException x)
        {
            // Keep serving what we had: a rotation that replaces the file is briefly "missing".
            if (!reloadFailing)
                LOG.warn("secrets file {} cannot be read again, keeping the values read last: {}", path, x.getMessage());
            reloadFailing = true;
        }
    }

    private static Snapshot load(Path path)
    {
        Stamp stamp = stamp(path);
        checkPermissions(path);
        return new Snapshot(stamp, parse(path));
    }

    private static Stamp stamp(Path path)
    {
        try
        {
            BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
            if (!attributes.isRegularFile())
                throw new IllegalArgumentException("secrets file " + path + " is not a regular file");
            return new Stamp(attributes.lastModifiedTime().toInstant(), attributes.size(), attributes.fileKey());
        }
        catch (NoSuchFileException x)
        {
            throw new IllegalArgumentException("secrets file " + path + " does not exist", x);
        }
        catch (IOException x)
        {
            throw new UncheckedIOException("cannot read the attributes of secrets file " + path, x);
        }
    }

    /** Refuses a file that other users of the machine could read or change. */
    static void checkPermissions(Path path)
    {
        if (!path.getFileSystem().supportedFileAttributeViews().contains("posix"))
            return;
        Set<PosixFilePermission> permissions;
        try
        {
            permissions = Files.getPosixFilePermissions(path);
        }
        catch (IOException x)
        {
            throw new UncheckedIOException("cannot read the permissions of secrets file " + path, x);
        }
        Set<PosixFilePermission> tooOpen = EnumSet.noneOf(PosixFilePermission.class);
        tooOpen.addAll(permissions);
        tooOpen.retainAll(GROUP_OR_OTHERS_READ_WRITE);
        if (!tooOpen.isEmpty())
            throw new IllegalStateException("secrets file " + path + " has mode " + octal(permissions)
                + " (" + PosixFilePermissions.toString(permissions) + "): it must not be readable or writable"
                + " by group or others; run chmod 600 " + path);
    }

    static String octal(Set<PosixFilePermission> permissions)
    {
        int mode = 0;
        for (PosixFilePermission p : permissions)
            mode |= 1 << (8 - p.ordinal());
        return String.format("0%o", mode);
    }

    /**
     * YAML that reads every plain scalar as a string: a token like {@code 0123} or {@code 1e5}
     * must stay what was written, not become a number.
     */
    private static Yaml stringsOnlyYaml(LoaderOptions options)
    {
        DumperOptions dumperOptions = new DumperOptions();
        Resolver noImplicitTypes = new Resolver()
        {
            @Override
            protected void addImplicitResolvers()
            {
            }
        };
        return new Yaml(new SafeConstructor(options), new Representer(dumperOptions), dumperOptions, options, noImplicitTypes);
    }

    private static Map<String, Secret> parse(Path path)
    {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        Object document;
        try (Reader reader = Files.newBufferedReader(path, StandardCharsets.UTF_8))
        {
            document = stringsOnlyYaml(options).load(reader);
        }
        catch (MarkedYAMLException x)
        {
            // Not x.getMessage(): it quotes the offending line, which may hold a value.
            Mark mark = x.getProblemMark();
            String where = mark == null ? "" : " at line " + (mark.getLine() + 1) + ", column " + (mark.getColumn() + 1);
            throw new IllegalArgumentException("secrets file " + path + " is not valid YAML" + where);
        }
        catch (YAMLException x)
        {
            throw new IllegalArgumentException("secrets file " + path + " is not valid YAML");
        }
        catch (IOException x)
        {
            throw new UncheckedIOException("cannot read secrets file " + path, x);
        }
        if (document == null)
            return Map.of();
        if (!(document instanceof Map<?, ?> map))
            throw new IllegalArgumentException("secrets file " + path + " must be a YAML map of name: value");
        Map<String, Secret> secrets = new HashMap<>();
        for (Map.Entry<?, ?> entry : map.entrySet())
        {
            String name = String.valueOf(entry.getKey());
            Object value = entry.getValue();
            if (value instanceof Map || value instanceof Iterable)
                throw new IllegalArgumentException("secrets file " + path + ": secret '" + name
                    + "' must be a single value, not a map or a list");
            if (value == null || value.toString().isEmpty())
                throw new IllegalArgumentException("secrets file " + path + ": secret '" + name + "' has no value");
            secrets.put(name, new Secret(value.toString()));
        }
        return Map.copyOf(secrets);
    }
}
