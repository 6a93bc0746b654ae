package io.sandgate.secrets;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

import io.github.jopenlibs.vault.VaultException;
import io.github.jopenlibs.vault.response.LogicalResponse;
import io.sandgate.config.VaultSettings;
import io.sandgate.core.Secret;
import io.sandgate.secrets.SecretUnavailableException.Reason;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads of Vault's KV v2 engine, uncached: every {@code get} is one read with the session's
 * current token. A read refused with 403 (the token was revoked or expired early) triggers one new
 * login and one retry.
 */
final class VaultKvSource implements SecretSource
{
    private static final Logger LOG = LoggerFactory.getLogger(VaultKvSource.class);

    private final VaultSettings settings;
    private final VaultSession session;
    private final VaultConnection connection;
    private final AtomicLong reads = new AtomicLong();

    VaultKvSource(VaultSettings settings, VaultSession session, VaultConnection connection)
    {
        this.settings = settings;
        this.session = session;
        this.connection = connection;
    }

    @Override
    public Secret get(String name)
    {
        Objects.requireNonNull(name, "name");
        VaultLocation location = VaultLocation.of(settings, name);
        VaultSession.Login login = session.current();
        try
        {
            return read(login, name, location);
        }
        catch (PermissionDenied x)
        {
            if (!session.canLogIn())
                throw x.unavailable();
            LOG.info("vault source: read of {} denied, logging in again once", location.apiPath());
            VaultSession.Login fresh = session.relogin(login);
            try
            {
                return read(fresh, name, location);
            }
            catch (PermissionDenied again)
            {
                throw again.unavailable();
            }
        }
    }

    @Override
    public String kind()
    {
        return "vault";
    }

    /** Reads sent to Vault so far, failed ones included. */
    long reads()
    {
        return reads.get();
    }

    private Secret read(VaultSession.Login login, String name, VaultLocation location)
    {
        reads.incrementAndGet();
        LogicalResponse response;
        try
        {
            response = login.client().logical().read(location.logicalPath());
        }
        catch (VaultException x)
        {
            throw connection.unavailable(x, "read of " + location.apiPath());
        }
        int status = response.getRestResponse().getStatus();
        if (status == 403)
            throw new PermissionDenied(location.apiPath());
        if (status == 404)
            throw new SecretUnavailableException(Reason.UNKNOWN,
                "secret '" + name + "' not found: no KV entry at " + location.apiPath());
        if (status != 200)
            throw new SecretUnavailableException(Reason.SOURCE_DOWN,
                "vault answered HTTP " + status + " to the read of " + location.apiPath());
        String value = response.getData().get(location.field());
        if (value == null || value.isEmpty())
            throw new SecretUnavailableException(Reason.UNKNOWN,
                "secret '" + name + "' not found: no field '" + location.field() + "' at " + location.apiPath());
        return new Secret(value);
    }

    /** A 403, kept inside this class so that a new login can be tried before giving up. */
    private static final class PermissionDenied extends RuntimeException
    {
        private final String apiPath;

        PermissionDenied(String apiPath)
        {
            super(null, null, false, false);
            this.apiPath = apiPath;
        }

        SecretUnavailableException unavailable()
        {
            return new SecretUnavailableException(Reason.SOURCE_DOWN,
                "vault denied access to " + apiPath + " (permission denied)");
        }
    }
}
