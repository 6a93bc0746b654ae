package io.sandgate.config;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

import io.sandgate.net.Cidr;
import io.sandgate.net.Origins;

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
 * @param sessionMaxAge signed access: the longest the access one grant opens may last, from redemption
 * @param trustedProxies peers whose X-Forwarded-* headers are believed
 * @param idleTimeout idle timeout towards sandboxes
 * @param connectTimeout connect timeout towards sandboxes
 * @param destinationIdleTimeout unused per-address pools are released after this
 * @param maxConnectionsPerSandbox pool size per sandbox address
 * @param routeCacheSize local route cache size
 * @param routeMissesPerClientPerMinute lookups without a route one client may make per minute, a minute's worth at once
 * @param webSocket the WebSocket bridge
 * @param hostPattern host mode: the shape of a sandbox's own host, lower case, with {@code {id}} and
 *        optionally {@code {port}} in it ({@code {id}.sbx.example.com}); empty for path mode only
 * @param sandboxPorts ports a {@code {port}} in the host pattern may name besides the route's own
 * @param pathMode whether sandboxes are served under the prefix on the gateway's own hosts; only
 *        host mode serves them when false
 * @param hostModeAllowedOrigins origins whose pages may drive a host-mode sandbox (its WebSockets,
 *        unsafe methods) besides the sandbox's own, canonical
 */
public record IngressConfig(String prefix, Pattern idPattern, int idMaxLength, String routesKey,
                            Map<String, String> staticRoutes, String header, CookieConfig cookie, Access access,
                            @Setting("ingress.grant.param") String grantParam, Duration sessionMaxAge, List<Cidr> trustedProxies, Duration idleTimeout, Duration connectTimeout,
                            Duration destinationIdleTimeout, int maxConnectionsPerSandbox, int routeCacheSize,
                            int routeMissesPerClientPerMinute,
                            WebSocket webSocket, Optional<String> hostPattern, Set<Integer> sandboxPorts, boolean pathMode,
                            @Setting("ingress.host-mode.allowed-origins") List<String> hostModeAllowedOrigins)
{
    /** What a host pattern may hold: host name characters and the two placeholders. */
    private static final Pattern HOST_PATTERN = Pattern.compile("(?:[a-z0-9-]|\\{id}|\\{port}|\\.)+");

    /**
     * @param pingInterval pings on both legs
     * @param idleTimeout idle timeout of both legs
     * @param maxMessageSize largest message bridged, bytes
     * @param allowedOrigins origins allowed besides loopback ones and {@code server.public-origins}; "*" for any
     */
    public record WebSocket(Duration pingInterval, Duration idleTimeout, int maxMessageSize, List<String> allowedOrigins)
    {
        public WebSocket
        {
            allowedOrigins = List.copyOf(allowedOrigins);
            for (String origin : allowedOrigins)
            {
                if (!origin.equals("*") && !origin.matches("https?://[^/\\s]+"))
                    throw new IllegalArgumentException(ConfigKeys.WS_ALLOWED_ORIGINS.name() + ": " + origin + " (expected: scheme://host[:port], or *)");
                if (!origin.equals("*"))
                    Origins.canonical(origin, ConfigKeys.WS_ALLOWED_ORIGINS.name());
            }
        }
    }

    public enum Access
    {
        OPEN, SIGNED
    }

    public IngressConfig
    {
        staticRoutes = Map.copyOf(staticRoutes);
        trustedProxies = List.copyOf(trustedProxies);
        hostPattern = Objects.requireNonNull(hostPattern, "hostPattern").map(IngressConfig::hostPattern);
        sandboxPorts = Set.copyOf(sandboxPorts);
        if (!sandboxPorts.isEmpty() && !hostPattern.map(p -> p.contains("{port}")).orElse(false))
            throw new IllegalArgumentException(ConfigKeys.INGRESS_SANDBOX_PORTS.name() + ": " + sandboxPorts
                + " (expected: none unless " + ConfigKeys.INGRESS_HOST_PATTERN.name() + " has a {port} to name them)");
        if (!pathMode && hostPattern.isEmpty())
            throw new IllegalArgumentException(ConfigKeys.INGRESS_PATH_MODE.name() + ": false (expected: true unless "
                + ConfigKeys.INGRESS_HOST_PATTERN.name() + " is set, or no sandbox could be reached)");
        hostModeAllowedOrigins = hostModeAllowedOrigins(hostModeAllowedOrigins);
    }

    /**
     * Host mode's allow-list, canonical. No wildcard: {@code *} would let every page, the gateway's own
     * and so every path-mode sandbox's among them, drive every host-mode sandbox.
     */
    private static List<String> hostModeAllowedOrigins(List<String> origins)
    {
        List<String> canonical = new java.util.ArrayList<>();
        for (String origin : origins)
        {
            if (!origin.matches("https?://[^/\\s*]+"))
                throw new IllegalArgumentException(ConfigKeys.INGRESS_HOST_MODE_ALLOWED_ORIGINS.name() + ": " + origin
                    + " (expected: scheme://host[:port]; no wildcard)");
            canonical.add(Origins.canonical(origin, ConfigKeys.INGRESS_HOST_MODE_ALLOWED_ORIGINS.name()));
        }
        return List.copyOf(canonical);
    }

    /**
     * Checks a host pattern's shape: one {@code {id}}, at most one {@code {port}}, a literal between
     * them (so that a host splits one way only) and a fixed domain with a dot in it, so that the
     * pattern cannot match a bare name such as {@code localhost}.
     */
    private static String hostPattern(String pattern)
    {
        String lower = pattern.trim().toLowerCase(Locale.ROOT);
        String fixed = lower.replace("{id}", "").replace("{port}", "");
        boolean valid = HOST_PATTERN.matcher(lower).matches()
            && lower.indexOf("{id}") >= 0 && lower.indexOf("{id}") == lower.lastIndexOf("{id}")
            && lower.indexOf("{port}") == lower.lastIndexOf("{port}")
            && !lower.contains("{id}{port}") && !lower.contains("{port}{id}")
            && fixed.contains(".") && !lower.startsWith(".") && !lower.endsWith(".") && !lower.contains("..")
            && lower.length() <= 253;
        if (!valid)
            throw new IllegalArgumentException(ConfigKeys.INGRESS_HOST_PATTERN.name() + ": " + pattern
                + " (expected: a host name holding {id} once, and {port} at most once, such as {id}.sbx.example.com or {port}-{id}.sbx.example.com)");
        return lower;
    }
}
