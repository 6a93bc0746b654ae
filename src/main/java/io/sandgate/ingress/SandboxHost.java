package io.sandgate.ingress;

import java.util.Set;

import io.sandgate.config.ConfigKeys;
import io.sandgate.net.Origins;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpMethod;

/**
 * A sandbox reached in host mode, on a host of its own (see {@link HostPattern}).
 *
 * @param id the sandbox
 * @param port the sandbox port the host names with {@code {port}}, or 0 for the route's own
 * @param origin the sandbox's own origin as the browser sees it ({@code http://7.sbx.example.com}):
 *        built from the pattern, so it is the one origin besides {@code ingress.host-mode.allowed-origins}
 *        that may open the sandbox's WebSockets or send it unsafe requests
 */
public record SandboxHost(String id, int port, String origin)
{
    /**
     * Whether a page of {@code pageOrigin} may drive this sandbox: open its WebSockets, or send it a
     * request with an unsafe method, either of which a browser sends with the user's cookie for the
     * sandbox's host whenever the page is of the same site. Only the sandbox's own pages and those of
     * {@code allowed} may. Never the gateway's public origins, nor loopback ones: the path-mode
     * pages of every sandbox run under those, and one of them that reaches a script-capable window
     * of the gateway's origin would drive this sandbox with the user's session. Never the request's
     * Host either (DNS rebinding).
     *
     * @param allowed {@code ingress.host-mode.allowed-origins}, as {@link Origins#exactly}
     */
    public boolean admits(String pageOrigin, Origins allowed)
    {
        return allowed.allows(pageOrigin, origin);
    }

    /**
     * Whether a request needs {@link #admits}: it carries an {@code Origin} and its method is not safe
     * (RFC 9110, section 9.2.1; a method the gateway does not know is not safe either). Browsers send
     * {@code Origin} with every such request, so one without it comes from no browser.
     */
    static boolean needsOriginCheck(String method, String pageOrigin)
    {
        HttpMethod known = HttpMethod.fromString(method);
        return pageOrigin != null && (known == null || !known.isSafe());
    }

    /** The refusal of a page {@link #admits} does not let in, naming the setting that would. */
    public static GatewayException refused(String pageOrigin, String what)
    {
        return GatewayException.forbidden("a page of " + pageOrigin.replaceAll("[^\\x20-\\x7e]", "?") + " may not " + what
            + ": only the sandbox's own pages may, and those of " + ConfigKeys.INGRESS_HOST_MODE_ALLOWED_ORIGINS.name());
    }

    /**
     * Where to forward: the route itself, or the same pod on the port the host names.
     *
     * @param allowedPorts {@code ingress.sandbox-ports}
     * @throws GatewayException 403 for a port that is neither the route's nor allowed
     */
    Route target(Route route, Set<Integer> allowedPorts)
    {
        if (port == 0 || port == route.port())
            return route;
        if (!allowedPorts.contains(port))
            throw GatewayException.forbidden("port " + port + " of a sandbox is not open through the gateway ("
                + ConfigKeys.INGRESS_SANDBOX_PORTS.name() + ")");
        // The same pod and the same access: a revocation stamped on the route holds on every port.
        return new Route(route.host(), port, route.generation(), route.revokedBefore());
    }
}
