package io.sandgate.config;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import io.sandgate.net.Cidr;

/**
 * The ingress face: how a browser's requests find their sandbox.
 *
 * @param prefix mount, starting and ending with '/'
 * @param idPattern sandbox id pattern, always matched whole
 * @param idMaxLength longer ids are rejected before the pattern runs
 * @param routesKey Redis hash holding id -> host:port
 * @param staticRoutes routes seeded into the in-memory store
 * @param header request header naming the sandbox
 * @param cookie the session cookie
 * @param access open, or signed (grant token required on the first URL)
 * @param grantParam query parameter carrying a grant
 * @param trustedProxies peers whose X-Forwarded-* headers are believed
 * @param idleTimeout idle timeout towards sandboxes
 * @param connectTimeout connect timeout towards sandboxes
 * @param destinationIdleTimeout unused per-address pools are released after this
 * @param maxConnectionsPerSandbox pool size per sandbox address
 * @param routeCacheSize local route cache size
 * @param webSocket the WebSocket bridge
 */
public record IngressConfig(String prefix, Pattern idPattern, int idMaxLength, String routesKey,
                            Map<String, String> staticRoutes, String header, CookieConfig cookie, Access access,
                            String grantParam, List<Cidr> trustedProxies, Duration idleTimeout, Duration connectTimeout,
                            Duration destinationIdleTimeout, int maxConnectionsPerSandbox, int routeCacheSize,
                            WebSocket webSocket)
{
    /**
     * @param pingInterval pings on both legs
     * @param idleTimeout idle timeout of both legs
     * @param maxMessageSize largest message bridged, bytes
     * @param allowedOrigins origins allowed besides the gateway's own; "*" for any
     */
    public record WebSocket(Duration pingInterval, Duration idleTimeout, int maxMessageSize, List<String> allowedOrigins)
    {
        public WebSocket
        {
            StoreConfig.positive(ConfigKeys.WS_PING_INTERVAL, pingInterval);
            StoreConfig.positive(ConfigKeys.WS_IDLE_TIMEOUT, idleTimeout);
            allowedOrigins = List.copyOf(allowedOrigins);
            for (String origin : allowedOrigins)
            {
                if (!origin.equals("*") && !origin.matches("https?://[^/\\s]+"))
                    throw new IllegalArgumentException(ConfigKeys.WS_ALLOWED_ORIGINS.name() + ": " + origin + " (expected: scheme://host[:port], or *)");
            }
        }
    }

    public enum Access
    {
        OPEN, SIGNED
    }

    public IngressConfig
    {
        if (!prefix.matches("/([A-Za-z0-9._~-]+/)+"))
            throw new IllegalArgumentException(ConfigKeys.INGRESS_PREFIX.name() + ": " + prefix + " (expected: a path that starts and ends with '/', such as /vnc/)");
        if (routesKey.isBlank())
            throw new IllegalArgumentException(ConfigKeys.INGRESS_ROUTES_KEY.name() + ": empty (expected: a Redis key name)");
        if (!header.matches("[A-Za-z0-9-]+"))
            throw new IllegalArgumentException(ConfigKeys.INGRESS_HEADER.name() + ": " + header + " (expected: a header name)");
        if (!grantParam.matches("[A-Za-z0-9_.-]+"))
            throw new IllegalArgumentException(ConfigKeys.GRANT_PARAM.name() + ": " + grantParam + " (expected: letters, digits, '_', '.', '-')");
        staticRoutes = Map.copyOf(staticRoutes);
        trustedProxies = List.copyOf(trustedProxies);
        StoreConfig.positive(ConfigKeys.INGRESS_IDLE_TIMEOUT, idleTimeout);
        StoreConfig.positive(ConfigKeys.INGRESS_CONNECT_TIMEOUT, connectTimeout);
        StoreConfig.positive(ConfigKeys.INGRESS_DESTINATION_IDLE_TIMEOUT, destinationIdleTimeout);
    }
}
