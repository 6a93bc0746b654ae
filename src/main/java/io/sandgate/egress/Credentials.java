package io.sandgate.egress;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.CredentialsConfig;
import io.sandgate.config.EgressConfig;
import io.sandgate.core.Audit;
import io.sandgate.core.Digests;
import io.sandgate.core.Schedulers;
import io.sandgate.secrets.SecretRing;
import io.sandgate.secrets.SecretUnavailableException;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Internal token -> agent -> real key. Agents call with their internal token where their SDK puts
 * an API key ({@link #TOKEN_HEADERS}); on a route that names a credential the header is replaced by the real key in the form
 * the provider expects, and on any other route an internal token is refused rather than forwarded,
 * so it never reaches a target. A credential placeholder ({@link Placeholders}) in a header value or
 * the query is replaced by its key under the same checks ({@link #placeholders}). Tokens are looked up by their SHA-256, in an index rebuilt from the
 * secret source on every refresh (and at most once a second on an unknown token, so a freshly
 * rotated token works at once without letting random tokens hammer the source).
 */
public final class Credentials implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Credentials.class);

    /**
     * What replaces the agent's Authorization header: a header, or a query parameter.
     *
     * @param keys the credential's real keys valid now, the injected one and those still in their
     *        overlap: what the target must not hand back to the agent
     */
    public record Injection(String credential, String agent, Optional<String> header, String value, Optional<String> query, Set<String> keys)
    {
        public Injection
        {
            keys = Set.copyOf(keys);
        }

        /** The agent's query with the key put in (its own value of that parameter dropped), or unchanged for a header credential. */
        public String intoQuery(String agentQuery)
        {
            if (query.isEmpty())
                return agentQuery;
            String kept = withoutOwnParameter(agentQuery);
            return (kept == null ? "" : kept + "&") + URLEncoder.encode(query.get(), StandardCharsets.UTF_8) + '='
                + URLEncoder.encode(value, StandardCharsets.UTF_8);
        }

        /**
         * The agent's query without its own value of the parameter the key goes in (where SDKs put
         * the agent's token, as they would the key), or null when nothing is left; unchanged for a
         * header credential. That value never reaches the target, so it is not read for secrets.
         */
        public String withoutOwnParameter(String agentQuery)
        {
            if (query.isEmpty() || agentQuery == null)
                return agentQuery;
            StringBuilder result = new StringBuilder();
            for (String pair : agentQuery.split("&"))
            {
                String key = pair.contains("=") ? pair.substring(0, pair.indexOf('=')) : pair;
                if (!pair.isEmpty() && !decode(key).equals(query.get()))
                    result.append(result.isEmpty() ? "" : "&").append(pair);
            }
            return result.isEmpty() ? null : result.toString();
        }

        private static String decode(String text)
        {
            try
            {
                return URLDecoder.decode(text, StandardCharsets.UTF_8);
            }
            catch (IllegalArgumentException x)
            {
                throw GatewayException.badRequest("malformed query string");
            }
        }

        @Override
        public String toString()
        {
            return "Injection[" + credential + " for " + agent + "]";
        }
    }

    private record Holder(CredentialsConfig.Agent agent, Instant until)
    {
    }

    /**
     * Where SDKs put their API key (OpenAI's Authorization: Bearer, Anthropic's x-api-key, Google's
     * x-goog-api-key, Azure's api-key): an agent configured with its internal token as "the API
     * key" sends it in one of them, unmodified.
     */
    public static final List<String> TOKEN_HEADERS = List.of(HttpHeader.AUTHORIZATION.asString(), "x-api-key", "x-goog-api-key", "api-key");

    /** What a refused {@code Proxy-Authorization} is answered with: clients put the token in the proxy URL's password. */
    static final String PROXY_CHALLENGE = "Basic realm=\"sandgate egress\"";

    private static final long MISS_REFRESH_NANOS = TimeUnit.SECONDS.toNanos(1);

    private volatile CredentialsConfig config;
    private final SecretRing ring;
    private final Clock clock;
    private final ScheduledFuture<?> refresher;
    private final AtomicLong lastMissRefresh = new AtomicLong(System.nanoTime() - MISS_REFRESH_NANOS);
    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    /** SHA-256 of a valid token -> its agent and until when the token is valid; replaced whole. */
    private volatile Map<String, Holder> tokens = Map.of();
    private volatile Set<String> held = Set.of();
    private volatile Set<String> agentTokens = Set.of();
    private final List<Runnable> onHeldChange = new CopyOnWriteArrayList<>();

    /**
     * @param schedulers the gateway's threads: the periodic refresh, which may wait on the secret
     *        source, runs on a worker
     */
    public Credentials(CredentialsConfig config, SecretRing ring, Clock clock, MeterRegistry registry, Schedulers schedulers)
    {
        this.config = config;
        this.ring = ring;
        this.clock = clock;
        this.registry = registry;
        refresh();
        this.refresher = schedulers.every(config.refresh(), config.refresh(), "Credentials refresh", this::refresh);
    }

    /**
     * Takes a reloaded list of credentials and agents (revocations, expiries, new credentials);
     * the secret source itself is not reopened.
     */
    public void reload(CredentialsConfig reloaded)
    {
        this.config = reloaded;
        refresh();
    }

    /** Re-reads every token and key; rotated values start their overlap, the token index is rebuilt. */
    public void refresh()
    {
        try
        {
            List<String> names = new ArrayList<>(tokenNames());
            config.credentials().values().forEach(c -> names.add(c.secret()));
            ring.refresh(names);
            rebuild();
        }
        catch (RuntimeException x)
        {
            // A scheduled task that throws is never run again: rotation would silently stop.
            LOG.warn("Refreshing credentials failed; keeping what is known: {}", x.toString());
        }
    }

    private List<String> tokenNames()
    {
        return config.agents().stream().map(CredentialsConfig.Agent::tokenSecret).toList();
    }

    /** Synchronized: the refresher and an unknown token may both rebuild, and the later read must win. */
    private synchronized void rebuild()
    {
        Map<String, Holder> index = new HashMap<>();
        Set<String> values = new HashSet<>();
        for (CredentialsConfig.Agent agent : config.agents())
        {
            ring.valid(agent.tokenSecret()).forEach(token ->
            {
                index.put(digest(token.value().reveal()), new Holder(agent, token.until()));
                values.add(token.value().reveal());
            });
        }
        tokens = Map.copyOf(index);
        Set<String> keys = ring.held(config.credentials().values().stream().map(CredentialsConfig.Credential::secret).toList());
        if (!keys.equals(held) || !values.equals(agentTokens))
        {
            held = Set.copyOf(keys);
            agentTokens = Set.copyOf(values);
            onHeldChange.forEach(Runnable::run);
        }
    }

    /** The real keys valid now (current and overlapping), which the leak scanner must also catch. */
    public Set<String> heldKeys()
    {
        return held;
    }

    /**
     * The agents' internal tokens valid now (current and overlapping, of revoked and expired agents
     * too): secrets the gateway holds as it holds the real keys, which the leak scanner must catch
     * anywhere in a request but the header a credential replaces.
     */
    public Set<String> agentTokens()
    {
        return agentTokens;
    }

    /**
     * Called, in the order added, after the held keys or the agents' tokens changed (rotation, a
     * reload), so that scanner and redaction follow.
     */
    public void onHeldSecretsChange(Runnable listener)
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
    public Injection authorize(RequestHeaders headers, EgressConfig.Route route, String host)
    {
        String credentialName = route.credential().orElseThrow();
        Presented presented = presented(headers);
        CredentialsConfig.Agent agent = agent(presented == null ? null : presented.token());
        CredentialsConfig.Credential credential = config.credentials().get(credentialName);
        if (credential == null)
            throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE_503, "credential_unavailable", "credential " + credentialName + " is not configured");
        if (!agent.credentials().contains(credentialName))
            throw denied("agent " + agent.id() + " may not use credential " + credentialName);
        if (!credential.boundTo(host))
            throw denied("credential " + credentialName + " is not bound to host " + host);
        String key = key(credentialName, credential);
        counter("sandgate.egress.credentials.injected", "credential", credentialName).increment();
        Audit.credentialInjected(agent.id(), credentialName, host);
        String value = credential.query().isPresent() ? key : credential.format().replace("{secret}", key);
        return new Injection(credentialName, agent.id(), credential.query().isPresent() ? Optional.empty() : Optional.of(credential.header()),
            value, credential.query(), ring.held(List.of(credential.secret())));
    }

    /** The credential's key now; the detail of a failure (Vault's address, a file path) is for the log, not for the agent. */
    private String key(String credentialName, CredentialsConfig.Credential credential)
    {
        try
        {
            return ring.current(credential.secret()).reveal();
        }
        catch (SecretUnavailableException x)
        {
            counter("sandgate.egress.credentials.unavailable", "credential", credentialName).increment();
            LOG.warn("Credential {} unavailable from {}: {}", credentialName, ring.source().kind(), x.getMessage());
            throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE_503, "credential_unavailable", "credential " + credentialName + " is unavailable ("
                + (x.reason() == SecretUnavailableException.Reason.EXPIRED ? "secret source unreachable and cached key expired"
                : x.reason() == SecretUnavailableException.Reason.SOURCE_DOWN ? "secret source unreachable" : "not in the secret source") + ")");
        }
    }

    /**
     * The keys that replace a request's credential placeholders ({@link Placeholders}), each
     * checked as a route's credential is: the request carries a valid internal token (401
     * otherwise, as on a credential route), its agent may use the credential, the credential is
     * bound to the target host and the target is reached over https; anything else refuses the
     * whole request (403 {@code placeholder_refused}), so that no placeholder is ever sent as text.
     * The token is looked for in the API-key headers' values that hold no placeholder, and that
     * header stops at the gateway.
     *
     * @param found the placeholders of every header value and the query the target would get
     * @return {@link Placeholders.Substitution#NONE} when {@code found} is empty
     */
    public Placeholders.Substitution placeholders(List<Placeholders.Found> found, RequestHeaders headers, String scheme, String host)
    {
        if (found.isEmpty())
            return Placeholders.Substitution.NONE;
        if (found.stream().anyMatch(placeholder -> placeholder.name() == null))
            throw placeholderRefused("a credential placeholder is percent-encoded more than once (expected: " + Placeholders.PREFIX + "<credential>, escaped once at most)");
        if (!scheme.equals("https"))
            throw placeholderRefused("credential placeholders are only replaced over https (use /egress/" + host + "/...)");
        Presented presented = presented(headers);
        CredentialsConfig.Agent agent = agent(presented == null ? null : presented.token());
        Map<String, String> keys = new HashMap<>();
        Map<String, Set<String>> held = new HashMap<>();
        for (Placeholders.Found placeholder : found)
        {
            String name = placeholder.name();
            if (keys.containsKey(name))
                continue;
            CredentialsConfig.Credential credential = config.credentials().get(name);
            // The agent sent the name: it is not repeated, since whatever follows the prefix may be anything.
            if (credential == null || name.isEmpty())
                throw placeholderRefused("a credential placeholder names no configured credential (expected: " + Placeholders.PREFIX
                    + "<credential>, one of " + new TreeSet<>(agent.credentials()) + ")");
            if (!agent.credentials().contains(name))
                throw placeholderRefused("agent " + agent.id() + " may not use credential " + name);
            if (!credential.boundTo(host))
                throw placeholderRefused("credential " + name + " is not bound to host " + host + "; its placeholder is not sent there");
            keys.put(name, key(name, credential));
            held.put(name, ring.held(List.of(credential.secret())));
        }
        for (String name : keys.keySet())
        {
            counter("sandgate.egress.credentials.injected", "credential", name).increment();
            Audit.credentialInjected(agent.id(), name, host);
        }
        return new Placeholders.Substitution(agent.id(), keys, held, Optional.of(presented.header()));
    }

    private GatewayException placeholderRefused(String message)
    {
        counter("sandgate.egress.credentials.refused", "reason", "placeholder").increment();
        return Placeholders.refused(message);
    }

    /**
     * Refuses an internal token on a route that injects nothing: forwarding it would hand it to a
     * host it was never meant for. Every value of every API-key header is looked at, since all of
     * them are forwarded, and in each every word and a Basic credential's two halves: a token under
     * another scheme ({@code Token x}, {@code Bearer<TAB>x}) or as a password is as forwarded as
     * under {@code Bearer}. Other values (an agent's own key for some public API) pass; a token
     * anywhere else in the request is the leak scanner's to find ({@link #agentTokens()}).
     */
    public void refuseInternalToken(RequestHeaders headers, String host, Placeholders.Substitution placeholders)
    {
        for (String name : TOKEN_HEADERS)
        {
            // The token of a request with placeholders stops at the gateway with its header.
            if (placeholders.consumes(name))
                continue;
            for (String value : headers.values(name))
            {
                for (String token : tokensIn(value))
                {
                    CredentialsConfig.Agent agent = lookup(digest(token));
                    if (agent != null)
                        throw denied("internal token of agent " + agent.id() + " may not be sent to " + host + " (no credential bound to it)");
                }
            }
        }
    }

    /** Whatever in a header value could be a token: the value, each of its words, and a Basic credential's user and password. */
    static List<String> tokensIn(String value)
    {
        List<String> tokens = new ArrayList<>();
        if (value == null || value.isBlank())
            return tokens;
        String[] words = value.trim().split("\\s+");
        tokens.add(value.trim());
        if (words.length > 1)
            tokens.addAll(List.of(words));
        if (words.length == 2 && words[0].equalsIgnoreCase("Basic"))
        {
            try
            {
                String decoded = new String(Base64.getDecoder().decode(words[1]), StandardCharsets.UTF_8);
                int colon = decoded.indexOf(':');
                if (colon >= 0)
                {
                    tokens.add(decoded.substring(0, colon));
                    tokens.add(decoded.substring(colon + 1));
                }
            }
            catch (IllegalArgumentException notBase64)
            {
                // Not a Basic credential after all: its words were looked at above.
            }
        }
        return tokens;
    }

    /**
     * The agent whose internal token the request carries, if it is valid now. A plain look-up for
     * counting requests per agent: it neither refreshes the index nor counts refusals, so tokens
     * that are not an agent's cost nothing.
     */
    public Optional<String> agentOf(RequestHeaders headers)
    {
        String proxyToken = proxyToken(headers.first(HttpHeader.PROXY_AUTHORIZATION.asString()));
        Presented presented = proxyToken != null ? new Presented(HttpHeader.PROXY_AUTHORIZATION.asString(), proxyToken) : presented(headers);
        return presented == null ? Optional.empty() : agentOfDigest(digest(presented.token()));
    }

    /** The agent whose token has this digest, if the token is valid now: a tunnel's agent, checked again on each request inside it. */
    Optional<String> agentOfDigest(String digest)
    {
        CredentialsConfig.Agent agent = lookup(digest);
        if (agent == null || agent.revoked() || agent.expires().isPresent() && !clock.instant().isBefore(agent.expires().get()))
            return Optional.empty();
        return Optional.of(agent.id());
    }

    /** An agent as it named itself to the gateway as to a proxy, and its token's digest, by which a tunnel checks it again. */
    record ProxyAgent(String id, String digest)
    {
    }

    /**
     * The agent that names itself to the gateway as to a proxy, in {@code Proxy-Authorization}:
     * Basic with the internal token as the password (what {@code HTTPS_PROXY=http://agent:TOKEN@gateway:port}
     * makes curl, git, Node, Python and Go send), or Bearer. The header is hop-by-hop and reaches no
     * target, so unlike an API-key header it names the agent on any route, with or without a credential.
     *
     * @return empty when the request carries no {@code Proxy-Authorization}
     * @throws GatewayException 407 with a Basic challenge when it names no agent valid now
     */
    Optional<ProxyAgent> proxyAgent(RequestHeaders headers)
    {
        String value = headers.first(HttpHeader.PROXY_AUTHORIZATION.asString());
        if (value == null)
            return Optional.empty();
        String token = proxyToken(value);
        if (token == null)
            throw proxyRefused("Proxy-Authorization holds no internal token (expected: the token as the proxy URL's password, or Bearer <token>)");
        try
        {
            return Optional.of(new ProxyAgent(agent(token).id(), digest(token)));
        }
        catch (GatewayException x)
        {
            throw proxyRefused(x.getMessage());
        }
    }

    private static GatewayException proxyRefused(String message)
    {
        return GatewayException.challenged(HttpStatus.PROXY_AUTHENTICATION_REQUIRED_407, "proxy_authentication_required", message, PROXY_CHALLENGE);
    }

    /**
     * The agent a CONNECT names: in {@code Proxy-Authorization} ({@link #proxyAgent}), or else by an
     * internal token in an API-key header, which a CONNECT's headers carry no further than the gateway.
     *
     * @throws GatewayException 407 as {@link #proxyAgent} does
     */
    Optional<ProxyAgent> connectAgent(RequestHeaders headers)
    {
        Optional<ProxyAgent> proxy = proxyAgent(headers);
        if (proxy.isPresent())
            return proxy;
        Presented presented = presented(headers);
        if (presented == null)
            return Optional.empty();
        String digest = digest(presented.token());
        return agentOfDigest(digest).map(id -> new ProxyAgent(id, digest));
    }

    /** The token in a {@code Proxy-Authorization} value: Basic's password (its user when the password is empty), or Bearer's. */
    private static String proxyToken(String value)
    {
        if (value == null)
            return null;
        String trimmed = value.trim();
        if (!trimmed.regionMatches(true, 0, "Basic ", 0, 6))
            return token(trimmed);
        try
        {
            String pair = new String(Base64.getDecoder().decode(trimmed.substring(6).trim()), StandardCharsets.UTF_8);
            int colon = pair.indexOf(':');
            String password = colon < 0 ? "" : pair.substring(colon + 1);
            return token(password.isEmpty() ? (colon < 0 ? pair : pair.substring(0, colon)) : password);
        }
        catch (IllegalArgumentException notBase64)
        {
            return null;
        }
    }

    /** An internal token as presented, and the header it came in. */
    private record Presented(String header, String token)
    {
        @Override
        public String toString()
        {
            return "Presented[" + header + "]";
        }
    }

    /**
     * The first API-key header value the agent sent, as a token, or null. A value holding a
     * credential placeholder is the key the tool sends, not the agent's token.
     */
    private static Presented presented(RequestHeaders headers)
    {
        for (String name : TOKEN_HEADERS)
        {
            for (String value : headers.values(name))
            {
                String token = token(value);
                if (token != null && Placeholders.find(value).isEmpty())
                    return new Presented(name, token);
            }
        }
        return null;
    }

    private CredentialsConfig.Agent agent(String token)
    {
        if (token == null)
            throw unauthorized("missing", "missing internal token (expected: Authorization: Bearer <token>, or x-api-key: <token>)");
        String digest = digest(token);
        CredentialsConfig.Agent agent = lookup(digest);
        if (agent == null)
        {
            long last = lastMissRefresh.get();
            long now = System.nanoTime();
            if (now - last >= MISS_REFRESH_NANOS && lastMissRefresh.compareAndSet(last, now))
            {
                // A token rotated since the last refresh is valid at once (as soon as the source
                // shows it: Vault's cache is re-read every egress.secrets.vault.refresh).
                ring.refresh(tokenNames());
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

    /** A header value as a token: {@code Bearer x} or a bare value. */
    private static String token(String value)
    {
        if (value == null)
            return null;
        String token = value.regionMatches(true, 0, "Bearer ", 0, 7) ? value.substring(7).trim() : value.trim();
        return token.isEmpty() ? null : token;
    }

    private GatewayException unauthorized(String reason, String message)
    {
        counter("sandgate.egress.credentials.refused", "reason", reason).increment();
        return new GatewayException(HttpStatus.UNAUTHORIZED_401, "unauthorized", message);
    }

    private GatewayException denied(String message)
    {
        counter("sandgate.egress.credentials.refused", "reason", "forbidden").increment();
        return GatewayException.forbidden(message);
    }

    /** Looked up once per name and tag: injection runs on every request of a credential route. */
    private Counter counter(String name, String tag, String value)
    {
        String tagValue = value.toLowerCase(Locale.ROOT);
        return counters.computeIfAbsent(name + ' ' + tagValue, key -> Counter.builder(name).tag(tag, tagValue).register(registry));
    }

    static String digest(String token)
    {
        return Digests.sha256Hex(token);
    }

    @Override
    public void close()
    {
        refresher.cancel(false);
        ring.source().close();
    }
}
