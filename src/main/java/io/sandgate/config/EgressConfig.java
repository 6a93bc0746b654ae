package io.sandgate.config;

import io.sandgate.core.Secret;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.sandgate.net.Cidr;

/**
 * The egress face: which outbound calls go through which pool of egress nodes, and how nodes are
 * judged. Times are {@link Duration}s, every number here is a default of the contract and can be
 * changed.
 *
 * @param routes first match wins
 * @param pools by name
 * @param health probes, ejection and recovery
 * @param connectTimeout towards a node
 * @param firstByteTimeout silence allowed before the first response byte (and between bytes)
 * @param retryBudget retries allowed as a share of requests, so failures cannot snowball
 * @param retryBackoff first back-off; doubles per attempt, with full jitter
 * @param nodeErrorHeaders response headers by which a node marks a 5xx as its own (RFC 9209 Proxy-Status...)
 * @param trustStore a PKCS12 trust store for HTTPS targets instead of the JVM's CAs
 * @param trustStorePassword its password
 * @param maxConnectionsPerNode connection pool size towards each node (per target)
 * @param forwardProxyPort embedded runner's forward-proxy port, if any
 * @param credentials internal tokens, real keys and where they come from
 * @param ssrfAllow addresses a target may resolve to despite the SSRF guard
 */
