package io.sandgate.testing;

import java.net.InetAddress;
import java.time.Clock;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

import io.sandgate.Surroundings;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.SandgateConfig;
import io.sandgate.net.Resolver;
import io.sandgate.tracing.Tracing;

/**
 * The configuration of a gateway a test starts: dotted keys and raw values, exactly as a YAML file
 * or context-params would give them, validated whole by {@link ConfigLoader} when the gateway
 * starts. It begins with what every test gateway shares, the loopback address and a free port.
 * Beside the values it holds the gateway's {@link Surroundings}: the system's clock and names unless
 * a test gives its own, and the tracing a test reads spans from, if any.
 */
public final class GatewayConfig
{
    private final Map<String, Object> values = new LinkedHashMap<>();
    private final Map<String, String> environment = new LinkedHashMap<>();
    /** The time, names and spans the gateway takes from outside its configuration. */
    private Surroundings surroundings = Surroundings.SYSTEM;

    public GatewayConfig()
    {
        values.put("server.host", "127.0.0.1");
        values.put("server.port", "0");
        // A test gateway's exchanges are the test's own: waiting 10 s for them on stop, as a
        // deployed gateway does, only makes the suite slower.
        values.put("server.stop-timeout", "1s");
        // A test gateway still running when the JVM ends is drained by the shutdown hook, as on
        // SIGTERM: at once, or the fork would take the deployed drain's 30 s to end.
        values.put("server.drain.grace", "0s");
        values.put("server.drain.spread", "0s");
        values.put("server.drain.timeout", "1s");
    }

    /** Nothing beyond the defaults: a gateway with the in-memory store and every face as it ships. */
    public static Consumer<GatewayConfig> defaults()
    {
        return config ->
        {
        };
    }

    /** Sets one key; a later value for the same key replaces the earlier one. */
    public GatewayConfig set(String key, Object value)
    {
        if (key == null || key.isBlank())
            throw new IllegalArgumentException("key: '" + key + "' (expected: a dotted name such as ingress.access)");
        values.put(key, Objects.requireNonNull(value, () -> key + ": null (expected: a value)"));
        return this;
    }

    public GatewayConfig setAll(Map<String, ?> more)
    {
        more.forEach(this::set);
        return this;
    }

    /** The Redis store on that server. */
    public GatewayConfig redisStore(RedisServerProcess redis)
    {
        return set("store.type", "redis").set("store.redis.address", redis.address());
    }

    /** The Redis store on that cluster or those sentinels. */
    public GatewayConfig redisStore(ReplicatedRedis redis)
    {
        return set("store.type", "redis").setAll(redis.storeSettings());
    }

    /**
     * Egress trusts the target's self-signed certificate, as it would trust a real CA, and may
     * tunnel to its https port besides 443.
     */
    public GatewayConfig trustStoreOf(TargetServer target)
    {
        return set("egress.tls.trust-store", target.trustStore().toString())
            .set("egress.tls.trust-store-password", target.trustStorePassword())
            .set("egress.connect-ports", "443," + target.httpsPort());
    }

    /** An environment variable the gateway starts with, as if the process had it ({@code SANDGATE_SECRET_OPENAI}). */
    public GatewayConfig environment(String name, String value)
    {
        environment.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, () -> name + ": null (expected: a value)"));
        return this;
    }

    /** How the gateway's egress face resolves target names: names that hang, rebind or split, without a DNS server. */
    public GatewayConfig resolver(Resolver names)
    {
        surroundings = surroundings.withResolver(Objects.requireNonNull(names, "names"));
        return this;
    }

    /**
     * Every name the egress face looks up resolves to loopback, where the test's targets and nodes
     * listen; each name asked is added to {@code asked}, so a test can say what was resolved, or that nothing was.
     */
    public GatewayConfig namesOnLoopback(List<String> asked)
    {
        return resolver(host ->
        {
            asked.add(host);
            return List.of(InetAddress.getLoopbackAddress());
        });
    }

    /** The gateway's spans go to {@code tracing} (a test's in-memory exporter), which the test closes after the gateway. */
    public GatewayConfig tracing(Tracing tracing)
    {
        surroundings = surroundings.withTracing(Objects.requireNonNull(tracing, "tracing"));
        return this;
    }

    /** The gateway judges expiries by {@code clock}: a {@link MutableClock} lets a test move time instead of sleeping. */
    public GatewayConfig clock(Clock clock)
    {
        surroundings = surroundings.withClock(Objects.requireNonNull(clock, "clock"));
        return this;
    }

    public Surroundings surroundings()
    {
        return surroundings;
    }

    public Map<String, Object> values()
    {
        return Collections.unmodifiableMap(values);
    }

    /** Parses and validates the values, as start-up does. */
    public SandgateConfig build()
    {
        return ConfigLoader.fromValues(values, environment);
    }
}
