package io.sandgate.secrets;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Settings of the {@link VaultSecretSource}. Start from {@link #of(String, VaultAuth)}, which
 * fills in every default, and change single values with the {@code with...} methods.
 *
 * @param address         Vault's base URL, such as {@code https://vault.internal:8200}
 * @param namespace       Vault Enterprise namespace, sent as {@code X-Vault-Namespace}; empty for none
 * @param auth            how a token is had
 * @param kvMount         where the KV v2 engine is mounted (default {@code secret})
 * @param pathPrefix      secret {@code name} lives at {@code {kvMount}/{pathPrefix}/{name}} (default {@code sandgate})
 * @param defaultField    the field of that KV entry that holds the value (default {@code value})
 * @param refreshInterval how long a read value is used before it is read again (default 5 min)
 * @param cacheMaxAge     how long a value read last may still be used while Vault cannot answer
 *                        (default 1 h); after that the secret is unavailable
 * @param openTimeout     TCP connect timeout (default 5 s)
 * @param readTimeout     time for a whole response (default 5 s); Vault's client counts in whole seconds
 */
public record VaultSettings(
    String address,
    Optional<String> namespace,
    VaultAuth auth,
    String kvMount,
    String pathPrefix,
    String defaultField,
    Duration refreshInterval,
    Duration cacheMaxAge,
    Duration openTimeout,
    Duration readTimeout)
{
    public static final String DEFAULT_KV_MOUNT = "secret";
    public static final String DEFAULT_PATH_PREFIX = "sandgate";
    public static final String DEFAULT_FIELD = "value";
    public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofMinutes(5);
    public static final Duration DEFAULT_CACHE_MAX_AGE = Duration.ofHours(1);
    public static final Duration DEFAULT_OPEN_TIMEOUT = Duration.ofSeconds(5);
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(5);

    public VaultSettings
    {
        Objects.requireNonNull(address, "address");
        URI uri = URI.create(address.trim());
        if (uri.getHost() == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())))
            throw new IllegalArgumentException("address: " + address + " (expected: http(s)://host:port)");
        address = address.trim().replaceAll("/+$", "");
        Objects.requireNonNull(namespace, "namespace");
        namespace = namespace.map(String::trim).filter(n -> !n.isEmpty());
        Objects.requireNonNull(auth, "auth");
        kvMount = trimSlashes(kvMount, "kvMount");
        Objects.requireNonNull(pathPrefix, "pathPrefix");
        pathPrefix = pathPrefix.replaceAll("^/+|/+$", "");
        Objects.requireNonNull(defaultField, "defaultField");
        if (defaultField.isBlank())
            throw new IllegalArgumentException("defaultField: empty (expected: a KV field name)");
        positive(refreshInterval, "refreshInterval");
        positive(cacheMaxAge, "cacheMaxAge");
        positive(openTimeout, "openTimeout");
        positive(readTimeout, "readTimeout");
    }

    /** Every value at its default. */
    public static VaultSettings of(String address, VaultAuth auth)
    {
        return new VaultSettings(address, Optional.empty(), auth, DEFAULT_KV_MOUNT, DEFAULT_PATH_PREFIX,
            DEFAULT_FIELD, DEFAULT_REFRESH_INTERVAL, DEFAULT_CACHE_MAX_AGE, DEFAULT_OPEN_TIMEOUT, DEFAULT_READ_TIMEOUT);
    }

    public VaultSettings withNamespace(String namespace)
    {
        return new VaultSettings(address, Optional.ofNullable(namespace), auth, kvMount, pathPrefix, defaultField,
            refreshInterval, cacheMaxAge, openTimeout, readTimeout);
    }

    public VaultSettings withAuth(VaultAuth auth)
    {
        return new VaultSettings(address, namespace, auth, kvMount, pathPrefix, defaultField,
            refreshInterval, cacheMaxAge, openTimeout, readTimeout);
    }

    public VaultSettings withKvMount(String kvMount)
    {
        return new VaultSettings(address, namespace, auth, kvMount, pathPrefix, defaultField,
            refreshInterval, cacheMaxAge, openTimeout, readTimeout);
    }

    public VaultSettings withPathPrefix(String pathPrefix)
    {
        return new VaultSettings(address, namespace, auth, kvMount, pathPrefix, defaultField,
            refreshInterval, cacheMaxAge, openTimeout, readTimeout);
    }

    public VaultSettings withDefaultField(String defaultField)
    {
        return new VaultSettings(address, namespace, auth, kvMount, pathPrefix, defaultField,
            refreshInterval, cacheMaxAge, openTimeout, readTimeout);
    }

    public VaultSettings withRefreshInterval(Duration refreshInterval)
    {
        return new VaultSettings(address, namespace, auth, kvMount, pathPrefix, defaultField,
            refreshInterval, cacheMaxAge, openTimeout, readTimeout);
    }

    public VaultSettings withCacheMaxAge(Duration cacheMaxAge)
    {
        return new VaultSettings(address, namespace, auth, kvMount, pathPrefix, defaultField,
            refreshInterval, cacheMaxAge, openTimeout, readTimeout);
    }

    public VaultSettings withTimeouts(Duration openTimeout, Duration readTimeout)
    {
        return new VaultSettings(address, namespace, auth, kvMount, pathPrefix, defaultField,
            refreshInterval, cacheMaxAge, openTimeout, readTimeout);
    }

    /**
     * Where a secret name points: {@code name} is field {@link #defaultField()} of
     * {@code {pathPrefix}/{name}}; {@code some/path#field} is that field of that path, without the
     * prefix. Both are under {@link #kvMount()}.
     */
    public VaultLocation locate(String name)
    {
        Objects.requireNonNull(name, "name");
        int hash = name.lastIndexOf('#');
        String path;
        String field;
        if (hash >= 0)
        {
            path = name.substring(0, hash);
            field = name.substring(hash + 1);
        }
        else
        {
            path = pathPrefix.isEmpty() ? name : pathPrefix + "/" + name;
            field = defaultField;
        }
        path = path.replaceAll("^/+|/+$", "");
        if (path.isEmpty() || field.isEmpty() || path.contains("..") || path.contains("?"))
            throw new IllegalArgumentException("secret name '" + name + "' (expected: name or some/path#field)");
        return new VaultLocation(kvMount, path, field);
    }

    /** A field of a KV v2 entry: {@code GET /v1/{mount}/data/{path}}, then {@code data.data.{field}}. */
    public record VaultLocation(String mount, String path, String field)
    {
        /** {@code mount/path}, the form the Vault client and Vault's CLI take. */
        public String logicalPath()
        {
            return mount + "/" + path;
        }

        /** The HTTP API path of the read, for messages. */
        public String apiPath()
        {
            return mount + "/data/" + path;
        }
    }

    static String trimSlashes(String value, String what)
    {
        Objects.requireNonNull(value, what);
        String trimmed = value.replaceAll("^/+|/+$", "");
        if (trimmed.isEmpty())
            throw new IllegalArgumentException(what + ": '" + value + "' (expected: a mount path)");
        return trimmed;
    }

    private static void positive(Duration value, String what)
    {
        Objects.requireNonNull(value, what);
        if (value.isZero() || value.isNegative())
            throw new IllegalArgumentException(what + ": " + value + " (expected: > 0)");
    }
}
