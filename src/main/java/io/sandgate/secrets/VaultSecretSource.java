package io.sandgate.secrets;

import java.time.Clock;
import java.time.Instant;
import java.util.Objects;

import io.sandgate.config.VaultSettings;
import io.sandgate.core.Schedulers;
import io.sandgate.core.Secret;
import io.sandgate.secrets.SecretUnavailableException.Reason;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Secrets from HashiCorp Vault's KV v2 engine, through the jopenlibs Vault client. Three parts,
 * each with one job:
 * <ul>
 * <li>{@link VaultSession} keeps a token valid: login, renewal at two thirds of the lease, a new
 * login when renewal fails or the max TTL nears;</li>
 * <li>{@link VaultKvSource} reads KV v2 entries with that token, logging in once more on a 403;</li>
 * <li>{@link CachingSecretSource} keeps Vault off the request path: values are refreshed in the
 * background after {@link VaultSettings#refreshInterval()} and served while Vault cannot answer
 * for up to {@link VaultSettings#cacheMaxAge()}.</li>
 * </ul>
 *
 * <p>No token or value ever appears in a message or a log line; messages name the secret, the
 * KV path and the reason.
 */
public final class VaultSecretSource implements SecretSource
{
    private static final Logger LOG = LoggerFactory.getLogger(VaultSecretSource.class);

    private final VaultSession session;
    private final VaultKvSource kv;
    private final CachingSecretSource cache;

    /**
     * Creates the source and tries to authenticate once. A Vault that is down at start is not
     * fatal: the first {@code get} tries again, and answers {@link Reason#SOURCE_DOWN} until then.
     *
     * @param schedulers renewals wait on its timer; Vault calls run on its workers
     */
    public VaultSecretSource(VaultSettings settings, Clock clock, Schedulers schedulers)
    {
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(clock, "clock");
        VaultConnection connection = new VaultConnection(settings, schedulers.workers());
        this.session = new VaultSession(settings.auth(), connection, clock, schedulers);
        this.kv = new VaultKvSource(settings, session, connection);
        this.cache = new CachingSecretSource(kv, settings.refreshInterval(), settings.cacheMaxAge(), clock, schedulers.workers());
        try
        {
            session.current();
        }
        catch (SecretUnavailableException x)
        {
            LOG.warn("vault source: no token yet, will try again on first use: {}", x.getMessage());
        }
    }

    @Override
    public Secret get(String name)
    {
        return cache.get(name);
    }

    @Override
    public String kind()
    {
        return kv.kind();
    }

    /** Logins done so far (the start included), for tests and metrics. */
    public long logins()
    {
        return session.logins();
    }

    /** Successful token renewals so far. */
    public long renewals()
    {
        return session.renewals();
    }

    /** KV reads sent to Vault so far, failed ones included. */
    public long reads()
    {
        return kv.reads();
    }

    /** When the current token was had by login, or null before the first one. */
    public Instant lastLogin()
    {
        return session.lastLogin();
    }

    @Override
    public void close()
    {
        cache.close();
        session.close();
    }
}
