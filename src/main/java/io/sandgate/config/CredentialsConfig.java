package io.sandgate.config;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
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

    /** Parses {@code egress.credentials}. */
    static Map<String, Credential> parseCredentials(Map<String, ?> entries)
    {
        Map<String, Credential> credentials = new LinkedHashMap<>();
        entries.forEach((name, value) ->
        {
            String where = ConfigKeys.EGRESS_CREDENTIALS.name() + "." + name;
            if (!(value instanceof Map<?, ?> entry))
                throw new IllegalArgumentException(where + " (expected: {secret, hosts, header, format} or {secret, hosts, query})");
            EgressConfig.known(entry, where, Set.of("secret", "hosts", "header", "format", "query"));
            List<String> hosts = new ArrayList<>();
            if (entry.get("hosts") instanceof List<?> list)
                list.forEach(h -> hosts.add(h.toString().toLowerCase(Locale.ROOT)));
            if (hosts.isEmpty() || hosts.contains("*"))
                throw new IllegalArgumentException(where + ".hosts: " + hosts + " (expected: the host names the key may be sent to, no *)");
            String header = entry.get("header") == null ? "Authorization" : entry.get("header").toString();
            String format = entry.get("format") == null ? (header.equalsIgnoreCase("Authorization") ? "Bearer {secret}" : "{secret}") : entry.get("format").toString();
            if (!format.contains("{secret}"))
                throw new IllegalArgumentException(where + ".format: " + format + " (expected: a template containing {secret})");
            credentials.put(name, new Credential(name, entry.get("secret") == null ? name : entry.get("secret").toString(), hosts, header, format,
                Optional.ofNullable(entry.get("query")).map(Object::toString)));
        });
        return credentials;
    }

    /** Parses {@code egress.agents}. */
    static List<Agent> parseAgents(List<Map<?, ?>> entries)
    {
        List<Agent> agents = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (Map<?, ?> entry : entries)
        {
            String where = ConfigKeys.EGRESS_AGENTS.name() + "[" + agents.size() + "]";
            EgressConfig.known(entry, where, Set.of("id", "token", "credentials", "expires", "revoked"));
            Object id = entry.get("id");
            if (id == null || !ids.add(id.toString()))
                throw new IllegalArgumentException(where + ".id: " + id + " (expected: a unique agent id)");
            Set<String> allowed = new HashSet<>();
            if (entry.get("credentials") instanceof List<?> list)
                list.forEach(c -> allowed.add(c.toString()));
            Optional<Instant> expires = Optional.empty();
            if (entry.get("expires") instanceof Date date)
                expires = Optional.of(date.toInstant()); // YAML reads an unquoted timestamp as a date
            else if (entry.get("expires") != null)
            {
                try
                {
                    expires = Optional.of(Instant.parse(entry.get("expires").toString()));
                }
                catch (DateTimeParseException x)
                {
                    throw new IllegalArgumentException(where + ".expires: " + entry.get("expires") + " (expected: an instant such as 2027-01-31T00:00:00Z)");
                }
            }
            Object revoked = entry.get("revoked");
            agents.add(new Agent(id.toString(), entry.get("token") == null ? id + "-token" : entry.get("token").toString(), allowed, expires,
                revoked != null && ValueParser.bool().parse(revoked)));
        }
        return agents;
    }
}
