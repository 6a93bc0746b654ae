package io.sandgate.ingress;

import java.util.Set;

import io.sandgate.config.ConfigKeys;
import io.sandgate.web.GatewayException;

/**
 * A sandbox reached in host mode, on a host of its own (see {@link HostPattern}).
 *
 * @param id the sandbox
 * @param port the sandbox port the host names with {@code {port}}, or 0 for the route's own
 * @param origin the sandbox's own origin as the browser sees it ({@code http://7.sbx.example.com}):
 *        built from the pattern, so it is the one origin besides the configured ones that may open
 *        the sandbox's WebSockets
 */
record SandboxHost(String id, int port, String origin)
{
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
