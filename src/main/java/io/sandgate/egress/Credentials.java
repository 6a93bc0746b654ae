package io.sandgate.egress;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.CredentialsConfig;
import io.sandgate.config.EgressConfig;
import io.sandgate.secrets.SecretRing;
import io.sandgate.secrets.SecretUnavailableException;
import io.sandgate.web.GatewayException;

/**
 * Internal token -> agent -> real key. Agents call with {@code Authorization: Bearer {internal
 * token}}; on a route that names a credential the header is replaced by the real key in the form
 * the provider expects, and on any other route an internal token is refused rather than forwarded,
 * so it never reaches a target. Tokens are looked up by their SHA-256, in an index rebuilt from the
 * secret source on every refresh (and at most once a second on an unknown token, so a freshly
 * rotated token works at once without letting random tokens hammer the source).
 */
public final class Credentials implements AutoCloseable
{
    /** What replaces the agent's Authorization header: a header, or a query parameter. */
    public record Injection(String credential, String agent, Optional<String> header, String value, Optional<String> query)
    {
        @Override
        public String toString()
        {
            return "Injection[" + credential + " for " + agent + "]";
        }
    }

    private record Holder(CredentialsConfig.Agent agent, Instant until)
    {
    }

    private static final long MISS_REFRESH_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final CredentialsConfig config;
    private final SecretRing ring;
    private final Clock clock;
    private final ScheduledExecutorService refresher = Executors.newSingleThreadScheduledExecutor(r ->
    {
        Thread thread = new Thread(r, "sandgate-secrets-refresh");
        thread.setDaemon(true);
        return thread;
    });
    private final AtomicLong lastMissRefresh = new AtomicLong(System.nanoTime() - MISS_REFRESH_NANOS);
    private final MeterRegistry registry;
    /** SHA-256 of a valid token -> its agent and until when the token is valid; replaced whole. */
    private volatile Map<String, Holder> tokens = Map.of();
    private volatile Set<String> held = Set.of();
    private final List<Runnable> onHeldChange = new java.util.concurrent.CopyOnWriteArrayList<>();

    public Credentials(CredentialsConfig config, SecretRing ring, Clock clock, MeterRegistry registry)
    {
        this.config = config;
        this.ring = ring;
        this.clock = clock;
        this.registry = registry;
        if (!config.agents().isEmpty() || !config.credentials().isEmpty())
        {
            refresh();
            long period = config.refresh().toMillis();
            refresher.scheduleWithFixedDelay(this::refresh, period, period, TimeUnit.MILLISECONDS);
        }
    }

    /** Re-reads every token and key; rotated values start their overlap, the token index is rebuilt. */
    public void refresh()
    {
        List<String> names = new ArrayList<>();
        config.agents().forEach(a -> names.add(a.tokenSecret()));
        config.credentials().values().forEach(c -> names.add(c.secret()));
        ring.refresh(names);
        rebuild();
    }

    private void rebuild()
    {
        Map<String, Holder> index = new HashMap<>();
        for (CredentialsConfig.Agent agent : config.agents())
            ring.valid(agent.tokenSecret()).forEach(token -> index.put(digest(token.value().reveal()), new Holder(agent, token.until())));
        tokens = Map.copyOf(index);
        Set<String> keys = ring.held(config.credentials().values().stream().map(CredentialsConfig.Credential::secret).toList());
        if (!keys.equals(held))
        {
            held = Set.copyOf(keys);
            onHeldChange.forEach(Runnable::run);
        }
    }

    /** The real keys valid now (current and overlapping), which the leak scanner must also catch. */
    public Set<String> heldKeys()
    {
        return held;
    }

    /** Called, in the order added, after the set of held keys changed (rotation), so that scanner and redaction follow. */
    public void onHeldKeysChange(Runnable listener)
    {
        onHeldChange.add(listener);
    }

