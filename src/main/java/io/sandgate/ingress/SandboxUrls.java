package io.sandgate.ingress;

import java.util.List;

import io.sandgate.config.ConfigKeys;
import io.sandgate.config.IngressConfig;
import org.eclipse.jetty.util.URIUtil;

/**
 * Where a user opens a sandbox, for the links the gateway hands out (grants from the admin API and
 * the {@code grant} command, the dashboard's "Open desktop"). With host mode on, always the
 * sandbox's own host, so that no link leads a user into path mode, whose pages share the gateway's
 * origin; under the prefix otherwise.
 *
 * <p>A host-mode link is absolute: its scheme and port are those of the first of
 * {@code server.public-origins}, the origin users reach the gateway under, or without one of the
 * origin the caller gives (the admin request's own). A path-mode link is absolute under that first
 * public origin, and relative without one, as it always was.</p>
 */
public final class SandboxUrls
{
    private static final String ID = "{id}";
    private static final String PORT = "{port}";

    private final IngressConfig config;
    private final String publicOrigin;
    private final String contextPath;

    /**
     * @param publicOrigins {@code server.public-origins}, canonical
     * @param contextPath where the gateway is deployed ("" at the root)
     */
    public SandboxUrls(IngressConfig config, List<String> publicOrigins, String contextPath)
    {
        this.config = config;
        this.publicOrigin = publicOrigins.isEmpty() ? null : publicOrigins.get(0);
        this.contextPath = contextPath;
    }

    /**
     * The sandbox's root, with its trailing slash: {@code https://7.sbx.example.com/} in host mode,
     * {@code /vnc/7/} in path mode.
     *
     * @param routePort the port of the sandbox's route, which a {@code {port}} in the host pattern
     *        names; 0 when there is no route
     * @param fallbackOrigin the origin whose scheme and port a host-mode link takes when no public
     *        origin is configured, canonical
     * @throws IllegalArgumentException when the host pattern names a port and the sandbox has no route
     */
    public String root(String id, int routePort, String fallbackOrigin)
    {
        if (config.hostPattern().isEmpty())
            return (publicOrigin == null ? "" : publicOrigin) + contextPath + config.prefix() + URIUtil.encodePath(id) + "/";
        String template = config.hostPattern().get();
        if (template.contains(PORT) && routePort <= 0)
            throw new IllegalArgumentException("no route for sandbox " + id + ": its host names the route's port ({port} in "
                + ConfigKeys.INGRESS_HOST_PATTERN.name() + "); add the route first");
        String origin = publicOrigin == null ? fallbackOrigin : publicOrigin;
        int authority = origin.indexOf("://") + 3;
        int colon = origin.lastIndexOf(':');
        String port = colon > authority && colon > origin.lastIndexOf(']') ? origin.substring(colon) : "";
        return origin.substring(0, authority) + template.replace(ID, id).replace(PORT, Integer.toString(routePort)) + port + contextPath + "/";
    }

    /** Whether links are to sandboxes' own hosts. */
    public boolean hostMode()
    {
        return config.hostPattern().isPresent();
    }
}
