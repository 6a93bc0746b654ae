package io.sandgate.config;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code vault} secret source ({@code egress.secrets.vault.*}): the one place where Vault's
 * settings and their defaults are written. The configuration keys take their defaults from the
 * constants here; {@link #builder(String, VaultAuth)} starts from the same ones.
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
        address = httpUrl(address);
        Objects.requireNonNull(namespace, "namespace");
        namespace = namespace.map(String::trim).filter(n -> !n.isEmpty());
        Objects.requireNonNull(auth, "auth");
        kvMount = trimSlashes(kvMount, ConfigKeys.VAULT_MOUNT.name());
        Objects.requireNonNull(pathPrefix, "pathPrefix");
        pathPrefix = pathPrefix.replaceAll("^/+|/+$", "");
        Objects.requireNonNull(defaultField, "defaultField");
        if (defaultField.isBlank())
            throw new IllegalArgumentException("defaultField: empty (expected: a KV field name)");
        StoreConfig.positive(ConfigKeys.VAULT_REFRESH, refreshInterval);
        StoreConfig.positive(ConfigKeys.VAULT_MAX_AGE, cacheMaxAge);
        StoreConfig.positive("openTimeout", openTimeout);
        StoreConfig.positive("readTimeout", readTimeout);
    }

    /** Settings at their defaults but for the two values that have none. */
    public static Builder builder(String address, VaultAuth auth)
    {
        return new Builder(address, auth);
    }

    /** Every value at its default. */
    public static VaultSettings of(String address, VaultAuth auth)
    {
        return builder(address, auth).build();
    }

    /** A builder holding these settings, to change some of them. */
    public Builder toBuilder()
    {
        return builder(address, auth)
            .namespace(namespace.orElse(null))
            .kvMount(kvMount)
            .pathPrefix(pathPrefix)
            .defaultField(defaultField)
            .refreshInterval(refreshInterval)
            .cacheMaxAge(cacheMaxAge)
            .timeouts(openTimeout, readTimeout);
    }

    public VaultSettings withNamespace(String namespace)
    {
        return toBuilder().namespace(namespace).build();
    }

    public VaultSettings withPathPrefix(String pathPrefix)
    {
        return toBuilder().pathPrefix(pathPrefix).build();
    }

    public VaultSettings withRefreshInterval(Duration refreshInterval)
    {
        return toBuilder().refreshInterval(refreshInterval).build();
    }

    public VaultSettings withCacheMaxAge(Duration cacheMaxAge)
    {
        return toBuilder().cacheMaxAge(cacheMaxAge).build();
    }

    public VaultSettings withTimeouts(Duration openTimeout, Duration readTimeout)
    {
        return toBuilder().timeouts(openTimeout, readTimeout).build();
    }

    /** Names each value; the record checks them all when it is built. */
    public static final class Builder
    {
        private final String address;
        private final VaultAuth auth;
        private Optional<String> namespace = Optional.empty();
        private String kvMount = DEFAULT_KV_MOUNT;
        private String pathPrefix = DEFAULT_PATH_PREFIX;
        private String defaultField = DEFAULT_FIELD;
        private Duration refreshInterval = DEFAULT_REFRESH_INTERVAL;
        private Duration cacheMaxAge = DEFAULT_CACHE_MAX_AGE;
        private Duration openTimeout = DEFAULT_OPEN_TIMEOUT;
        private Duration readTimeout = DEFAULT_READ_TIMEOUT;

        private Builder(String address, VaultAuth auth)
        {
            this.address = address;
            this.auth = auth;
        }

        /** @param namespace null or blank for none */
        public Builder namespace(String namespace)
        {
            this.namespace = Optional.ofNullable(namespace);
            return this;
        }

        public Builder kvMount(String kvMount)
        {
            this.kvMount = kvMount;
            return this;
        }

        public Builder pathPrefix(String pathPrefix)
        {
            this.pathPrefix = pathPrefix;
            return this;
        }

        public Builder defaultField(String defaultField)
        {
            this.defaultField = defaultField;
            return this;
        }

        public Builder refreshInterval(Duration refreshInterval)
        {
            this.refreshInterval = refreshInterval;
            return this;
        }

        public Builder cacheMaxAge(Duration cacheMaxAge)
        {
            this.cacheMaxAge = cacheMaxAge;
            return this;
        }

        public Builder timeouts(Duration openTimeout, Duration readTimeout)
        {
            this.openTimeout = openTimeout;
            this.readTimeout = readTimeout;
            return this;
        }

        public VaultSettings build()
        {
            return new VaultSettings(address, namespace, auth, kvMount, pathPrefix, defaultField, refreshInterval, cacheMaxAge,
                openTimeout, readTimeout);
        }
    }

    private static String httpUrl(String address)
    {
        Objects.requireNonNull(address, ConfigKeys.VAULT_ADDRESS.name());
        String expected = ConfigKeys.VAULT_ADDRESS.name() + ": " + address + " (expected: http(s)://host:port)";
        URI uri;
        try
        {
            uri = URI.create(address.trim());
        }
        catch (IllegalArgumentException x)
        {
            throw new IllegalArgumentException(expected);
        }
        if (uri.getHost() == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())))
            throw new IllegalArgumentException(expected);
        return address.trim().replaceAll("/+$", "");
    }

    static String trimSlashes(String value, String what)
    {
        Objects.requireNonNull(value, what);
        String trimmed = value.replaceAll("^/+|/+$", "");
        if (trimmed.isEmpty())
            throw new IllegalArgumentException(what + ": '" + value + "' (expected: a mount path)");
        return trimmed;
    }
}
