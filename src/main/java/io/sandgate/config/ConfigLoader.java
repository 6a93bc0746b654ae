package io.sandgate.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import io.sandgate.core.Secret;
import io.sandgate.leak.Redactor;
import io.sandgate.net.Cidr;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * Reads the configuration from its four sources and validates it whole. Precedence, highest first:
 * system property {@code sandgate.<key>}, environment variable {@code SANDGATE_<KEY>}, servlet
 * context-param {@code sandgate.<key>}, the YAML file, the default. Unknown keys in any source and
 * unparsable values stop start-up with one message per problem.
 */
public final class ConfigLoader
{
    private static final Redactor REDACT = Redactor.defaults();

    private static final String PREFIX = "sandgate.";

    private final Map<String, Object> raw = new HashMap<>();
    /** Each key's parsed value; a key whose value does not parse holds its default, so that the records still check the rest. */
    private final Map<String, Object> parsed = new HashMap<>();
    private final Map<String, String> origin = new HashMap<>();
    /** The {@code SANDGATE_SECRET_*} variables: values for the {@code env} secret source, not settings. */
    private final Map<String, Secret> secretVariables = new HashMap<>();
    private final List<String> problems = new ArrayList<>();

    private ConfigLoader()
    {
    }

    /**
     * @param contextParams servlet context-params (all of them; only {@code sandgate.*} are read)
     * @param systemProperties system properties (only {@code sandgate.*} are read)
     * @param environment environment variables (only {@code SANDGATE_*} are read)
     */
    public static SandgateConfig load(Map<String, String> contextParams, Map<String, String> systemProperties, Map<String, String> environment)
    {
        ConfigLoader loader = new ConfigLoader();
        String path = firstNonNull(
            systemProperties.get(ConfigKeys.CONFIG.propertyName()),
            environment.get(ConfigKeys.CONFIG.envName()),
            contextParams.get(ConfigKeys.CONFIG.propertyName()));
        String source = loader.readYaml(path == null ? ConfigKeys.CONFIG.defaultValue() : path, path != null);
        loader.overlay(contextParams, "context-param");
        loader.overlayEnvironment(environment);
        loader.overlay(systemProperties, "system property");
        return loader.build(source);
    }

    /** The process's own system properties and environment, no context-params: the embedded runner. */
    public static SandgateConfig loadEmbedded()
    {
        Map<String, String> properties = new HashMap<>();
        System.getProperties().forEach((k, v) -> properties.put(k.toString(), v.toString()));
        return load(Map.of(), properties, System.getenv());
    }

    /** Builds a configuration from dotted keys and raw values only, as tests and tools need. */
    public static SandgateConfig fromValues(Map<String, ?> values)
    {
        return fromValues(values, Map.of());
    }

    /**
     * Builds a configuration from dotted keys and raw values, with environment variables read as
     * start-up reads the process's ({@code SANDGATE_*} settings above the values, and the
     * {@code env} secret source's {@code SANDGATE_SECRET_*} variables).
     */
    public static SandgateConfig fromValues(Map<String, ?> values, Map<String, String> environment)
    {
        ConfigLoader loader = new ConfigLoader();
        values.forEach((name, value) -> loader.put(name, value, "value"));
        loader.overlayEnvironment(environment);
        return loader.build("none");
    }