public record EgressConfig(List<Route> routes, Map<String, Pool> pools, Health health, Duration connectTimeout,
                           Duration firstByteTimeout, double retryBudget, Duration retryBackoff, List<String> nodeErrorHeaders,
                           Optional<String> trustStore, Optional<Secret> trustStorePassword, int maxConnectionsPerNode,
                           Optional<Integer> forwardProxyPort, CredentialsConfig credentials, List<Cidr> ssrfAllow)
{
    /** What the secret-leak scanner does on a route: nothing, count, replace the match, or refuse the request (422). */
    public enum ScanMode
    {
        OFF, REPORT, REDACT, BLOCK
    }

    /**
     * One route of the table.
     *
     * @param domains exact host names, {@code *.example.com} (any subdomain) or {@code *}
     * @param taskType the {@code X-Agent-Task-Type} it applies to, or any
     * @param pool the pool of egress nodes
     * @param timeout total time for one exchange, retries included
     * @param idleTimeout longest silence before the first byte and between bytes (longer for LLM streams)
     * @param retry extra attempts allowed (idempotent requests only unless retryNonIdempotent)
     * @param retryNonIdempotent whether POST and friends may be retried too
     * @param sticky whether the same agent session keeps its node
     * @param stickyTtl how long an idle pin lasts (sliding)
     * @param scheme towards the target: https (default) or http
     * @param credential name of the credential injected in place of the agent's internal token
     * @param scan what the leak scanner does with request bodies
     * @param scanResponses whether response bodies are scanned too
     */
    public record Route(List<String> domains, Optional<String> taskType, String pool, Duration timeout, Duration idleTimeout, int retry,
                        boolean retryNonIdempotent, boolean sticky, Duration stickyTtl, String scheme, Optional<String> credential,
                        ScanMode scan, boolean scanResponses)
    {
        public Route
        {
            domains = List.copyOf(domains);
        }

        /** Whether this route serves the host (lower case, no port) for this task type. */
        public boolean matches(String host, String agentTaskType)
        {
            if (taskType.isPresent() && !taskType.get().equalsIgnoreCase(agentTaskType))
                return false;
            for (String domain : domains)
            {
                if (domain.equals("*") || domain.equals(host))
                    return true;
                if (domain.startsWith("*.") && host.endsWith(domain.substring(1)))
                    return true;
            }
            return false;
        }
    }

    /**
     * @param name pool name
     * @param region preferred region
     * @param nodes its egress nodes
     */
    public record Pool(String name, String region, List<Node> nodes)
    {
        public Pool
        {
            nodes = List.copyOf(nodes);
        }
    }

    /**
     * @param id unique id
     * @param host forward proxy host
     * @param port forward proxy port
     * @param region where it is
     * @param weight share of traffic among healthy peers
     */
    public record Node(String id, String host, int port, String region, int weight)
    {
    }

    /**
     * @param tcpInterval TCP probe period
     * @param tcpTimeout TCP probe timeout
     * @param tcpFailures consecutive TCP failures that eject
     * @param httpInterval HTTP probe period (through the node)
     * @param httpUrl URL the HTTP probe fetches through each node; empty: no HTTP probe
     * @param slowTls an HTTP probe slower than this halves the weight
     * @param latencyWindow probe latencies kept for the jitter check
     * @param jitterDownWeight standard deviation above which the weight drops 30 %
     * @param jitterEject standard deviation above which the node is ejected
     * @param passiveFailures consecutive request failures that eject
 * @param passiveEjectionTime how long a node ejected for failing requests stays out before its probes may bring it back
     * @param recoverySteps share of its weight a recovered node takes, step by step
     * @param recoveryStepInterval time per recovery step
     * @param regionEjectedShare a region with more of its nodes ejected fails over
     * @param regionMinSuccess a region whose recent success rate is lower fails over
     */
    public record Health(Duration tcpInterval, Duration tcpTimeout, int tcpFailures, Duration httpInterval, Optional<String> httpUrl,
                         Duration slowTls, int latencyWindow, Duration jitterDownWeight, Duration jitterEject, int passiveFailures,
                         Duration passiveEjectionTime, List<Integer> recoverySteps, Duration recoveryStepInterval, double regionEjectedShare, double regionMinSuccess)
    {
        public Health
        {
            recoverySteps = List.copyOf(recoverySteps);
            if (recoverySteps.isEmpty() || recoverySteps.get(recoverySteps.size() - 1) != 100)
                throw new IllegalArgumentException(ConfigKeys.EGRESS_RECOVERY_STEPS.name() + ": " + recoverySteps + " (expected: rising percentages ending in 100)");
        }
    }

    public EgressConfig
    {
        routes = List.copyOf(routes);
        pools = Map.copyOf(pools);
        nodeErrorHeaders = List.copyOf(nodeErrorHeaders);
        ssrfAllow = List.copyOf(ssrfAllow);
        for (Route route : routes)
        {
            if (!pools.containsKey(route.pool()))
                throw new IllegalArgumentException(ConfigKeys.EGRESS_ROUTES.name() + ": upstream " + route.pool() + " (expected: one of the pools " + pools.keySet() + ")");
            if (route.credential().isPresent() && !route.scheme().equals("https"))
                throw new IllegalArgumentException(ConfigKeys.EGRESS_ROUTES.name() + ": credential " + route.credential().get()
                    + " on a route with scheme " + route.scheme() + " (expected: https, so that the real key is never sent in clear)");
            if (route.credential().isPresent() && !credentials.credentials().containsKey(route.credential().get()))
                throw new IllegalArgumentException(ConfigKeys.EGRESS_ROUTES.name() + ": credential " + route.credential().get()
                    + " (expected: one of " + ConfigKeys.EGRESS_CREDENTIALS.name() + " " + credentials.credentials().keySet() + ")");
        }
        if (retryBudget < 0 || retryBudget > 1)
            throw new IllegalArgumentException(ConfigKeys.EGRESS_RETRY_BUDGET.name() + ": " + retryBudget + " (expected: 0 to 1)");
    }

    /** Parses {@code egress.routes}. */
    static List<Route> parseRoutes(List<Map<?, ?>> entries, Duration defaultTimeout, Duration defaultIdleTimeout, ScanMode defaultScan)
    {
        List<Route> routes = new ArrayList<>();
        for (Map<?, ?> entry : entries)
        {
            String where = ConfigKeys.EGRESS_ROUTES.name() + "[" + routes.size() + "]";
            known(entry, where, Set.of("match", "upstream", "timeout", "idle_timeout", "retry", "retry_non_idempotent", "sticky_session", "sticky_ttl", "scheme", "credential", "scan", "scan_responses"));
            if (!(entry.get("match") instanceof Map<?, ?> match))
                throw new IllegalArgumentException(where + ": match (expected: {domains: [...], task_type: ...})");
            known(match, where + ".match", Set.of("domains", "task_type"));
            List<String> domains = new ArrayList<>();
            if (match.get("domains") instanceof List<?> list)
                list.forEach(d -> domains.add(d.toString().toLowerCase(Locale.ROOT)));
            if (domains.isEmpty())
                throw new IllegalArgumentException(where + ".match.domains: missing (expected: a list of host names, *.globs or *)");
            Object pool = entry.get("upstream");
            if (pool == null)
                throw new IllegalArgumentException(where + ".upstream: missing (expected: a pool name)");
            String scheme = entry.get("scheme") == null ? "https" : entry.get("scheme").toString().toLowerCase(Locale.ROOT);
            if (!scheme.equals("https") && !scheme.equals("http"))
                throw new IllegalArgumentException(where + ".scheme: " + scheme + " (expected: https or http)");
            routes.add(new Route(domains, Optional.ofNullable(match.get("task_type")).map(Object::toString), pool.toString(),
                duration(entry.get("timeout"), defaultTimeout, where + ".timeout"),
                duration(entry.get("idle_timeout"), defaultIdleTimeout, where + ".idle_timeout"),
                integer(entry.get("retry"), 0, where + ".retry"),
                bool(entry.get("retry_non_idempotent"), where + ".retry_non_idempotent"),
                bool(entry.get("sticky_session"), where + ".sticky_session"),
                duration(entry.get("sticky_ttl"), Duration.ofMinutes(5), where + ".sticky_ttl"),
                scheme, Optional.ofNullable(entry.get("credential")).map(Object::toString),
                scanMode(entry.get("scan"), defaultScan, where + ".scan"), bool(entry.get("scan_responses"), where + ".scan_responses")));
        }
        return routes;
    }

    /** Parses {@code egress.pools}. */
    static Map<String, Pool> parsePools(Map<String, ?> entries)
    {
        Map<String, Pool> pools = new LinkedHashMap<>();
        Set<String> ids = new HashSet<>();
        entries.forEach((name, value) ->
        {
            String where = ConfigKeys.EGRESS_POOLS.name() + "." + name;
            if (!(value instanceof Map<?, ?> pool))
                throw new IllegalArgumentException(where + " (expected: {region: ..., nodes: [...]})");
            known(pool, where, Set.of("region", "nodes"));
            List<Node> nodes = new ArrayList<>();
            if (pool.get("nodes") instanceof List<?> list)
            {
                for (Object item : list)
                {
                    if (!(item instanceof Map<?, ?> node))
                        throw new IllegalArgumentException(where + ".nodes (expected: {id, address, region, weight} entries)");
                    known(node, where + ".nodes", Set.of("id", "address", "region", "weight"));
                    Object id = node.get("id");
                    Object address = node.get("address");
                    if (id == null || address == null || !address.toString().matches("[A-Za-z0-9.-]+:\\d{1,5}"))
                        throw new IllegalArgumentException(where + ".nodes: " + node + " (expected: id and address host:port)");
                    if (!ids.add(id.toString()))
                        throw new IllegalArgumentException(where + ".nodes: id " + id + " appears twice (expected: unique node ids)");
                    String[] hostPort = address.toString().split(":");
                    Object region = node.get("region") == null ? pool.get("region") : node.get("region");
                    nodes.add(new Node(id.toString(), hostPort[0], Integer.parseInt(hostPort[1]), region == null ? "default" : region.toString(),
                        integer(node.get("weight"), 100, where + ".nodes." + id + ".weight")));
                }
            }
            if (nodes.isEmpty())
                throw new IllegalArgumentException(where + ".nodes: empty (expected: at least one node)");
            pools.put(name, new Pool(name, pool.get("region") == null ? nodes.get(0).region() : pool.get("region").toString(), nodes));
        });
        return pools;
    }

    static void known(Map<?, ?> map, String where, Set<String> keys)
    {
        for (Object key : map.keySet())
        {
            if (!keys.contains(key.toString()))
                throw new IllegalArgumentException(where + ": unknown key " + key + " (expected: " + String.join(", ", new java.util.TreeSet<>(keys)) + ")");
        }
    }

    private static ScanMode scanMode(Object value, ScanMode fallback, String where)
    {
        try
        {
            return value == null ? fallback : ValueParser.oneOf(ScanMode.class).parse(value);
        }
        catch (IllegalArgumentException x)
        {
            throw new IllegalArgumentException(where + ": " + value + " (expected: " + x.getMessage() + ")");
        }
    }

    private static Duration duration(Object value, Duration fallback, String where)
    {
        try
        {
            return value == null ? fallback : ValueParser.duration().parse(value);
        }
        catch (IllegalArgumentException x)
        {
            throw new IllegalArgumentException(where + ": " + value + " (expected: " + x.getMessage() + ")");
        }
    }

    private static int integer(Object value, int fallback, String where)
    {
        try
        {
            return value == null ? fallback : ValueParser.integer(0, 1_000_000).parse(value);
        }
        catch (IllegalArgumentException x)
        {
            throw new IllegalArgumentException(where + ": " + value + " (expected: " + x.getMessage() + ")");
        }
    }

    private static boolean bool(Object value, String where)
    {
        try
        {
            return value != null && ValueParser.bool().parse(value);
        }
        catch (IllegalArgumentException x)
        {
            throw new IllegalArgumentException(where + ": " + value + " (expected: true or false)");
        }
    }
}
