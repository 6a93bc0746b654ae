package io.sandgate.config;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Credential injection: where secrets come from, which real keys exist and where they may be
 * sent, and which agents (by internal token) may use which of them. Values are never here, only
 * secret names that a secret source resolves.
 *
 * @param source {@code file}, {@code env} or {@code vault}
 * @param file the secrets file of the {@code file} source
 * @param overlap how long a rotated-out value stays valid
 * @param refresh how often values are re-read to notice rotation
 * @param vault the {@code vault} source's settings; required when that is the source
 * @param credentials by name
 * @param agents who may use which credential
 */
public record CredentialsConfig(SourceKind source, Path file, Duration overlap, Duration refresh, Optional<VaultSettings> vault,
                                Map<String, Credential> credentials, List<Agent> agents)
{
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
            for (String pattern : hosts)
            {
                if (pattern.equals(host) || (pattern.startsWith("*.") && host.endsWith(pattern.substring(1))))
                    return true;
            }
            return false;
        }
    }

    /**
     * @param id agent identity, for logs and metrics
     * @param tokenSecret the secret name of its internal token
     * @param credentials credentials it may use
     * @param expires when its token stops working
     * @param revoked whether its token is refused
     */
    public record Agent(String id, String tokenSecret, Set<String> credentials, Optional<Instant> expires, boolean revoked)
    {
        public Agent
        {
            credentials = Set.copyOf(credentials);
        }
    }

    public CredentialsConfig
    {
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

    /** A builder that names every value. */
    public static Builder builder()
    {
        return new Builder();
    }

    /** Names every value of a {@link CredentialsConfig}; the record checks them all when it is built. */
    public static final class Builder
    {
        private SourceKind source;
        private Path file;
        private Duration overlap;
        private Duration refresh;
        private Optional<VaultSettings> vault = Optional.empty();
        private Map<String, Credential> credentials = Map.of();
        private List<Agent> agents = List.of();

        private Builder()
        {
        }

        public Builder source(SourceKind source)
        {
            this.source = source;
            return this;
        }

        public Builder file(Path file)
        {
            this.file = file;
            return this;
        }

        public Builder overlap(Duration overlap)
        {
            this.overlap = overlap;
            return this;
        }

        public Builder refresh(Duration refresh)
        {
            this.refresh = refresh;
            return this;
        }

        public Builder vault(Optional<VaultSettings> vault)
        {
            this.vault = vault;
            return this;
        }

        public Builder credentials(Map<String, Credential> credentials)
        {
            this.credentials = credentials;
            return this;
        }

        public Builder agents(List<Agent> agents)
        {
            this.agents = agents;
            return this;
        }

        public CredentialsConfig build()
        {
            return new CredentialsConfig(source, file, overlap, refresh, vault, credentials, agents);
        }
    }
}