    /**
     * The injection for this exchange on a route naming a credential.
     *
     * @throws GatewayException 401 for a missing, unknown, revoked or expired token; 403 for a
     *         credential the agent may not use or that is not bound to the host; 503 when the key
     *         cannot be read
     */
    public Injection authorize(String authorization, EgressConfig.Route route, String host)
    {
        String credentialName = route.credential().orElseThrow();
        CredentialsConfig.Agent agent = agent(authorization);
        CredentialsConfig.Credential credential = config.credentials().get(credentialName);
        if (!agent.credentials().contains(credentialName))
            throw denied("agent " + agent.id() + " may not use credential " + credentialName);
        if (!credential.boundTo(host))
            throw denied("credential " + credentialName + " is not bound to host " + host);
        String key;
        try
        {
            key = ring.current(credential.secret()).reveal();
        }
        catch (SecretUnavailableException x)
        {
            counter("sandgate.egress.credentials.unavailable", "credential", credentialName).increment();
            throw new GatewayException(503, "credential_unavailable", "credential " + credentialName + " is unavailable: " + x.getMessage());
        }
        counter("sandgate.egress.credentials.injected", "credential", credentialName).increment();
        String value = credential.query().isPresent() ? key : credential.format().replace("{secret}", key);
        return new Injection(credentialName, agent.id(), credential.query().isPresent() ? Optional.empty() : Optional.of(credential.header()),
            value, credential.query());
    }

    /**
     * Refuses an internal token on a route that injects nothing: forwarding it would hand it to a
     * host it was never meant for. Other Authorization values (an agent's own key for some public
     * API) pass.
     */
    public void refuseInternalToken(String authorization, String host)
    {
        String token = bearer(authorization);
        CredentialsConfig.Agent agent = token == null ? null : lookup(digest(token));
        if (agent != null)
            throw denied("internal token of agent " + agent.id() + " may not be sent to " + host + " (no credential bound to it)");
    }

    private CredentialsConfig.Agent agent(String authorization)
    {
        String token = bearer(authorization);
        if (token == null)
            throw unauthorized("missing", "missing internal token (expected: Authorization: Bearer <token>)");
        String digest = digest(token);
        CredentialsConfig.Agent agent = lookup(digest);
        if (agent == null)
        {
            long last = lastMissRefresh.get();
            long now = System.nanoTime();
            if (now - last >= MISS_REFRESH_NANOS && lastMissRefresh.compareAndSet(last, now))
            {
                // A token rotated since the last refresh is valid at once.
                List<String> names = config.agents().stream().map(CredentialsConfig.Agent::tokenSecret).toList();
                ring.refresh(names);
                rebuild();
                agent = lookup(digest);
            }
        }
        if (agent == null)
            throw unauthorized("unknown", "unknown internal token");
        if (agent.revoked())
            throw unauthorized("revoked", "internal token of agent " + agent.id() + " is revoked");
        if (agent.expires().isPresent() && !clock.instant().isBefore(agent.expires().get()))
            throw unauthorized("expired", "internal token of agent " + agent.id() + " expired");
        return agent;
    }

    /** The agent of a token valid now; a rotated-out token past its overlap is unknown. */
    private CredentialsConfig.Agent lookup(String digest)
    {
        Holder holder = tokens.get(digest);
        return holder == null || !clock.instant().isBefore(holder.until()) ? null : holder.agent();
    }

    private static String bearer(String authorization)
    {
        if (authorization == null || authorization.length() < 8 || !authorization.regionMatches(true, 0, "Bearer ", 0, 7))
            return null;
        String token = authorization.substring(7).trim();
        return token.isEmpty() ? null : token;
    }

    private GatewayException unauthorized(String reason, String message)
    {
        counter("sandgate.egress.credentials.refused", "reason", reason).increment();
        return new GatewayException(401, "unauthorized", message);
    }

    private GatewayException denied(String message)
    {
        counter("sandgate.egress.credentials.refused", "reason", "forbidden").increment();
        return GatewayException.forbidden(message);
    }

    private Counter counter(String name, String tag, String value)
    {
        return Counter.builder(name).tag(tag, value.toLowerCase(Locale.ROOT)).register(registry);
    }

    static String digest(String token)
    {
        try
        {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException x)
        {
            throw new IllegalStateException(x);
        }
    }

    @Override
    public void close()
    {
        refresher.shutdownNow();
        ring.source().close();
    }
}
