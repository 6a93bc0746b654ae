package io.sandgate.ingress;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * The raw path of a Referer that names a page of the gateway's own origin. A cross-origin Referer
 * proves nothing, and gives none.
 *
 * <p>Every script, style sheet and image a noVNC page loads carries the page's address as its
 * Referer, so this is read on nearly every request of a session. Parsing it as a {@link URI} and
 * lower-casing both origins was 1.5 % of the gateway's CPU at saturation with a browser's header
 * lines. The plain form a browser sends, the origin itself and then a path, a query and a fragment
 * of characters that a URI takes as they stand, is read here by a comparison and one scan.
 * Anything else (an escape, an IPv6 host, a character outside ASCII, another origin) goes to
 * {@link URI}, as every Referer did before. {@code RefererPathTest} reads random Referers both ways.</p>
 */
final class RefererPath
{
    /** What a URI takes as it stands in a path, a query or a fragment, but {@code #}: RFC 2396's unreserved and reserved, without escapes and brackets. */
    private static final boolean[] PLAIN = new boolean[128];
    /** Of those, what may stand in a plain authority: a host name or an IPv4 address, and a port. */
    private static final boolean[] PLAIN_AUTHORITY = new boolean[128];

    static
    {
        for (char c : ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + "-_.!~*'()" + ";/?:@&=+$,").toCharArray())
            PLAIN[c] = true;
        for (char c : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-.:".toCharArray())
            PLAIN_AUTHORITY[c] = true;
    }

    private RefererPath()
    {
    }

    /**
     * @param origin the gateway's origin as the client used it, {@code scheme://host[:port]}
     * @return the Referer's raw path if its scheme and authority are the origin's (case aside), else null
     */
    static String of(String referer, String origin)
    {
        int end = plainPathEnd(referer, origin);
        return end >= 0 ? referer.substring(origin.length(), end) : byUri(referer, origin);
    }

    /** @return where a plain Referer of this origin has its path end, or -1 if {@link URI} is to read it */
    static int plainPathEnd(String referer, String origin)
    {
        int authority = origin.startsWith("http://") ? 7 : origin.startsWith("https://") ? 8 : -1;
        int length = origin.length();
        if (authority < 0 || length == authority || referer.length() <= length || referer.charAt(length) != '/')
            return -1;
        for (int i = 0; i < length; i++)
        {
            char c = referer.charAt(i);
            char o = origin.charAt(i);
            if ((i >= authority && (c >= 128 || !PLAIN_AUTHORITY[c])) || lower(c) != lower(o))
                return -1;
        }
        int end = -1;
        boolean fragment = false;
        for (int i = length; i < referer.length(); i++)
        {
            char c = referer.charAt(i);
            if (c == '#')
            {
                if (fragment)
                    return -1;
                fragment = true;
                end = end < 0 ? i : end;
            }
            else if (c >= 128 || !PLAIN[c])
            {
                return -1;
            }
            else if (c == '?' && end < 0)
            {
                end = i;
            }
        }
        return end < 0 ? referer.length() : end;
    }

    /** ASCII letters in lower case; any other character as it is. */
    private static char lower(char c)
    {
        return c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c;
    }

    /** The general reading, for whatever is not plain. */
    static String byUri(String referer, String origin)
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
