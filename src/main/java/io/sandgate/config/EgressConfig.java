package io.sandgate.config;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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

        /** A builder that names every value. */
        public static Builder builder()
        {
            return new Builder();
        }

        /** Names every value of a {@link Route}; the record checks them all when it is built. */
        public static final class Builder
        {
            private List<String> domains = List.of();
            private Optional<String> taskType = Optional.empty();
            private String pool;
            private Duration timeout;
            private Duration idleTimeout;
            private int retry;
            private boolean retryNonIdempotent;
            private boolean sticky;
            private Duration stickyTtl;
            private String scheme;
            private Optional<String> credential = Optional.empty();
            private ScanMode scan;
            private boolean scanResponses;

            private Builder()
            {
            }

            public Builder domains(List<String> domains)
            {
                this.domains = domains;
                return this;
            }

            public Builder taskType(Optional<String> taskType)
            {
                this.taskType = taskType;
                return this;
            }

            public Builder pool(String pool)
            {
                this.pool = pool;
                return this;
            }

            public Builder timeout(Duration timeout)
            {
                this.timeout = timeout;
                return this;
            }

            public Builder idleTimeout(Duration idleTimeout)
            {
                this.idleTimeout = idleTimeout;
                return this;
            }

            public Builder retry(int retry)
            {
                this.retry = retry;
                return this;
            }

            public Builder retryNonIdempotent(boolean retryNonIdempotent)
            {
                this.retryNonIdempotent = retryNonIdempotent;
                return this;
            }

            public Builder sticky(boolean sticky)
            {
                this.sticky = sticky;
                return this;
            }

            public Builder stickyTtl(Duration stickyTtl)
            {
                this.stickyTtl = stickyTtl;
                return this;
            }

            public Builder scheme(String scheme)
            {
                this.scheme = scheme;
                return this;
            }

            public Builder credential(Optional<String> credential)
            {
                this.credential = credential;
                return this;
            }

            public Builder scan(ScanMode scan)
            {
                this.scan = scan;
                return this;
            }

            public Builder scanResponses(boolean scanResponses)
            {
                this.scanResponses = scanResponses;
                return this;
            }

            public Route build()
            {
                return new Route(domains, taskType, pool, timeout, idleTimeout, retry, retryNonIdempotent, sticky, stickyTtl,
                    scheme, credential, scan, scanResponses);
            }
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

        /** A builder that names every value. */
        public static Builder builder()
        {
            return new Builder();
        }

        /** Names every value of a {@link Health}; the record checks them all when it is built. */
        public static final class Builder
        {
            private Duration tcpInterval;
            private Duration tcpTimeout;
            private int tcpFailures;
            private Duration httpInterval;
            private Optional<String> httpUrl = Optional.empty();
            private Duration slowTls;
            private int latencyWindow;
            private Duration jitterDownWeight;
            private Duration jitterEject;
            private int passiveFailures;
            private Duration passiveEjectionTime;
            private List<Integer> recoverySteps = List.of();
            private Duration recoveryStepInterval;
            private double regionEjectedShare;
            private double regionMinSuccess;

            private Builder()
            {
            }

            public Builder tcpInterval(Duration tcpInterval)
            {
                this.tcpInterval = tcpInterval;
                return this;
            }

            public Builder tcpTimeout(Duration tcpTimeout)
            {
                this.tcpTimeout = tcpTimeout;
                return this;
            }

            public Builder tcpFailures(int tcpFailures)
            {
                this.tcpFailures = tcpFailures;
                return this;
            }

            public Builder httpInterval(Duration httpInterval)
            {
                this.httpInterval = httpInterval;
                return this;
            }

            public Builder httpUrl(Optional<String> httpUrl)
            {
                this.httpUrl = httpUrl;
                return this;
            }

            public Builder slowTls(Duration slowTls)
            {
                this.slowTls = slowTls;
                return this;
            }

            public Builder latencyWindow(int latencyWindow)
            {
                this.latencyWindow = latencyWindow;
                return this;
            }

            public Builder jitterDownWeight(Duration jitterDownWeight)
            {
                this.jitterDownWeight = jitterDownWeight;
                return this;
            }

            public Builder jitterEject(Duration jitterEject)
            {
                this.jitterEject = jitterEject;
                return this;
            }

            public Builder passiveFailures(int passiveFailures)
            {
                this.passiveFailures = passiveFailures;
                return this;
            }

            public Builder passiveEjectionTime(Duration passiveEjectionTime)
            {
                this.passiveEjectionTime = passiveEjectionTime;
                return this;
            }

            public Builder recoverySteps(List<Integer> recoverySteps)
            {
                this.recoverySteps = recoverySteps;
                return this;
            }

            public Builder recoveryStepInterval(Duration recoveryStepInterval)
            {
                this.recoveryStepInterval = recoveryStepInterval;
                return this;
            }

            public Builder regionEjectedShare(double regionEjectedShare)
            {
                this.regionEjectedShare = regionEjectedShare;
                return this;
            }

            public Builder regionMinSuccess(double regionMinSuccess)
            {
                this.regionMinSuccess = regionMinSuccess;
                return this;
            }

            public Health build()
            {
                return new Health(tcpInterval, tcpTimeout, tcpFailures, httpInterval, httpUrl, slowTls, latencyWindow,
                    jitterDownWeight, jitterEject, passiveFailures, passiveEjectionTime, recoverySteps,
                    recoveryStepInterval, regionEjectedShare, regionMinSuccess);
            }
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

    /** A builder that names every value. */
    public static Builder builder()
    {
        return new Builder();
    }

    /** Names every value of an {@link EgressConfig}; the record checks them all when it is built. */
    public static final class Builder
    {
        private List<Route> routes = List.of();
        private Map<String, Pool> pools = Map.of();
        private Health health;
        private Duration connectTimeout;
        private Duration firstByteTimeout;
        private double retryBudget;
        private Duration retryBackoff;
        private List<String> nodeErrorHeaders = List.of();
        private Optional<String> trustStore = Optional.empty();
        private Optional<Secret> trustStorePassword = Optional.empty();
        private int maxConnectionsPerNode;
        private Optional<Integer> forwardProxyPort = Optional.empty();
        private CredentialsConfig credentials;
        private List<Cidr> ssrfAllow = List.of();

        private Builder()
        {
        }

        public Builder routes(List<Route> routes)
        {
            this.routes = routes;
            return this;
        }

        public Builder pools(Map<String, Pool> pools)
        {
            this.pools = pools;
            return this;
        }

        public Builder health(Health health)
        {
            this.health = health;
            return this;
        }

        public Builder connectTimeout(Duration connectTimeout)
        {
            this.connectTimeout = connectTimeout;
            return this;
        }

        public Builder firstByteTimeout(Duration firstByteTimeout)
        {
            this.firstByteTimeout = firstByteTimeout;
            return this;
        }

        public Builder retryBudget(double retryBudget)
        {
            this.retryBudget = retryBudget;
            return this;
        }

        public Builder retryBackoff(Duration retryBackoff)
        {
            this.retryBackoff = retryBackoff;
            return this;
        }

        public Builder nodeErrorHeaders(List<String> nodeErrorHeaders)
        {
            this.nodeErrorHeaders = nodeErrorHeaders;
            return this;
        }

        public Builder trustStore(Optional<String> trustStore)
        {
            this.trustStore = trustStore;
            return this;
        }

        public Builder trustStorePassword(Optional<Secret> trustStorePassword)
        {
            this.trustStorePassword = trustStorePassword;
            return this;
        }

        public Builder maxConnectionsPerNode(int maxConnectionsPerNode)
        {
            this.maxConnectionsPerNode = maxConnectionsPerNode;
            return this;
        }

        public Builder forwardProxyPort(Optional<Integer> forwardProxyPort)
        {
            this.forwardProxyPort = forwardProxyPort;
            return this;
        }

        public Builder credentials(CredentialsConfig credentials)
        {
            this.credentials = credentials;
            return this;
        }

        public Builder ssrfAllow(List<Cidr> ssrfAllow)
        {
            this.ssrfAllow = ssrfAllow;
            return this;
        }

        public EgressConfig build()
        {
            return new EgressConfig(routes, pools, health, connectTimeout, firstByteTimeout, retryBudget, retryBackoff,
                nodeErrorHeaders, trustStore, trustStorePassword, maxConnectionsPerNode, forwardProxyPort,
                credentials, ssrfAllow);
        }
    }
}
