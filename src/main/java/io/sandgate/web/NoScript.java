package io.sandgate.web;

import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.PreEncodedHttpField;

/**
 * The headers of every response the gateway writes itself (health, redirects, its errors and
 * Jetty's error pages): nothing to load, no framing, and the document in an opaque origin of its
 * own (CSP {@code sandbox}), with no MIME sniffing.
 *
 * <p>Why every one of them: in path mode the sandboxes' pages share the gateway's origin. A
 * sandbox's page is confined by its own policy, but a window it opens on any other page of that
 * origin is same-origin with it, and a page there without a policy runs whatever script the sandbox
 * puts into it, free of the sandbox's confinement: it could open a socket of another sandbox with
 * the user's cookies. With {@code sandbox}, such a window is of no origin the sandbox shares, so its
 * DOM is out of reach; {@code default-src 'none'} refuses scripts and connections besides.</p>
 */
public final class NoScript
{
    /** Jetty's {@code HttpHeader} names neither. */
    public static final String CONTENT_SECURITY_POLICY = "Content-Security-Policy";
    public static final String X_CONTENT_TYPE_OPTIONS = "X-Content-Type-Options";
    /** Loads nothing, is framed by no page, and runs in an origin of its own without scripts. */
    public static final String POLICY = "default-src 'none'; frame-ancestors 'none'; sandbox";

    private static final HttpField POLICY_FIELD = new PreEncodedHttpField(CONTENT_SECURITY_POLICY, POLICY);
    private static final HttpField NOSNIFF_FIELD = new PreEncodedHttpField(X_CONTENT_TYPE_OPTIONS, "nosniff");
    /** Both, for front-ends that add fields. */
    public static final HttpFields FIELDS = HttpFields.build().put(POLICY_FIELD).put(NOSNIFF_FIELD).asImmutable();

    private NoScript()
    {
    }

    /** Marks a servlet response; replaces any policy set before. */
    public static void set(HttpServletResponse response)
    {
        response.setHeader(CONTENT_SECURITY_POLICY, POLICY);
        response.setHeader(X_CONTENT_TYPE_OPTIONS, "nosniff");
    }

    /** Marks a core response's fields; replaces any policy set before. */
    public static void set(HttpFields.Mutable headers)
    {
        headers.put(POLICY_FIELD);
        headers.put(NOSNIFF_FIELD);
    }
}