    private String readYaml(String path, boolean explicit)
    {
        Path file;
        try
        {
            file = Path.of(path);
        }
        catch (java.nio.file.InvalidPathException x)
        {
            problems.add(ConfigKeys.CONFIG.name() + ": '" + path + "' (expected: a file path)");
            return "none";
        }
        if (!Files.exists(file))
        {
            if (explicit)
                problems.add(ConfigKeys.CONFIG.name() + ": file " + path + " does not exist (expected: a readable YAML file)");
            return "none";
        }
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8))
        {
            Object document = new Yaml(new SafeConstructor(new LoaderOptions())).load(reader);
            if (document instanceof Map<?, ?> map)
                flatten("", map, path);
            else if (document != null)
                problems.add(path + ": top level is not a map (expected: keys such as server:, ingress:)");
        }
        catch (IOException | YAMLException x)
        {
            problems.add(path + ": cannot be read (" + x.getMessage().lines().findFirst().orElse("") + ")");
        }
        return path;
    }

    private void flatten(String parent, Map<?, ?> map, String file)
    {
        map.forEach((k, value) ->
        {
            String name = parent + k;
            ConfigKey<?> key = ConfigKeys.byName(name);
            // A key whose type is itself a map (static routes) stops the descent.
            if (value instanceof Map<?, ?> child && key == null)
                flatten(name + ".", child, file);
            else if (value != null)
                put(name, value, "YAML " + file);
        });
    }

    private void overlay(Map<String, String> values, String kind)
    {
        values.forEach((name, value) ->
        {
            if (name.startsWith(PREFIX))
                put(name.substring(PREFIX.length()), value, kind + " " + name);
        });
    }

    private void overlayEnvironment(Map<String, String> environment)
    {
        Map<String, String> byEnvName = new HashMap<>();
        for (ConfigKey<?> key : ConfigKeys.ALL)
            byEnvName.put(key.envName(), key.name());
        environment.forEach((name, value) ->
        {
            // Kubernetes injects SANDGATE_SERVICE_HOST, SANDGATE_PORT_8080_TCP... into every pod
            // when a Service is named sandgate: they are not settings.
            if (!name.startsWith("SANDGATE_") || name.startsWith("SANDGATE_SERVICE_") || name.startsWith("SANDGATE_PORT"))
                return;
            // Secrets of the env source; an empty one is how shells unset things by accident, so it is absent.
            if (name.startsWith(CredentialsConfig.SECRET_VARIABLE_PREFIX))
            {
                if (!value.isEmpty())
                    secretVariables.put(name, new Secret(value));
                return;
            }
            String dotted = byEnvName.get(name);
            if (dotted == null)
                problems.add("environment variable " + name + ": unknown setting (expected: SANDGATE_ followed by a key from the reference, e.g. SANDGATE_SERVER_PORT)");
            else
                put(dotted, value, "environment variable " + name);
        });
    }

    private void put(String name, Object value, String from)
    {
        if (ConfigKeys.byName(name) == null)
        {
            problems.add(name + ": unknown setting in " + from + suggestion(name));
            return;
        }
        raw.put(name, value);
        origin.put(name, from);
    }

    private static String suggestion(String name)
    {
        String best = null;
        int bestDistance = 4;
        for (ConfigKey<?> key : ConfigKeys.ALL)
        {
            int d = distance(name, key.name());
            if (d < bestDistance)
            {
                bestDistance = d;
                best = key.name();
            }
        }
        return best == null ? "" : " (did you mean " + best + "?)";
    }

    private static int distance(String a, String b)
    {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++)
            prev[j] = j;
        for (int i = 1; i <= a.length(); i++)
        {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++)
                cur[j] = Math.min(Math.min(cur[j - 1], prev[j]) + 1, prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1));
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    /** The key's value, parsed by {@link #parseAll()}. */
    @SuppressWarnings("unchecked")
    private <T> T get(ConfigKey<T> key)
    {
        return (T) parsed.get(key.name());
    }

    /** Parses every key once, with its declared parser (type, range, shape); a problem names the key and its source. */
    private void parseAll()
    {
        for (ConfigKey<?> key : ConfigKeys.ALL)
        {
            Object value = raw.containsKey(key.name()) ? raw.get(key.name()) : key.defaultValue();
            try
            {
                parsed.put(key.name(), value == null ? null : key.parser().parse(value));
            }
            catch (IllegalArgumentException x)
            {
                String shown = key.secret() ? "" : " '" + value + "'";
                String from = origin.getOrDefault(key.name(), "default");
                problems.add(key.name() + ":" + shown + " from " + from + " (expected: " + x.getMessage() + ")");
                parsed.put(key.name(), key.defaultValue() == null ? null : key.parser().parse(key.defaultValue()));
            }
        }
    }

    private SandgateConfig build(String source)
    {
        parseAll();
        // Each record validates itself; try them all so that one attempt shows every problem.
        ServerConfig server = attempt(() -> new ServerConfig(get(ConfigKeys.SERVER_HOST), get(ConfigKeys.SERVER_PORT), optional(ConfigKeys.SERVER_INTERNAL_PORT),
            get(ConfigKeys.SERVER_MAX_THREADS), get(ConfigKeys.SERVER_STOP_TIMEOUT), get(ConfigKeys.SERVER_IDLE_TIMEOUT), get(ConfigKeys.SERVER_ROLE),
            new ServerConfig.Faces(get(ConfigKeys.INGRESS_ENABLED), get(ConfigKeys.MCP_ENABLED), get(ConfigKeys.EGRESS_ENABLED)),
            list(ConfigKeys.SERVER_PUBLIC_ORIGINS), get(ConfigKeys.SERVER_MAX_CONCURRENT_REQUESTS_PER_CLIENT),
            get(ConfigKeys.SERVER_MAX_CONNECTIONS_PER_CLIENT), optional(ConfigKeys.SERVER_MAX_CONNECTIONS), get(ConfigKeys.SERVER_HEAD_TIMEOUT),
            get(ConfigKeys.SERVER_CLIENT_IPV6_PREFIX),
            get(ConfigKeys.SERVER_INTERNAL_CLIENT_IPV6_PREFIX), get(ConfigKeys.SERVER_INGRESS_FRONT_END)));
        StoreConfig.Redis redis = attempt(this::redis);
        CookieConfig cookie = attempt(() -> new CookieConfig(get(ConfigKeys.COOKIE_NAME), optional(ConfigKeys.COOKIE_SECRET),
            get(ConfigKeys.COOKIE_TTL), get(ConfigKeys.COOKIE_SECURE), get(ConfigKeys.COOKIE_MAX_SANDBOXES)));
        List<Cidr> trusted = list(ConfigKeys.TRUSTED_PROXIES);
        IngressConfig.WebSocket webSocket = attempt(this::webSocket);
        IngressConfig ingress = attempt(() -> ingress(cookie, trusted, webSocket));
        List<McpConfig.Server> mcpServers = new ArrayList<>();
        for (Map<?, ?> entry : list(ConfigKeys.MCP_SERVERS))
        {
            McpConfig.Server parsed = attempt(() -> McpConfig.Server.parse(entry));
            if (parsed != null)
                mcpServers.add(parsed);
        }
        McpConfig mcp = attempt(() -> mcp(mcpServers));
        EgressConfig egress = attempt(this::egress);
        WatcherConfig watcher = attempt(this::watcher);
        TracingConfig tracing = attempt(this::tracing);
        HistoryConfig history = attempt(() -> new HistoryConfig(get(ConfigKeys.ADMIN_HISTORY_INTERVAL), get(ConfigKeys.ADMIN_HISTORY_SAMPLES)));
        if (!problems.isEmpty())
            throw new ConfigException(problems);
        return new SandgateConfig(source, server, new StoreConfig(get(ConfigKeys.STORE_TYPE), redis), ingress, mcp, egress, watcher,
            optional(ConfigKeys.ADMIN_TOKEN), history, get(ConfigKeys.ACCESS_LOG), get(ConfigKeys.LOG_FORMAT), tracing, effective());
    }

    /** Each key's value as text, with nothing secret in it. */
    private Map<String, String> effective()
    {
        Map<String, String> values = new java.util.TreeMap<>();
        for (ConfigKey<?> key : ConfigKeys.ALL)
        {
            Object value = get(key);
            // Secrets, user-info in URLs (redis://user:password@host) and anything shaped like a key
            // (pasted into a value that is not declared secret) are all shown as [REDACTED].
            if (value != null)
                values.put(key.name(), key.secret() ? Redactor.REDACTED : REDACT.text(value.toString().replaceAll("//[^@/\\s]*@", "//" + Redactor.REDACTED + "@")));
        }
        return values;
    }

    private StoreConfig.Redis redis()
    {
        return RecordBuilder.of(StoreConfig.Redis.class)
            .set("address", get(ConfigKeys.REDIS_ADDRESS))
            .set("clusterNodes", list(ConfigKeys.REDIS_CLUSTER_NODES))
            .set("sentinelNodes", list(ConfigKeys.REDIS_SENTINEL_NODES))
            .set("sentinelMaster", optional(ConfigKeys.REDIS_SENTINEL_MASTER))
            .set("username", optional(ConfigKeys.REDIS_USERNAME))
            .set("password", optional(ConfigKeys.REDIS_PASSWORD))
            .set("database", get(ConfigKeys.REDIS_DATABASE))
            .set("timeout", get(ConfigKeys.REDIS_TIMEOUT))
            .set("revalidateInterval", get(ConfigKeys.REDIS_REVALIDATE_INTERVAL))
            .set("pollInterval", get(ConfigKeys.REDIS_POLL_INTERVAL))
            // One key, two defaults: the route table must see a change within a second when it has
            // to poll; the sessions' poll is only a net, and slow unless asked otherwise.
            .set("sessionPollInterval", isSet(ConfigKeys.REDIS_POLL_INTERVAL) ? get(ConfigKeys.REDIS_POLL_INTERVAL)
                : StoreConfig.Redis.DEFAULT_SESSION_POLL_INTERVAL)
            .set("negativeCacheTtl", get(ConfigKeys.REDIS_NEGATIVE_CACHE_TTL))
            .build();
    }

    private IngressConfig.WebSocket webSocket()
    {
        return new IngressConfig.WebSocket(get(ConfigKeys.WS_PING_INTERVAL), get(ConfigKeys.WS_IDLE_TIMEOUT), get(ConfigKeys.WS_MAX_MESSAGE_SIZE),
            list(ConfigKeys.WS_ALLOWED_ORIGINS));
    }

    private IngressConfig ingress(CookieConfig cookie, List<Cidr> trustedProxies, IngressConfig.WebSocket webSocket)
    {
        Map<String, String> staticRoutes = get(ConfigKeys.INGRESS_STATIC_ROUTES);
        return RecordBuilder.of(IngressConfig.class)
            .set("prefix", get(ConfigKeys.INGRESS_PREFIX))
            .set("idPattern", get(ConfigKeys.INGRESS_ID_PATTERN))
            .set("idMaxLength", get(ConfigKeys.INGRESS_ID_MAX_LENGTH))
            .set("routesKey", get(ConfigKeys.INGRESS_ROUTES_KEY))
            .set("staticRoutes", staticRoutes == null ? Map.of() : staticRoutes)
            .set("header", get(ConfigKeys.INGRESS_HEADER))
            .set("cookie", cookie)
            .set("access", get(ConfigKeys.INGRESS_ACCESS))
            .set("grantParam", get(ConfigKeys.GRANT_PARAM))
            .set("sessionMaxAge", get(ConfigKeys.INGRESS_SESSION_MAX_AGE))
            .set("trustedProxies", trustedProxies)
            .set("idleTimeout", get(ConfigKeys.INGRESS_IDLE_TIMEOUT))
            .set("connectTimeout", get(ConfigKeys.INGRESS_CONNECT_TIMEOUT))
            .set("destinationIdleTimeout", get(ConfigKeys.INGRESS_DESTINATION_IDLE_TIMEOUT))
            .set("maxConnectionsPerSandbox", get(ConfigKeys.INGRESS_MAX_CONNECTIONS))
            .set("routeCacheSize", get(ConfigKeys.ROUTE_CACHE_SIZE))
            .set("routeMissesPerClientPerMinute", get(ConfigKeys.INGRESS_ROUTE_MISSES_PER_CLIENT))
            .set("webSocket", webSocket)
            .set("hostPattern", optional(ConfigKeys.INGRESS_HOST_PATTERN))
            .set("sandboxPorts", Set.copyOf(list(ConfigKeys.INGRESS_SANDBOX_PORTS)))
            .set("pathMode", get(ConfigKeys.INGRESS_PATH_MODE))
            .set("hostModeAllowedOrigins", list(ConfigKeys.INGRESS_HOST_MODE_ALLOWED_ORIGINS))
            .build();
    }

    private McpConfig mcp(List<McpConfig.Server> servers)
    {
        return RecordBuilder.of(McpConfig.class)
            .set("servers", servers)
            .set("keepalive", get(ConfigKeys.MCP_KEEPALIVE))
            .set("sessionTtl", get(ConfigKeys.MCP_SESSION_TTL))
            .set("replayBuffer", get(ConfigKeys.MCP_REPLAY_BUFFER))
            .set("replayBufferBytes", get(ConfigKeys.MCP_REPLAY_BUFFER_BYTES))
            .set("replayBufferBytesPerClient", get(ConfigKeys.MCP_REPLAY_BUFFER_BYTES_PER_CLIENT))
            .set("maxBodySize", get(ConfigKeys.MCP_MAX_BODY))
            .set("maxSessionsPerClient", get(ConfigKeys.MCP_MAX_SESSIONS_PER_CLIENT))
            .set("maxStreamsPerClient", get(ConfigKeys.MCP_MAX_STREAMS_PER_CLIENT))
            .set("allowedOrigins", list(ConfigKeys.MCP_ALLOWED_ORIGINS))
            .build();
    }

    private EgressConfig egress()
    {
        EgressConfig.Health health = health();
        CredentialsConfig credentials = credentials();
        List<Cidr> allow = list(ConfigKeys.EGRESS_SSRF_ALLOW);
        Map<String, ?> pools = get(ConfigKeys.EGRESS_POOLS);
        return RecordBuilder.of(EgressConfig.class)
            .set("routes", EgressTables.routes(list(ConfigKeys.EGRESS_ROUTES), get(ConfigKeys.EGRESS_TIMEOUT), get(ConfigKeys.EGRESS_FIRST_BYTE_TIMEOUT),
                get(ConfigKeys.EGRESS_SCAN_MODE)))
            .set("pools", EgressTables.pools(pools == null ? Map.of() : pools))
            .set("health", health)
            .set("connectTimeout", get(ConfigKeys.EGRESS_CONNECT_TIMEOUT))
            .set("firstByteTimeout", get(ConfigKeys.EGRESS_FIRST_BYTE_TIMEOUT))
            .set("retryBudget", get(ConfigKeys.EGRESS_RETRY_BUDGET))
            .set("retryBackoff", get(ConfigKeys.EGRESS_RETRY_BACKOFF))
            .set("nodeErrorHeaders", get(ConfigKeys.EGRESS_NODE_ERROR_HEADERS))
            .set("trustStore", optional(ConfigKeys.EGRESS_TRUST_STORE))
            .set("trustStorePassword", optional(ConfigKeys.EGRESS_TRUST_STORE_PASSWORD))
            .set("maxConnectionsPerNode", get(ConfigKeys.EGRESS_MAX_CONNECTIONS))
            .set("forwardProxyPort", optional(ConfigKeys.EGRESS_FORWARD_PROXY_PORT))
            .set("connectPorts", Set.copyOf(get(ConfigKeys.EGRESS_CONNECT_PORTS)))
            .set("credentials", credentials)
            .set("ssrfAllow", allow)
            .set("dnsTimeout", get(ConfigKeys.EGRESS_DNS_TIMEOUT))
            .set("dnsMaxInFlight", get(ConfigKeys.EGRESS_DNS_MAX_IN_FLIGHT))
            .build();
    }

    private EgressConfig.Health health()
    {
        List<Integer> steps = get(ConfigKeys.EGRESS_RECOVERY_STEPS);
        return RecordBuilder.of(EgressConfig.Health.class)
            .set("tcpInterval", get(ConfigKeys.EGRESS_TCP_INTERVAL))
            .set("tcpTimeout", get(ConfigKeys.EGRESS_TCP_TIMEOUT))
            .set("tcpFailures", get(ConfigKeys.EGRESS_TCP_FAILURES))
            .set("httpInterval", get(ConfigKeys.EGRESS_HTTP_INTERVAL))
            .set("httpUrl", optional(ConfigKeys.EGRESS_HTTP_URL))
            .set("slowTls", get(ConfigKeys.EGRESS_SLOW_TLS))
            .set("latencyWindow", get(ConfigKeys.EGRESS_LATENCY_WINDOW))
            .set("jitterDownWeight", get(ConfigKeys.EGRESS_JITTER_DOWN))
            .set("jitterEject", get(ConfigKeys.EGRESS_JITTER_EJECT))
            .set("passiveFailures", get(ConfigKeys.EGRESS_PASSIVE_FAILURES))
            .set("passiveEjectionTime", get(ConfigKeys.EGRESS_PASSIVE_EJECTION))
            .set("recoverySteps", steps)
            .set("recoveryStepInterval", get(ConfigKeys.EGRESS_RECOVERY_STEP_INTERVAL))
            .set("regionEjectedShare", get(ConfigKeys.EGRESS_REGION_EJECTED))
            .set("regionMinSuccess", get(ConfigKeys.EGRESS_REGION_SUCCESS))
            .build();
    }

    private CredentialsConfig credentials()
    {
        CredentialsConfig.SourceKind source = get(ConfigKeys.SECRETS_SOURCE);
        Path file = get(ConfigKeys.SECRETS_FILE);
        Map<String, ?> credentials = get(ConfigKeys.EGRESS_CREDENTIALS);
        Map<String, CredentialsConfig.Credential> bound = EgressTables.credentials(credentials == null ? Map.of() : credentials);
        List<CredentialsConfig.Agent> agents = EgressTables.agents(list(ConfigKeys.EGRESS_AGENTS));
        // Without an address the record itself reports what is missing.
        boolean vault = source == CredentialsConfig.SourceKind.VAULT && get(ConfigKeys.VAULT_ADDRESS) != null;
        // Other sources never see the variables, so that no more secrets are held than are used.
        Map<String, Secret> variables = source == CredentialsConfig.SourceKind.ENV ? secretVariables : Map.of();
        return new CredentialsConfig(source, file, get(ConfigKeys.SECRETS_OVERLAP), get(ConfigKeys.SECRETS_REFRESH),
            vault ? Optional.of(vault()) : Optional.empty(), variables, bound, agents);
    }

    private WatcherConfig watcher()
    {
        return new WatcherConfig(get(ConfigKeys.WATCHER_ENABLED), get(ConfigKeys.WATCHER_NAMESPACES), get(ConfigKeys.WATCHER_ID_LABEL),
            get(ConfigKeys.WATCHER_PORT_ANNOTATION), get(ConfigKeys.WATCHER_DEFAULT_PORT), get(ConfigKeys.WATCHER_RESYNC),
            optional(ConfigKeys.WATCHER_MASTER_URL));
    }

    private TracingConfig tracing()
    {
        return RecordBuilder.of(TracingConfig.class)
            .set("endpoint", optional(ConfigKeys.TRACING_OTLP_ENDPOINT).map(TracingConfig::parseEndpoint))
            .set("sampleRatio", get(ConfigKeys.TRACING_SAMPLE_RATIO))
            .set("serviceName", get(ConfigKeys.TRACING_SERVICE_NAME))
            .build();
    }

    /** The {@code vault} source's settings; only read when that is the source, with its address set. */
    private VaultSettings vault()
    {
        VaultAuth auth = switch (get(ConfigKeys.VAULT_AUTH))
        {
            case TOKEN -> new VaultAuth.Token(required(ConfigKeys.VAULT_TOKEN, "token"));
            case APPROLE -> new VaultAuth.AppRole(new Secret(required(ConfigKeys.VAULT_ROLE_ID, "approle")),
                required(ConfigKeys.VAULT_SECRET_ID, "approle"));
            case KUBERNETES -> new VaultAuth.Kubernetes(required(ConfigKeys.VAULT_K8S_ROLE, "kubernetes"),
                Path.of(get(ConfigKeys.VAULT_K8S_JWT)), VaultAuth.Kubernetes.DEFAULT_MOUNT);
        };
        return VaultSettings.builder(get(ConfigKeys.VAULT_ADDRESS), auth)
            .namespace(get(ConfigKeys.VAULT_NAMESPACE))
            .kvMount(get(ConfigKeys.VAULT_MOUNT))
            .pathPrefix(get(ConfigKeys.VAULT_PREFIX))
            .refreshInterval(get(ConfigKeys.VAULT_REFRESH))
            .cacheMaxAge(get(ConfigKeys.VAULT_MAX_AGE))
            .build();
    }

    /** A value the chosen Vault auth method needs. */
    private <T> T required(ConfigKey<T> key, String auth)
    {
        T value = get(key);
        if (value == null)
            throw new IllegalArgumentException(key.name() + ": missing (expected: a value when " + ConfigKeys.VAULT_AUTH.name() + " is " + auth + ")");
        return value;
    }

    private <T> T attempt(java.util.function.Supplier<T> build)
    {
        return attempt(build, "");
    }

    private <T> T attempt(java.util.function.Supplier<T> build, String context)
    {
        try
        {
            return build.get();
        }
        catch (IllegalArgumentException x)
        {
            problems.add(context + x.getMessage());
            return null;
        }
    }

    /** Whether the key was given a value, by any source, rather than left at its default. */
    private boolean isSet(ConfigKey<?> key)
    {
        return raw.containsKey(key.name());
    }

    /** A key without default, as an Optional. */
    private <T> Optional<T> optional(ConfigKey<T> key)
    {
        return Optional.ofNullable(get(key));
    }

    /** A list key without default: empty when unset. */
    private <T> List<T> list(ConfigKey<List<T>> key)
    {
        List<T> list = get(key);
        return list == null ? List.of() : list;
    }

    @SafeVarargs
    private static <T> T firstNonNull(T... values)
    {
        for (T value : values)
        {
            if (value != null)
                return value;
        }
        return null;
    }
}
