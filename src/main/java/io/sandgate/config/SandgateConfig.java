package io.sandgate.config;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import io.sandgate.core.Secret;

/**
 * The whole configuration, parsed and validated once at start and never changed after.
 *
 * @param source where the YAML came from, for messages ("none" without a file)
 * @param server embedded listener
 * @param store shared state
 * @param ingress the ingress face
 * @param mcp the MCP face
 * @param egress the egress face
 * @param watcher the control plane's pod watcher
 * @param adminToken bearer token for /admin/; empty turns the admin API off
 * @param history what the dashboard's charts keep
 * @param accessLog whether to write access-log lines
 * @param logFormat how log lines are written
 * @param tracing where spans go, if anywhere
 * @param lifecycle waking paused sandboxes, their activity, pausing idle ones
 * @param drain how the replica leaves
 * @param effective every key's effective value as text, secrets shown as ****, for the admin API
 */
public record SandgateConfig(String source, ServerConfig server, StoreConfig store, IngressConfig ingress, McpConfig mcp, EgressConfig egress, WatcherConfig watcher,
                             Optional<Secret> adminToken, HistoryConfig history, boolean accessLog, LogFormat logFormat, TracingConfig tracing,
                             LifecycleConfig lifecycle, DrainConfig drain, Map<String, String> effective)
{
    public SandgateConfig
    {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(ingress, "ingress");
        Objects.requireNonNull(mcp, "mcp");
        Objects.requireNonNull(egress, "egress");
        Objects.requireNonNull(watcher, "watcher");
        Objects.requireNonNull(adminToken, "adminToken");
        Objects.requireNonNull(history, "history");
        Objects.requireNonNull(logFormat, "logFormat");
        Objects.requireNonNull(tracing, "tracing");
        Objects.requireNonNull(lifecycle, "lifecycle");
        Objects.requireNonNull(drain, "drain");
        effective = Map.copyOf(effective);
    }

    /** This configuration with other listener settings. */
    public SandgateConfig withServer(ServerConfig server)
    {
        return new SandgateConfig(source, server, store, ingress, mcp, egress, watcher, adminToken, history, accessLog, logFormat, tracing, lifecycle, drain, effective);
    }

    public enum LogFormat
    {
        TEXT, JSON
    }
}
