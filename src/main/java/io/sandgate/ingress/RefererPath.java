package io.sandgate.ingress;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * The raw path of a Referer that names a page of the gateway's own origin. A cross-origin Referer
 * proves nothing, and gives none. Every script, style sheet and image a noVNC page loads carries the
 * page's address as its Referer, so this is read on nearly every request of a session.
 */
final class RefererPath
{
    private RefererPath()
    {
    }

    /**
     * @param origin the gateway's origin as the client used it, {@code scheme://host[:port]}
     * @return the Referer's raw path if its scheme and authority are the origin's (case aside), else null
     */
    static String of(String referer, String origin)
    {
        URI uri;
        try
        {
            uri = new URI(referer);
        }
        catch (URISyntaxException x)
        {
            return null;
        }
        if (uri.getScheme() == null || uri.getRawAuthority() == null || uri.getRawPath() == null)
            return null;
        String refererOrigin = uri.getScheme().toLowerCase(Locale.ROOT) + "://" + uri.getRawAuthority().toLowerCase(Locale.ROOT);
        return refererOrigin.equals(origin.toLowerCase(Locale.ROOT)) ? uri.getRawPath() : null;
    }
}
