package io.sandgate.ingress;

import io.sandgate.web.GatewayException;
import org.eclipse.jetty.util.URIUtil;

/**
 * The one path an ingress request is resolved on. The servlet container maps a request on its
 * decoded, normalised path ({@code /vnc/1/../2/x} is mapped as {@code /vnc/2/x}), while the id and
 * the path forwarded to the sandbox must keep the client's percent-encoding. Reading them from the
 * raw request URI sent {@code /vnc/1/../2/x} to sandbox 1 as {@code /../2/x}.
 *
 * <p>So the raw path loses its dot segments here, exactly as the container removes them, and is
 * then held against the container's own path: decoded and without path parameters, both must be the
 * same string. Whatever would make them differ (an encoded dot or slash, a parameter on a dot
 * segment such as {@code ..;x}, a decoding the container does differently) is refused instead of
 * guessed at, so the id the gateway reads is always the one the container routed on.</p>
 */
public final class CanonicalPath
{
    private CanonicalPath()
    {
    }

    /**
     * @param rawPath the path as the client sent it ({@code getRequestURI()}), context path included
     * @param routedPath the decoded, normalised path the container mapped the request on: context
     *        path, servlet path and path info
     * @return the raw path without dot segments, still percent-encoded
     * @throws GatewayException 400 when the raw path climbs above the root or does not mean what the
     *         container routed on
     */
    public static String of(String rawPath, String routedPath)
    {
        String normalized = URIUtil.normalizePath(rawPath);
        if (normalized == null)
            throw GatewayException.badRequest("the path climbs above the root");
        String decoded;
        try
        {
            // Jetty's decoding drops path parameters, as the servlet path and path info do.
            decoded = URIUtil.decodePath(normalized);
        }
        catch (IllegalArgumentException x)
        {
            throw GatewayException.badRequest("the path has a malformed percent-escape");
        }
        if (!decoded.equals(routedPath))
            throw GatewayException.badRequest("ambiguous path: encoded dots, slashes or parameters on dot segments are not accepted");
        return normalized;
    }
}
