package io.sandgate.config;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.sandgate.core.Secret;
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
 * @param nodeErrorHeaders headers (a name, or {@code Name: value-prefix}) marking a node's own error page on plain http
 * @param trustStore a PKCS12 trust store for HTTPS targets instead of the JVM's CAs
 * @param trustStorePassword its password
 * @param maxConnectionsPerNode connection pool size towards each node (per target)
 * @param forwardProxyPort embedded runner's forward-proxy port, if any
 * @param connectPorts target ports that CONNECT tunnels (and so https targets) may reach
 * @param credentials internal tokens, real keys and where they come from
 * @param ssrfAllow addresses a target may resolve to despite the SSRF guard
 * @param dnsTimeout longest wait for the addresses of a target's name
 * @param dnsMaxInFlight target names resolved at once; more are refused
 * @param inspect TLS interception of CONNECT tunnels on routes that ask for it
 */
public record EgressConfig(List<Route> routes, Map<String, Pool> pools, Health health, Duration connectTimeout,
                           Duration firstByteTimeout, double retryBudget, Duration retryBackoff, List<String> nodeErrorHeaders,
                           @Setting("egress.tls.trust-store") Optional<String> trustStore,
                           @Setting("egress.tls.trust-store-password") Optional<Secret> trustStorePassword, int maxConnectionsPerNode,
                           Optional<Integer> forwardProxyPort, Set<Integer> connectPorts, CredentialsConfig credentials, @Setting("egress.ssrf.allow") List<Cidr> ssrfAllow,
                           Duration dnsTimeout, int dnsMaxInFlight, Inspect inspect)
{
    /**
     * TLS interception of CONNECT tunnels ({@code inspect: true} on a route).
     *
     * @param ca the secret holding the CA's PEM certificate and key; absent, one is generated and shared through the store
     * @param passthrough domain globs whose tunnels stay blind whatever their route says
     */
    public record Inspect(Optional<String> ca, List<String> passthrough)
    {
        public Inspect
        {
            passthrough = passthrough.stream().map(domain -> domain.toLowerCase(java.util.Locale.ROOT)).toList();
        }

        /** Whether the host's tunnels stay blind. */
        public boolean passesThrough(String host)
        {
            return DomainGlobs.matches(passthrough, host, true);
        }
    }

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
     * @param retry extra attempts allowed (1 by default): any request whose tunnel did not open, idempotent ones
     *              (or all, with retryNonIdempotent) after a dropped connection
     * @param retryNonIdempotent whether POST and friends may be retried too
     * @param sticky whether the same agent session keeps its node
     * @param stickyTtl how long an idle pin lasts (sliding)
     * @param scheme towards the target: https (default) or http
     * @param credential name of the credential injected in place of the agent's internal token
     * @param scan what the leak scanner does with request bodies
     * @param scanResponses whether response bodies are scanned too
     * @param maxBodySize the largest request body, in bytes, sent on (413 above)
     * @param inspect whether its CONNECT tunnels are opened and their requests served as base-URL ones
     */
    public record Route(List<String> domains, Optional<String> taskType, String pool, Duration timeout, Duration idleTimeout, int retry,
                        boolean retryNonIdempotent, boolean sticky, Duration stickyTtl, String scheme, Optional<String> credential,
                        ScanMode scan, boolean scanResponses, int maxBodySize, boolean inspect)
    {
        public Route
        {
            domains = List.copyOf(domains);
            if (maxBodySize < 0)
                throw new IllegalArgumentException("max_body_size: " + maxBodySize + " (expected: bytes, 0 or more)");
        }

        /** Whether this route serves the host (lower case, no port) for this task type. */
        public boolean matches(String host, String agentTaskType)
        {
            if (taskType.isPresent() && !taskType.get().equalsIgnoreCase(agentTaskType))
                return false;
            return DomainGlobs.matches(domains, host, true);
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
        connectPorts = Set.copyOf(connectPorts);
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
    }
}
