package io.sandgate.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.sandgate.core.Secret;
import io.sandgate.leak.Redactor;
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
    /** The keys some record or table took a value from, for the test that no declared key goes unused. */
    private final Set<String> read = new HashSet<>();
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

    /** The keys a configuration of these values was built from: each declared key should be one, under some values. */
    static Set<String> keysRead(Map<String, ?> values)
    {
        ConfigLoader loader = new ConfigLoader();
        values.forEach((name, value) -> loader.put(name, value, "value"));
        loader.build("none");
        return Set.copyOf(loader.read);
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
        read.add(key.name());
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
        // Records are bound by component name from their keys (RecordBuilder.bind); each checks what
        // involves several keys itself. Try them all so that one attempt shows every problem.
        ServerConfig.Faces faces = bind(ServerConfig.Faces.class, "", Map.of());
        ServerConfig server = attempt(() -> bind(ServerConfig.class, "server.", given("faces", faces)));
        // One key, two defaults: the route table must see a change within a second when it has
        // to poll; the sessions' poll is only a net, and slow unless asked otherwise.
        Duration sessionPoll = isSet(ConfigKeys.REDIS_POLL_INTERVAL) ? get(ConfigKeys.REDIS_POLL_INTERVAL) : StoreConfig.Redis.DEFAULT_SESSION_POLL_INTERVAL;
        StoreConfig.Redis redis = attempt(() -> bind(StoreConfig.Redis.class, "store.redis.", given("sessionPollInterval", sessionPoll)));
        CookieConfig cookie = attempt(() -> bind(CookieConfig.class, "ingress.cookie.", Map.of()));
        IngressConfig.WebSocket webSocket = attempt(() -> bind(IngressConfig.WebSocket.class, "ingress.websocket.", Map.of()));
        IngressConfig ingress = attempt(() -> bind(IngressConfig.class, "ingress.", given("cookie", cookie, "webSocket", webSocket)));
        List<McpConfig.Server> mcpServers = new ArrayList<>();
        Map<String, ?> mcpAuth = optional(ConfigKeys.MCP_AUTH).orElse(null);
        String publicOrigin = server == null || server.publicOrigins().isEmpty() ? null : server.publicOrigins().get(0);
        // Checked on its own too, so that a mistake in it shows though no server uses it (the
        // resource URL is each server's to complete); the same problem found again through each
        // server that uses it is listed once.
        if (mcpAuth != null)
            attempt(() -> McpAuthConfig.resolve(mcpAuth, null, ConfigKeys.MCP_AUTH.name(), "any", "https://gateway.invalid"));
        for (Map<?, ?> entry : list(ConfigKeys.MCP_SERVERS))
        {
            McpConfig.Server parsed = attempt(() -> McpConfig.Server.parse(entry, mcpAuth, publicOrigin));
            if (parsed != null)
                mcpServers.add(parsed);
        }
        List<McpFederation> federations = new ArrayList<>();
        for (Map<?, ?> entry : list(ConfigKeys.MCP_FEDERATIONS))
        {
            McpFederation parsed = attempt(() -> McpFederation.parse(entry, mcpAuth, publicOrigin));
            if (parsed != null)
                federations.add(parsed);
        }
        McpConfig mcp = attempt(() -> bind(McpConfig.class, "mcp.", given("servers", mcpServers, "federations", federations)));
        EgressConfig egress = attempt(this::egress);
        WatcherConfig watcher = attempt(() -> bind(WatcherConfig.class, "controlplane.watcher.", Map.of()));
        TracingConfig tracing = attempt(() -> bind(TracingConfig.class, "tracing.",
            given("endpoint", optional(ConfigKeys.TRACING_OTLP_ENDPOINT).map(TracingConfig::parseEndpoint))));
        HistoryConfig history = attempt(() -> bind(HistoryConfig.class, "admin.history.", Map.of()));
        LifecycleConfig.Wake wake = attempt(() -> bind(LifecycleConfig.Wake.class, "ingress.wake.", Map.of()));
        LifecycleConfig.Idle idle = attempt(() -> bind(LifecycleConfig.Idle.class, "ingress.idle.", Map.of()));
        LifecycleConfig lifecycle = wake == null || idle == null ? null
            : attempt(() -> bind(LifecycleConfig.class, "ingress.", given("wake", wake, "idle", idle)));
        DrainConfig drain = attempt(() -> bind(DrainConfig.class, "server.drain.", Map.of()));
        if (watcher != null && lifecycle != null && lifecycle.wake().kubernetes() && !watcher.scalesSandboxes())
            problems.add(ConfigKeys.WAKE_KUBERNETES.name() + ": true (expected: " + ConfigKeys.WATCHER_ENABLED.name() + ": true and "
                + ConfigKeys.WATCHER_SANDBOX_API.name() + " set: the pod watcher's client scales the Sandbox resources)");
        if (!problems.isEmpty())
            throw new ConfigException(List.copyOf(new LinkedHashSet<>(problems)));
        StoreConfig store = bind(StoreConfig.class, "store.", given("redis", redis));
        return new SandgateConfig(source, server, store, ingress, mcp, egress, watcher,
            optional(ConfigKeys.ADMIN_TOKEN), history, get(ConfigKeys.ACCESS_LOG), get(ConfigKeys.LOG_FORMAT), tracing, lifecycle, drain, effective());
    }

    private <R extends Record> R bind(Class<R> type, String prefix, Map<String, ?> given)
    {
        return RecordBuilder.bind(type, prefix, this::get, given);
    }

    /** Component values by name, pairwise; a value may be null (a part that failed, already reported). */
    private static Map<String, Object> given(Object... namesAndValues)
    {
        Map<String, Object> given = new HashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2)
            given.put((String) namesAndValues[i], namesAndValues[i + 1]);
        return given;
    }

    /** Each key's value as text, with nothing secret in it. */
    private Map<String, String> effective()
    {
        Map<String, String> values = new java.util.TreeMap<>();
        for (ConfigKey<?> key : ConfigKeys.ALL)
        {
            Object value = parsed.get(key.name());
            // Secrets, user-info in URLs (redis://user:password@host) and anything shaped like a key
            // (pasted into a value that is not declared secret) are all shown as [REDACTED].
            if (value != null)
                values.put(key.name(), key.secret() ? Redactor.REDACTED : REDACT.text(value.toString().replaceAll("//[^@/\\s]*@", "//" + Redactor.REDACTED + "@")));
        }
        return values;
    }

    /** The tables (routes, pools, credentials, agents) keep their own binding, EgressTables. */
    private EgressConfig egress()
    {
        EgressConfig.Health health = bind(EgressConfig.Health.class, "egress.health.", Map.of());
        CredentialsConfig credentials = credentials();
        Map<String, ?> pools = get(ConfigKeys.EGRESS_POOLS);
        return bind(EgressConfig.class, "egress.", given(
            "routes", EgressTables.routes(list(ConfigKeys.EGRESS_ROUTES), get(ConfigKeys.EGRESS_TIMEOUT), get(ConfigKeys.EGRESS_FIRST_BYTE_TIMEOUT),
                get(ConfigKeys.EGRESS_SCAN_MODE)),
            "pools", EgressTables.pools(pools == null ? Map.of() : pools),
            "health", health,
            "credentials", credentials,
            "inspect", bind(EgressConfig.Inspect.class, "egress.inspect.", Map.of())));
    }

    private CredentialsConfig credentials()
    {
        CredentialsConfig.SourceKind source = get(ConfigKeys.SECRETS_SOURCE);
        Map<String, ?> credentials = get(ConfigKeys.EGRESS_CREDENTIALS);
        // Without an address the record itself reports what is missing.
        boolean vault = source == CredentialsConfig.SourceKind.VAULT && get(ConfigKeys.VAULT_ADDRESS) != null;
        return bind(CredentialsConfig.class, "egress.secrets.", given(
            "vault", vault ? Optional.of(vault()) : Optional.empty(),
            // Other sources never see the variables, so that no more secrets are held than are used.
            "environment", source == CredentialsConfig.SourceKind.ENV ? secretVariables : Map.of(),
            "credentials", EgressTables.credentials(credentials == null ? Map.of() : credentials),
            "agents", EgressTables.agents(list(ConfigKeys.EGRESS_AGENTS))));
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
