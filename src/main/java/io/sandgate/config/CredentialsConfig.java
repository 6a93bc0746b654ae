package io.sandgate.config;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import io.sandgate.core.Secret;

/**
 * Credential injection: where secrets come from, which real keys exist and where they may be
 * sent, and which agents (by internal token) may use which of them. Values are not here, only
 * secret names that a secret source resolves; the one exception is the {@code env} source's
 * variables, which exist only at start-up and are held as {@link Secret}s that never print.
 *
 * @param source {@code file}, {@code env} or {@code vault}
 * @param file the secrets file of the {@code file} source
 * @param overlap how long a rotated-out value stays valid
 * @param refresh how often values are re-read to notice rotation
 * @param vault the {@code vault} source's settings; required when that is the source
 * @param environment the {@code SANDGATE_SECRET_*} environment variables when the source is {@code env}, else empty
 * @param credentials by name
 * @param agents who may use which credential
 */
public record CredentialsConfig(SourceKind source, Path file, Duration overlap, Duration refresh, Optional<VaultSettings> vault,
                                Map<String, Secret> environment, Map<String, Credential> credentials, List<Agent> agents)
{
    /** What the {@code env} source's variables begin with: {@code SANDGATE_SECRET_OPENAI} is the secret {@code openai}. */
    public static final String SECRET_VARIABLE_PREFIX = "SANDGATE_SECRET_";

    public enum SourceKind
    {
        FILE, ENV, VAULT
    }

    /**
     * A real key and how a provider expects it.
     *
     * @param name the name routes refer to
     * @param secret the secret name in the source
     * @param hosts where the key may be sent (exact names or {@code *.} globs); anywhere else is refused
     * @param header the header carrying it (unless {@code query} is set)
     * @param format the header value, {@code {secret}} standing for the key
     * @param query a query parameter carrying it instead of a header
     */
    public record Credential(String name, String secret, List<String> hosts, String header, String format, Optional<String> query)
    {
        public Credential
        {
            hosts = List.copyOf(hosts);
        }

        public boolean boundTo(String host)
        {
            return DomainGlobs.matches(hosts, host, false);
        }
    }

    /**
     * @param id agent identity, for logs and metrics
     * @param tokenSecret the secret name of its internal token
     * @param credentials credentials it may use
     * @param expires when its token stops working
     * @param revoked whether its token is refused
     * @param policy its policy as configured ({@code policy}); the admin API may replace it at run time
     */
    public record Agent(String id, String tokenSecret, Set<String> credentials, Optional<Instant> expires, boolean revoked, AgentPolicy policy)
    {
        public Agent
        {
            credentials = Set.copyOf(credentials);
            Objects.requireNonNull(policy, "policy");
        }

        /** An agent without a policy of its own: only the routes bind it. */
        public Agent(String id, String tokenSecret, Set<String> credentials, Optional<Instant> expires, boolean revoked)
        {
            this(id, tokenSecret, credentials, expires, revoked, AgentPolicy.NONE);
        }
    }

    public CredentialsConfig
    {
        environment = Map.copyOf(environment);
        credentials = Map.copyOf(credentials);
        agents = List.copyOf(agents);
        for (Agent agent : agents)
        {
            for (String credential : agent.credentials())
            {
                if (!credentials.containsKey(credential))
                    throw new IllegalArgumentException(ConfigKeys.EGRESS_AGENTS.name() + "." + agent.id() + ".credentials: " + credential
                        + " (expected: one of " + credentials.keySet() + ")");
            }
        }
        Objects.requireNonNull(vault, "vault");
        if (source == SourceKind.VAULT && vault.isEmpty())
            throw new IllegalArgumentException(ConfigKeys.VAULT_ADDRESS.name() + ": missing (expected: Vault's URL when " + ConfigKeys.SECRETS_SOURCE.name() + " is vault)");
    }
}
