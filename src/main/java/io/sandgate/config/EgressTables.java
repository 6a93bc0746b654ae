package io.sandgate.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.sandgate.config.CredentialsConfig.Agent;
import io.sandgate.config.CredentialsConfig.Credential;
import io.sandgate.config.EgressConfig.Node;
import io.sandgate.config.EgressConfig.Pool;
import io.sandgate.config.EgressConfig.Route;
import io.sandgate.config.EgressConfig.ScanMode;

/**
 * Binds the egress face's tables, in the YAML shape the seed architecture fixed, to their records:
 * {@code egress.routes}, {@code egress.pools} (with their nodes), {@code egress.credentials} and
 * {@code egress.agents}. The defaults of the values inside the tables are written here.
 */
final class EgressTables
{
    private static final Set<String> ROUTE_KEYS = Set.of("match", "upstream", "timeout", "idle_timeout", "retry", "retry_non_idempotent",
        "sticky_session", "sticky_ttl", "scheme", "credential", "scan", "scan_responses",
        "max_body_size", "inspect");
    private static final Set<String> MATCH_KEYS = Set.of("domains", "task_type");
    private static final Set<String> POOL_KEYS = Set.of("region", "nodes");
    private static final Set<String> NODE_KEYS = Set.of("id", "address", "region", "weight");
    private static final Set<String> CREDENTIAL_KEYS = Set.of("secret", "hosts", "header", "format", "query");
    private static final Set<String> AGENT_KEYS = Set.of("id", "token", "credentials", "expires", "revoked", "policy");

    /** 10 MiB: far above an LLM prompt or an API call, and what a body of undeclared length may hold in memory. */
    static final int DEFAULT_MAX_BODY_SIZE = 10 * 1024 * 1024;
    private static final Duration DEFAULT_STICKY_TTL = Duration.ofMinutes(5);
    private static final String DEFAULT_SCHEME = "https";
    /** Extra attempts on another node when a route says nothing: one, so that a node dying mid-request costs an agent nothing. */
    private static final int DEFAULT_RETRY = 1;
    private static final int DEFAULT_WEIGHT = 100;
    private static final String DEFAULT_REGION = "default";
    private static final String DEFAULT_HEADER = "Authorization";
    private static final ValueParser<Integer> COUNT = ValueParser.integer(0, 1_000_000);

    private EgressTables()
    {
    }

    /**
     * {@code egress.routes}, first match first.
     *
     * @param timeout     a route's {@code timeout} when it sets none ({@code egress.timeout})
     * @param idleTimeout a route's {@code idle_timeout} when it sets none ({@code egress.first-byte-timeout})
     * @param scan        a route's {@code scan} when it sets none ({@code egress.scan.mode})
     */
    static List<Route> routes(List<Map<?, ?>> entries, Duration timeout, Duration idleTimeout, ScanMode scan)
    {
        List<Route> routes = new ArrayList<>();
        for (Map<?, ?> raw : entries)
        {
            ConfigTable entry = ConfigTable.of(raw, ConfigKeys.EGRESS_ROUTES.name() + "[" + routes.size() + "]", "a route", ROUTE_KEYS);
            ConfigTable match = entry.table("match", "{domains: [...], task_type: ...}", MATCH_KEYS);
            List<String> domains = lowerCase(match.items("domains"));
            if (domains.isEmpty())
                throw new IllegalArgumentException(match.at("domains") + ": missing (expected: a list of host names, *.globs or *)");
            String pool = entry.required("upstream", "a pool name");
            String scheme = entry.text("scheme", DEFAULT_SCHEME).toLowerCase(Locale.ROOT);
            if (!scheme.equals("https") && !scheme.equals("http"))
                throw new IllegalArgumentException(entry.at("scheme") + ": " + scheme + " (expected: https or http)");
            routes.add(RecordBuilder.of(Route.class)
                .set("domains", domains)
                .set("taskType", match.text("task_type"))
                .set("pool", pool)
                .set("timeout", entry.get("timeout", ValueParser.duration(), timeout))
                .set("idleTimeout", entry.get("idle_timeout", ValueParser.duration(), idleTimeout))
                .set("retry", entry.get("retry", COUNT, DEFAULT_RETRY))
                .set("retryNonIdempotent", entry.get("retry_non_idempotent", ValueParser.bool(), false))
                .set("sticky", entry.get("sticky_session", ValueParser.bool(), false))
                .set("stickyTtl", entry.get("sticky_ttl", ValueParser.duration(), DEFAULT_STICKY_TTL))
                .set("scheme", scheme)
                .set("credential", entry.text("credential"))
                .set("scan", entry.get("scan", ValueParser.oneOf(ScanMode.class), scan))
                .set("scanResponses", entry.get("scan_responses", ValueParser.bool(), false))
                .set("maxBodySize", entry.get("max_body_size", ValueParser.integer(0, Integer.MAX_VALUE), DEFAULT_MAX_BODY_SIZE))
                .set("inspect", entry.get("inspect", ValueParser.bool(), false))
                .build());
        }
        return routes;
    }

