package io.sandgate.ingress;

import java.util.Locale;
import java.util.Objects;

import org.eclipse.jetty.util.URIUtil;

/**
 * Keeps a sandbox's cookies inside the sandbox. In path mode every sandbox shares the gateway's
 * origin, so a sandbox's {@code Set-Cookie} would otherwise reach the gateway's session cookie (a
 * sandbox could log its visitor out, or toss in a session of its choosing) and every other
 * sandbox's pages. So:
 * <ul>
 *   <li>a cookie that is, or could pass for, the gateway's own is dropped: its name in any case,
 *       with or without a {@code __Host-} or {@code __Secure-} prefix, and nameless cookies, which
 *       browsers send as a bare value that a server may read as a name
 *       (<a href="https://datatracker.ietf.org/doc/html/draft-ietf-httpbis-rfc6265bis#section-5.6">RFC 6265bis section 5.6</a>);</li>
 *   <li>every other cookie gets the sandbox's mount in front of its {@code Path} (its default path
 *       when it has none), so that the browser sends it only below {@code /vnc/{id}/};</li>
 *   <li>{@code Domain} goes: the cookie stays with the gateway's host alone.</li>
 * </ul>
 * In host mode the sandbox owns its host, so its paths are its own to choose; the gateway's cookie
 * and {@code Domain} still go, since a cookie for the parent domain would reach every other
 * sandbox's host. Other attributes pass as the sandbox wrote them.
 */
final class SandboxCookies
{
    private static final String[] NAME_PREFIXES = {"__host-", "__secure-"};

    private final String gatewayCookie;

    /**
     * @param gatewayCookie the name of the gateway's session cookie ({@code ingress.cookie.name})
     */
    SandboxCookies(String gatewayCookie)
    {
        this.gatewayCookie = gatewayCookie.toLowerCase(Locale.ROOT);
    }

    /**
     * Path mode.
     *
     * @param setCookie the value of one {@code Set-Cookie} header from the sandbox
     * @param mount where the sandbox appears to the browser, context path included, without a
     *        trailing slash: {@code /vnc/42}
     * @param upstreamPath the path (and query) the sandbox was asked for, which gives a cookie
     *        without a {@code Path} its default path
     * @return the header to send on, or null to drop it
     */
    String confine(String setCookie, String mount, String upstreamPath)
    {
        return rewrite(setCookie, mount, upstreamPath);
    }

    /**
     * Host mode: the cookie stays with the sandbox's host, at the paths it chose.
     *
     * @param setCookie the value of one {@code Set-Cookie} header from the sandbox
     * @return the header to send on, or null to drop it
     */
    String confineToHost(String setCookie)
    {
        return rewrite(setCookie, null, null);
    }

    /** @param mount the mount to put in front of the path, or null to leave the path alone */
    private String rewrite(String setCookie, String mount, String upstreamPath)
    {
        String[] parts = setCookie.split(";");
        int eq = parts[0].indexOf('=');
        if (eq < 0 || isGatewayCookie(parts[0].substring(0, eq)))
            return null;
        StringBuilder confined = new StringBuilder(parts[0].trim());
        String path = null;
        for (int i = 1; i < parts.length; i++)
        {
            String attribute = parts[i].trim();
            int equals = attribute.indexOf('=');
            String name = (equals < 0 ? attribute : attribute.substring(0, equals)).trim().toLowerCase(Locale.ROOT);
            if (name.equals("path") && mount != null)
            {
                String value = equals < 0 ? "" : attribute.substring(equals + 1).trim();
                // The last Path wins; one that does not start with '/' means the default path. Dot
                // segments go, in case some browser resolves them: /../2/ must not climb out.
                path = value.startsWith("/") ? Objects.requireNonNullElse(URIUtil.normalizePath(value), "/") : null;
                continue;
            }
            if (name.equals("domain") || attribute.isEmpty())
                continue;
            confined.append("; ").append(attribute);
        }
        if (mount != null)
            confined.append("; Path=").append(mount).append(path == null ? defaultPath(upstreamPath) : path);
        return confined.toString();
    }

    private boolean isGatewayCookie(String rawName)
    {
        String name = rawName.trim().replace("\"", "").toLowerCase(Locale.ROOT);
        if (name.isEmpty())
            return true;
        for (String prefix : NAME_PREFIXES)
        {
            if (name.startsWith(prefix))
                name = name.substring(prefix.length());
        }
        return name.equals(gatewayCookie);
    }

    /**
     * The directory of the request path, as a browser computes a cookie's default path
     * (<a href="https://datatracker.ietf.org/doc/html/rfc6265#section-5.1.4">RFC 6265 section 5.1.4</a>).
     */
    static String defaultPath(String upstreamPath)
    {
        int query = upstreamPath.indexOf('?');
        String path = query < 0 ? upstreamPath : upstreamPath.substring(0, query);
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? "/" : path.substring(0, slash);
    }
}
