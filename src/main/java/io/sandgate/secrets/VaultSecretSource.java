package io.sandgate.secrets;

import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.jopenlibs.vault.Vault;
import io.github.jopenlibs.vault.VaultConfig;
import io.github.jopenlibs.vault.VaultException;
import io.github.jopenlibs.vault.response.AuthResponse;
import io.github.jopenlibs.vault.response.LogicalResponse;
import io.github.jopenlibs.vault.response.LookupResponse;
import io.sandgate.core.Secret;
import io.sandgate.secrets.SecretUnavailableException.Reason;
import io.sandgate.secrets.VaultSettings.VaultLocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Secrets from HashiCorp Vault's KV v2 engine, through the jopenlibs Vault client.
 *
 * <p><b>Cache.</b> The first {@code get} of a name reads Vault while the caller waits. Once a
 * value is older than {@link VaultSettings#refreshInterval()}, {@code get} still answers with it
 * and reads Vault again in the background, so Vault's latency and outages stay off the request
 * path. While Vault cannot answer, the value read last is served until it is older than
 * {@link VaultSettings#cacheMaxAge()}; then the secret is {@link Reason#EXPIRED}. A name that was
 * never read cannot be served while Vault is down ({@link Reason#SOURCE_DOWN}).
 *
 * <p><b>Token.</b> The client does not renew tokens by itself. This source learns the lease from
 * the login (or, for a given token, from {@code lookup-self}) and renews it at two thirds of its
 * duration on a daemon thread. When renewal fails, the token is not renewable, or Vault shortens
 * the lease because the token nears its max TTL, an AppRole or Kubernetes source logs in again. A
 * read refused with 403 also triggers one new login and one retry.
 *
 * <p>No token or value ever appears in a message or a log line; messages name the secret, the
 * KV path and the reason.
 */
public final class VaultSecretSource implements SecretSource
{
    private static final Logger LOG = LoggerFactory.getLogger(VaultSecretSource.class);

    /** Renew when this share of the lease has passed, leaving a third for retries. */
    private static final double RENEW_AT = 2.0 / 3.0;
    private static final Duration MIN_RETRY = Duration.ofSeconds(1);
    private static final Duration MAX_RETRY = Duration.ofSeconds(30);

    /** A value and when Vault last gave it to us; {@code lastAttempt} paces background refreshes. */
    private record Entry(Secret value, Instant readAt, Instant lastAttempt)
    {
    }

    /** A token and a client bound to it; replaced whole on every login. */
    private record Session(Vault vault, Secret token, Instant obtainedAt, Duration lease, boolean renewable)
    {
    }

    private final VaultSettings settings;
    private final Clock clock;
    private final HttpClient httpClient;
    private final ScheduledExecutorService scheduler;
    private final Map<String, Entry> cache = new ConcurrentHashMap<>();
    private final Set<String> refreshing = ConcurrentHashMap.newKeySet();
    private final AtomicLong logins = new AtomicLong();
    private final AtomicLong renewals = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final Object sessionLock = new Object();

    private volatile Session session;
    private volatile Instant lastLogin;
    private ScheduledFuture<?> tokenTask;
    /** Start of the current outage (clock time), or null while Vault answers. */
    private volatile Instant outageSince;
    private volatile String lastFailure = "";
    private volatile boolean closed;

    /**
     * Creates the source and tries to authenticate once. A Vault that is down at start is not
     * fatal: the first {@code get} tries again, and answers {@link Reason#SOURCE_DOWN} until then.
     */
    public VaultSecretSource(VaultSettings settings, Clock clock)
    {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.httpClient = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(settings.openTimeout())
            .build();
        this.scheduler = Executors.newSingleThreadScheduledExecutor(task ->
        {
            Thread thread = new Thread(task, "sandgate-vault-secrets");
            thread.setDaemon(true);
            return thread;
        });
        try
        {
            ensureSession();
        }
        catch (SecretUnavailableException x)
        {
            LOG.warn("vault source: no token yet, will try again on first use: {}", x.getMessage());
        }
    }

    public VaultSecretSource(VaultSettings settings)
    {
        this(settings, Clock.systemUTC());
    }

    @Override
    public Secret get(String name)
    {
        Objects.requireNonNull(name, "name");
        if (closed)
            throw new IllegalStateException("vault secret source is closed");
        VaultLocation location = settings.locate(name);
        Instant now = clock.instant();
        Entry entry = cache.get(name);
        if (entry == null)
            return readAndCache(name, location, null);
        Duration age = Duration.between(entry.readAt(), now);
        if (age.compareTo(settings.cacheMaxAge()) > 0)
            return readAndCache(name, location, entry);
        if (age.compareTo(settings.refreshInterval()) >= 0
            && Duration.between(entry.lastAttempt(), now).compareTo(settings.refreshInterval()) >= 0)
            refreshInBackground(name, location);
        return entry.value();
    }

    @Override
    public String kind()
    {
        return "vault";
    }

    /** Logins done so far (the start included), for tests and metrics. */
    public long logins()
    {
        return logins.get();
    }

    /** Successful token renewals so far. */
    public long renewals()
    {
        return renewals.get();
    }

    /** KV reads sent to Vault so far, failed ones included. */
    public long reads()
    {
        return reads.get();
    }

    /** When the current token was had by login, or null before the first one. */
    public Instant lastLogin()
    {
        return lastLogin;
    }

    @Override
    public void close()
    {
        closed = true;
        scheduler.shutdownNow();
    }

    // ------------------------------------------------------------------------------------ reads

    private Secret readAndCache(String name, VaultLocation location, Entry cached)
    {
        Instant now = clock.instant();
        try
        {
            Secret value = readWithRelogin(name, location);
            cache.put(name, new Entry(value, now, now));
            recovered();
            return value;
        }
        catch (SecretUnavailableException x)
        {
            if (x.reason() == Reason.UNKNOWN)
            {
                // Deleted in Vault: stop serving the old value.
                cache.remove(name);
                throw x;
            }
            failed(x);
            if (cached == null)
                throw x;
            cache.put(name, new Entry(cached.value(), cached.readAt(), now));
            Duration age = Duration.between(cached.readAt(), now);
            if (age.compareTo(settings.cacheMaxAge()) <= 0)
                return cached.value();
            Instant since = outageSince == null ? cached.readAt() : outageSince;
            throw new SecretUnavailableException(Reason.EXPIRED, "secret '" + name + "' expired from cache: vault unreachable for "
                + human(Duration.between(since, now)) + " (value read " + human(age) + " ago, max age "
                + human(settings.cacheMaxAge()) + "); last error: " + x.getMessage());
        }
    }

    private void refreshInBackground(String name, VaultLocation location)
    {
        if (!refreshing.add(name))
            return;
        try
        {
            scheduler.execute(() ->
            {
                try
                {
                    Entry cached = cache.get(name);
                    readAndCache(name, location, cached);
                }
                catch (SecretUnavailableException x)
                {
                    // Logged by failed(); the caller keeps getting the cached value or the error.
                }
                catch (RuntimeException x)
                {
                    LOG.warn("vault source: refresh of secret '{}' failed: {}", name, x.getClass().getSimpleName());
                }
                finally
                {
                    refreshing.remove(name);
                }
            });
        }
        catch (RuntimeException x)
        {
            // Closed meanwhile.
            refreshing.remove(name);
        }
    }

    private Secret readWithRelogin(String name, VaultLocation location)
    {
        Session current = ensureSession();
        try
        {
            return read(current, name, location);
        }
        catch (PermissionDenied x)
        {
            if (!settings.auth().canLogIn())
                throw x.unavailable();
            LOG.info("vault source: read of {} denied, logging in again once", location.apiPath());
            Session fresh = relogin(current);
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

    /** Thrown inside this class for a 403, so that a new login can be tried before giving up. */
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

    private Secret read(Session current, String name, VaultLocation location)
    {
        reads.incrementAndGet();
        LogicalResponse response;
        try
        {
            response = current.vault().logical().read(location.logicalPath());
        }
        catch (VaultException x)
        {
            throw unavailable(x, "read of " + location.apiPath());
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

    /**
     * A safe description of a failed call: the client's own message quotes Vault's response body,
     * so it is read for the seal marker but never passed on.
     */
    private SecretUnavailableException unavailable(VaultException x, String what)
    {
        int status = x.getHttpStatusCode();
        String message = x.getMessage() == null ? "" : x.getMessage();
        if (status == 503 && message.contains("Vault is sealed"))
            return new SecretUnavailableException(Reason.SOURCE_DOWN, "vault is sealed (" + what + ")");
        if (status == 0)
        {
            Throwable cause = x.getCause();
            while (cause != null && cause.getCause() != null && cause.getCause() != cause)
                cause = cause.getCause();
            String why = cause == null ? "" : " (" + cause.getClass().getSimpleName() + ")";
            return new SecretUnavailableException(Reason.SOURCE_DOWN,
                "vault unreachable at " + settings.address() + why + " during " + what);
        }
        return new SecretUnavailableException(Reason.SOURCE_DOWN, "vault answered HTTP " + status + " to the " + what);
    }

    private void failed(SecretUnavailableException x)
    {
        lastFailure = x.getMessage();
        if (outageSince == null)
        {
            outageSince = clock.instant();
            LOG.warn("vault source: {}; serving cached values for up to {}", x.getMessage(), human(settings.cacheMaxAge()));
        }
    }

    private void recovered()
    {
        if (outageSince != null)
        {
            LOG.info("vault source: vault answers again after {}", human(Duration.between(outageSince, clock.instant())));
            outageSince = null;
        }
    }

    // ------------------------------------------------------------------------------------ token

    private Session ensureSession()
    {
        Session current = session;
        if (current != null)
            return current;
        synchronized (sessionLock)
        {
            if (session == null)
                session = authenticate();
            return session;
        }
    }

    /** Logs in again unless another thread already replaced {@code stale}. */
    private Session relogin(Session stale)
    {
        synchronized (sessionLock)
        {
            if (session != stale && session != null)
                return session;
            session = authenticate();
            return session;
        }
    }

    /** A new session, and the renewal or re-login scheduled from its lease. Under sessionLock. */
    private Session authenticate()
    {
        Session fresh = switch (settings.auth().method())
        {
            case TOKEN -> lookupGivenToken((VaultAuth.Token) settings.auth());
            case APPROLE -> loginAppRole((VaultAuth.AppRole) settings.auth());
            case KUBERNETES -> loginKubernetes((VaultAuth.Kubernetes) settings.auth());
        };
        scheduleTokenTask(fresh);
        return fresh;
    }

    private Session lookupGivenToken(VaultAuth.Token auth)
    {
        Vault vault = client(auth.token());
        try
        {
            LookupResponse lookup = vault.auth().lookupSelf();
            Duration ttl = Duration.ofSeconds(lookup.getTTL());
            if (!lookup.isRenewable() && !ttl.isZero())
                LOG.warn("vault source: the given token is not renewable and expires in {}", human(ttl));
            return new Session(vault, auth.token(), clock.instant(), ttl, lookup.isRenewable());
        }
        catch (VaultException x)
        {
            int status = x.getHttpStatusCode();
            if (status == 403)
                throw new SecretUnavailableException(Reason.SOURCE_DOWN,
                    "vault rejected the given token (lookup-self: permission denied)");
            throw unavailable(x, "token lookup");
        }
    }

    private Session loginAppRole(VaultAuth.AppRole auth)
    {
        try
        {
            AuthResponse response = client(null).auth()
                .loginByAppRole(auth.mount(), auth.roleId().reveal(), auth.secretId().reveal());
            return loggedIn(response, "approle");
        }
        catch (VaultException x)
        {
            throw loginFailed(x, "approle", auth.mount());
        }
    }

    private Session loginKubernetes(VaultAuth.Kubernetes auth)
    {
        String jwt;
        try
        {
            jwt = Files.readString(auth.jwtPath(), StandardCharsets.UTF_8).trim();
        }
        catch (IOException x)
        {
            throw new SecretUnavailableException(Reason.SOURCE_DOWN,
                "cannot read the service-account token " + auth.jwtPath() + " for the vault kubernetes login ("
                    + x.getClass().getSimpleName() + ")");
        }
        try
        {
            AuthResponse response = client(null).auth().loginByKubernetes(auth.role(), jwt, "auth/" + auth.mount());
            return loggedIn(response, "kubernetes");
        }
        catch (VaultException x)
        {
            throw loginFailed(x, "kubernetes", auth.mount());
        }
    }

    private Session loggedIn(AuthResponse response, String method)
    {
        String token = response.getAuthClientToken();
        if (token == null || token.isEmpty())
            throw new SecretUnavailableException(Reason.SOURCE_DOWN, "vault " + method + " login returned no token");
        Secret secret = new Secret(token);
        Instant now = clock.instant();
        logins.incrementAndGet();
        lastLogin = now;
        Duration lease = Duration.ofSeconds(response.getAuthLeaseDuration());
        LOG.info("vault source: logged in with {}, token lease {}{}", method, human(lease),
            response.isAuthRenewable() ? ", renewable" : "");
        return new Session(client(secret), secret, now, lease, response.isAuthRenewable());
    }

    private SecretUnavailableException loginFailed(VaultException x, String method, String mount)
    {
        int status = x.getHttpStatusCode();
        if (status >= 400 && status < 500)
            return new SecretUnavailableException(Reason.SOURCE_DOWN,
                "vault refused the " + method + " login at auth/" + mount + " (HTTP " + status + ")");
        return unavailable(x, method + " login");
    }

    private void scheduleTokenTask(Session current)
    {
        if (tokenTask != null)
            tokenTask.cancel(false);
        tokenTask = null;
        if (current.lease().isZero() || closed)
            return; // a root or otherwise non-expiring token
        Duration delay = Duration.ofMillis((long) (current.lease().toMillis() * RENEW_AT));
        Runnable task = current.renewable() ? () -> renew(current) : () -> reloginScheduled(current);
        if (!current.renewable() && !settings.auth().canLogIn())
            return; // nothing can be done; reads will report the 403 once it expires
        try
        {
            tokenTask = scheduler.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (RuntimeException x)
        {
            // Closed meanwhile.
        }
    }

    private void renew(Session current)
    {
        if (session != current)
            return;
        try
        {
            AuthResponse response = current.vault().auth().renewSelf();
            Duration lease = Duration.ofSeconds(response.getAuthLeaseDuration());
            renewals.incrementAndGet();
            if (lease.isZero() && settings.auth().canLogIn())
            {
                // Renewed right up to the max TTL: nothing left to renew into.
                reloginScheduled(current);
                return;
            }
            // Vault caps the lease at what is left of the max TTL; a shrinking lease means the end is near.
            boolean nearMaxTtl = lease.compareTo(current.lease().dividedBy(2)) < 0;
            Session renewed = new Session(current.vault(), current.token(), clock.instant(), lease,
                response.isAuthRenewable() && !nearMaxTtl);
            synchronized (sessionLock)
            {
                if (session != current)
                    return;
                session = renewed;
                scheduleTokenTask(renewed);
            }
            LOG.debug("vault source: token renewed, lease {}", human(lease));
        }
        catch (VaultException x)
        {
            int status = x.getHttpStatusCode();
            LOG.warn("vault source: token renewal failed (HTTP {})", status);
            if (status >= 400 && status < 500 && settings.auth().canLogIn())
                reloginScheduled(current);
            else if (status >= 400 && status < 500)
                // A given token that Vault refuses to renew will not get better by asking again.
                LOG.warn("vault source: the given token can no longer be renewed; reads fail once it expires");
            else
                retryLater(() -> renew(current), current.lease());
        }
    }

    private void reloginScheduled(Session current)
    {
        try
        {
            relogin(current);
        }
        catch (SecretUnavailableException x)
        {
            LOG.warn("vault source: login failed, will retry: {}", x.getMessage());
            retryLater(() -> reloginScheduled(current), current.lease());
        }
    }

    private void retryLater(Runnable task, Duration lease)
    {
        Duration delay = lease.dividedBy(10);
        if (delay.compareTo(MIN_RETRY) < 0)
            delay = MIN_RETRY;
        if (delay.compareTo(MAX_RETRY) > 0)
            delay = MAX_RETRY;
        synchronized (sessionLock)
        {
            if (closed)
                return;
            try
            {
                tokenTask = scheduler.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
            }
            catch (RuntimeException x)
            {
                // Closed meanwhile.
            }
        }
    }

    private Vault client(Secret token)
    {
        try
        {
            VaultConfig config = new VaultConfig()
                .address(settings.address())
                .httpClient(httpClient)
                .openTimeout(seconds(settings.openTimeout()))
                .readTimeout(seconds(settings.readTimeout()))
                .prefixPath(settings.kvMount())
                .engineVersion(2);
            if (token != null)
                config.token(token.reveal());
            if (settings.namespace().isPresent())
                config.nameSpace(settings.namespace().get());
            // The client reads VAULT_ADDR and VAULT_TOKEN when unset; this source takes only its settings.
            config.environmentLoader(new io.github.jopenlibs.vault.EnvironmentLoader()
            {
                @Override
                public String loadVariable(String name)
                {
                    return null;
                }
            });
            return Vault.create(config.build(), 2);
        }
        catch (VaultException x)
        {
            throw new IllegalArgumentException("vault client settings rejected: address " + settings.address());
        }
    }

    private static int seconds(Duration duration)
    {
        long ceil = (duration.toMillis() + 999) / 1000;
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, ceil));
    }

    static String human(Duration duration)
    {
        long s = Math.max(0, duration.toSeconds());
        if (s < 120)
            return s + "s";
        if (s < 2 * 3600)
            return (s / 60) + "m" + (s % 60 == 0 ? "" : " " + (s % 60) + "s");
        return (s / 3600) + "h" + ((s % 3600) / 60 == 0 ? "" : " " + (s % 3600) / 60 + "m");
    }
}
