package io.sandgate.secrets;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.jopenlibs.vault.Vault;
import io.github.jopenlibs.vault.VaultException;
import io.github.jopenlibs.vault.response.AuthResponse;
import io.github.jopenlibs.vault.response.LookupResponse;
import io.sandgate.config.VaultAuth;
import io.sandgate.core.Schedulers;
import io.sandgate.core.Secret;
import io.sandgate.secrets.SecretUnavailableException.Reason;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Vault token and its lifecycle. The client does not renew tokens by itself: this session
 * learns the lease from the login (or, for a given token, from {@code lookup-self}) and renews it
 * at two thirds of its duration. When renewal fails, the token is not renewable, or Vault shortens
 * the lease because the token nears its max TTL, an AppRole or Kubernetes session logs in again;
 * readers that meet a 403 ask for one new login with {@link #relogin(Login)}.
 *
 * <p>Renewals and logins wait on the shared timer and run on the shared workers, since each is a
 * blocking call to Vault.
 */
final class VaultSession implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(VaultSession.class);

    /** Renew when this share of the lease has passed, leaving a third for retries. */
    private static final double RENEW_AT = 2.0 / 3.0;
    private static final Duration MIN_RETRY = Duration.ofSeconds(1);
    private static final Duration MAX_RETRY = Duration.ofSeconds(30);

    /** A client bound to a token, and that token's lease; replaced whole on every login and renewal. */
    record Login(Vault client, Duration lease, boolean renewable)
    {
    }

    private final VaultAuth auth;
    private final VaultConnection connection;
    private final Clock clock;
    private final Schedulers schedulers;
    private final AtomicLong logins = new AtomicLong();
    private final AtomicLong renewals = new AtomicLong();
    private final Object lock = new Object();

    private volatile Login current;
    private volatile Instant lastLogin;
    /** The next renewal or login; under lock. */
    private ScheduledFuture<?> tokenTask;
    private volatile boolean closed;

    VaultSession(VaultAuth auth, VaultConnection connection, Clock clock, Schedulers schedulers)
    {
        this.auth = auth;
        this.connection = connection;
        this.clock = clock;
        this.schedulers = schedulers;
    }

    /** The current login; the first call logs in, or looks the given token up. */
    Login current()
    {
        Login login = current;
        if (login != null)
            return login;
        synchronized (lock)
        {
            if (current == null)
                current = authenticate();
            return current;
        }
    }

    /** Logs in again unless another thread already replaced {@code stale}. */
    Login relogin(Login stale)
    {
        synchronized (lock)
        {
            if (current != stale && current != null)
                return current;
            current = authenticate();
            return current;
        }
    }

    /** Whether a new token can be had by logging in again (a given token cannot be replaced). */
    boolean canLogIn()
    {
        return auth.canLogIn();
    }

    /** Logins done so far (the start included). */
    long logins()
    {
        return logins.get();
    }

    /** Successful token renewals so far. */
    long renewals()
    {
        return renewals.get();
    }

    /** When the current token was had by login, or null before the first one. */
    Instant lastLogin()
    {
        return lastLogin;
    }

    @Override
    public void close()
    {
        synchronized (lock)
        {
            closed = true;
            if (tokenTask != null)
                tokenTask.cancel(false);
        }
    }

    // ------------------------------------------------------------------------------------ login

    /** A new login, and the renewal or re-login scheduled from its lease. Under lock. */
    private Login authenticate()
    {
        Login fresh = switch (auth.method())
        {
            case TOKEN -> lookupGivenToken((VaultAuth.Token) auth);
            case APPROLE -> loginAppRole((VaultAuth.AppRole) auth);
            case KUBERNETES -> loginKubernetes((VaultAuth.Kubernetes) auth);
        };
        scheduleTokenTask(fresh);
        return fresh;
    }

    private Login lookupGivenToken(VaultAuth.Token given)
    {
        Vault vault = connection.client(given.token());
        try
        {
            LookupResponse lookup = vault.auth().lookupSelf();
            Duration ttl = Duration.ofSeconds(lookup.getTTL());
            if (!lookup.isRenewable() && !ttl.isZero())
                LOG.warn("vault source: the given token is not renewable and expires in {}", HumanDuration.of(ttl));
            return new Login(vault, ttl, lookup.isRenewable());
        }
        catch (VaultException x)
        {
            if (x.getHttpStatusCode() == 403)
                throw new SecretUnavailableException(Reason.SOURCE_DOWN,
                    "vault rejected the given token (lookup-self: permission denied)");
            throw connection.unavailable(x, "token lookup");
        }
    }

    private Login loginAppRole(VaultAuth.AppRole appRole)
    {
        try
        {
            AuthResponse response = connection.client(null).auth()
                .loginByAppRole(appRole.mount(), appRole.roleId().reveal(), appRole.secretId().reveal());
            return loggedIn(response, "approle");
        }
        catch (VaultException x)
        {
            throw loginFailed(x, "approle", appRole.mount());
        }
    }

    private Login loginKubernetes(VaultAuth.Kubernetes kubernetes)
    {
        String jwt;
        try
        {
            jwt = Files.readString(kubernetes.jwtPath(), StandardCharsets.UTF_8).trim();
        }
        catch (IOException x)
        {
            throw new SecretUnavailableException(Reason.SOURCE_DOWN,
                "cannot read the service-account token " + kubernetes.jwtPath() + " for the vault kubernetes login ("
                    + x.getClass().getSimpleName() + ")");
        }
        try
        {
            AuthResponse response = connection.client(null).auth().loginByKubernetes(kubernetes.role(), jwt, "auth/" + kubernetes.mount());
            return loggedIn(response, "kubernetes");
        }
        catch (VaultException x)
        {
            throw loginFailed(x, "kubernetes", kubernetes.mount());
        }
    }

    private Login loggedIn(AuthResponse response, String method)
    {
        String token = response.getAuthClientToken();
        if (token == null || token.isEmpty())
            throw new SecretUnavailableException(Reason.SOURCE_DOWN, "vault " + method + " login returned no token");
        logins.incrementAndGet();
        lastLogin = clock.instant();
        Duration lease = Duration.ofSeconds(response.getAuthLeaseDuration());
        LOG.info("vault source: logged in with {}, token lease {}{}", method, HumanDuration.of(lease),
            response.isAuthRenewable() ? ", renewable" : "");
        return new Login(connection.client(new Secret(token)), lease, response.isAuthRenewable());
    }

    private SecretUnavailableException loginFailed(VaultException x, String method, String mount)
    {
        int status = x.getHttpStatusCode();
        if (status >= 400 && status < 500)
            return new SecretUnavailableException(Reason.SOURCE_DOWN,
                "vault refused the " + method + " login at auth/" + mount + " (HTTP " + status + ")");
        return connection.unavailable(x, method + " login");
    }

    // ------------------------------------------------------------------------------------ renewal

    /** Under lock. */
    private void scheduleTokenTask(Login login)
    {
        if (tokenTask != null)
            tokenTask.cancel(false);
        tokenTask = null;
        if (login.lease().isZero())
            return; // a root or otherwise non-expiring token
        if (!login.renewable() && !auth.canLogIn())
            return; // nothing can be done; reads will report the 403 once it expires
        Duration delay = Duration.ofMillis((long) (login.lease().toMillis() * RENEW_AT));
        schedule(login.renewable() ? () -> renew(login) : () -> reloginScheduled(login), delay);
    }

    private void renew(Login login)
    {
        if (current != login)
            return;
        try
        {
            AuthResponse response = login.client().auth().renewSelf();
            Duration lease = Duration.ofSeconds(response.getAuthLeaseDuration());
            renewals.incrementAndGet();
            if (lease.isZero() && auth.canLogIn())
            {
                // Renewed right up to the max TTL: nothing left to renew into.
                reloginScheduled(login);
                return;
            }
            // Vault caps the lease at what is left of the max TTL; a shrinking lease means the end is near.
            boolean nearMaxTtl = lease.compareTo(login.lease().dividedBy(2)) < 0;
            Login renewed = new Login(login.client(), lease, response.isAuthRenewable() && !nearMaxTtl);
            synchronized (lock)
            {
                if (current != login)
                    return;
                current = renewed;
                scheduleTokenTask(renewed);
            }
            LOG.debug("vault source: token renewed, lease {}", HumanDuration.of(lease));
        }
        catch (VaultException x)
        {
            int status = x.getHttpStatusCode();
            LOG.warn("vault source: token renewal failed (HTTP {})", status);
            if (status >= 400 && status < 500 && auth.canLogIn())
                reloginScheduled(login);
            else if (status >= 400 && status < 500)
                // A given token that Vault refuses to renew will not get better by asking again.
                LOG.warn("vault source: the given token can no longer be renewed; reads fail once it expires");
            else
                retryLater(() -> renew(login), login.lease());
        }
    }

    private void reloginScheduled(Login login)
    {
        try
        {
            relogin(login);
        }
        catch (SecretUnavailableException x)
        {
            LOG.warn("vault source: login failed, will retry: {}", x.getMessage());
            retryLater(() -> reloginScheduled(login), login.lease());
        }
    }

    private void retryLater(Runnable task, Duration lease)
    {
        Duration delay = lease.dividedBy(10);
        if (delay.compareTo(MIN_RETRY) < 0)
            delay = MIN_RETRY;
        if (delay.compareTo(MAX_RETRY) > 0)
            delay = MAX_RETRY;
        synchronized (lock)
        {
            schedule(task, delay);
        }
    }

    /** Runs a blocking Vault call on a worker once the delay has passed on the timer. Under lock. */
    private void schedule(Runnable task, Duration delay)
    {
        if (closed)
            return;
        try
        {
            tokenTask = schedulers.timer().schedule(() -> onWorker(task), delay.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (RejectedExecutionException x)
        {
            // The gateway is stopping.
        }
    }

    private void onWorker(Runnable task)
    {
        try
        {
            schedulers.workers().execute(() ->
            {
                if (closed)
                    return;
                try
                {
                    task.run();
                }
                catch (RuntimeException x)
                {
                    LOG.warn("vault source: token renewal or login failed: {}", x.getClass().getSimpleName());
                }
            });
        }
        catch (RejectedExecutionException x)
        {
            // The gateway is stopping.
        }
    }
}