    /** {@code egress.pools}, by name; node ids are unique across all pools. */
    static Map<String, Pool> pools(Map<String, ?> entries)
    {
        Map<String, Pool> pools = new LinkedHashMap<>();
        Set<String> ids = new HashSet<>();
        entries.forEach((name, value) ->
        {
            ConfigTable pool = ConfigTable.of(value, ConfigKeys.EGRESS_POOLS.name() + "." + name, "{region: ..., nodes: [...]}", POOL_KEYS);
            Optional<String> region = pool.text("region");
            List<Node> nodes = new ArrayList<>();
            for (Object item : pool.items("nodes"))
                nodes.add(node(ConfigTable.of(item, pool.at("nodes"), "{id, address, region, weight} entries", NODE_KEYS), region, ids));
            if (nodes.isEmpty())
                throw new IllegalArgumentException(pool.at("nodes") + ": empty (expected: at least one node)");
            pools.put(name, new Pool(name, region.orElse(nodes.get(0).region()), nodes));
        });
        return pools;
    }

    /** A node's region defaults to its pool's. */
    private static Node node(ConfigTable node, Optional<String> poolRegion, Set<String> ids)
    {
        Object id = node.raw("id");
        Object address = node.raw("address");
        if (id == null || address == null || !address.toString().matches("[A-Za-z0-9.-]+:\\d{1,5}"))
            throw new IllegalArgumentException(node.where() + ": " + node + " (expected: id and address host:port)");
        if (!ids.add(id.toString()))
            throw new IllegalArgumentException(node.where() + ": id " + id + " appears twice (expected: unique node ids)");
        String[] hostPort = address.toString().split(":");
        String region = node.text("region").or(() -> poolRegion).orElse(DEFAULT_REGION);
        int weight = node.named(node.at(id.toString())).get("weight", COUNT, DEFAULT_WEIGHT);
        return new Node(id.toString(), hostPort[0], Integer.parseInt(hostPort[1]), region, weight);
    }

    /** {@code egress.credentials}, by name. */
    static Map<String, Credential> credentials(Map<String, ?> entries)
    {
        Map<String, Credential> credentials = new LinkedHashMap<>();
        entries.forEach((name, value) ->
        {
            ConfigTable entry = ConfigTable.of(value, ConfigKeys.EGRESS_CREDENTIALS.name() + "." + name,
                "{secret, hosts, header, format} or {secret, hosts, query}", CREDENTIAL_KEYS);
            List<String> hosts = lowerCase(entry.items("hosts"));
            if (hosts.isEmpty() || hosts.contains("*"))
                throw new IllegalArgumentException(entry.at("hosts") + ": " + hosts + " (expected: the host names the key may be sent to, no *)");
            String header = entry.text("header", DEFAULT_HEADER);
            // Authorization carries a scheme before the key; provider-specific headers carry the bare key.
            String format = entry.text("format", header.equalsIgnoreCase(DEFAULT_HEADER) ? "Bearer {secret}" : "{secret}");
            if (!format.contains("{secret}"))
                throw new IllegalArgumentException(entry.at("format") + ": " + format + " (expected: a template containing {secret})");
            String secret = entry.text("secret", name);
            credentials.put(name, new Credential(name, secret, hosts, header, format, entry.text("query")));
        });
        return credentials;
    }

    /** {@code egress.agents}; an agent's token is the secret {@code {id}-token} unless named. */
    static List<Agent> agents(List<Map<?, ?>> entries)
    {
        List<Agent> agents = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (Map<?, ?> raw : entries)
        {
            ConfigTable entry = ConfigTable.of(raw, ConfigKeys.EGRESS_AGENTS.name() + "[" + agents.size() + "]", "an agent", AGENT_KEYS);
            Object id = entry.raw("id");
            if (id == null || !ids.add(id.toString()))
                throw new IllegalArgumentException(entry.at("id") + ": " + id + " (expected: a unique agent id)");
            String token = entry.text("token", id + "-token");
            Set<String> credentials = new HashSet<>();
            entry.items("credentials").forEach(c -> credentials.add(c.toString()));
            agents.add(new Agent(id.toString(), token, credentials, entry.optional("expires", ValueParser.instant()),
                entry.get("revoked", ValueParser.bool(), false),
                entry.raw("policy") == null ? AgentPolicy.NONE : AgentPolicy.parse(entry.raw("policy"), entry.at("policy"))));
        }
        return agents;
    }

    private static List<String> lowerCase(List<?> items)
    {
        List<String> lower = new ArrayList<>();
        items.forEach(item -> lower.add(item.toString().toLowerCase(Locale.ROOT)));
        return lower;
    }
}
