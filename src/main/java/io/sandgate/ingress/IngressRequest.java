package io.sandgate.ingress;

import java.util.List;

/**
 * What session resolution reads from a request, taken out of the servlet API so that the rules
 * can be tested without a server.
 *
 * @param method HTTP method
 * @param path request path, context path included, still percent-encoded but without dot segments
 *        (see {@link CanonicalPath}), e.g. {@code /vnc/37579/app/ui.js}
 * @param query raw query string, or null
 * @param origin the origin the client used, e.g. {@code http://gw.example:8080}
 * @param referer the Referer header, or null
 * @param cookies values of every cookie with the session cookie's name
 * @param headerId the sandbox header, or null
 * @param pageOrigin the {@code Origin} header: the origin of the page that sent the request, as the
 *        browser says, or null (browsers leave it out of most navigations and plain GETs)
 */
public record IngressRequest(String method, String path, String query, String origin, String referer,
                             List<String> cookies, String headerId, String pageOrigin)
{
    public IngressRequest
    {
        cookies = List.copyOf(cookies);
    }

    /** A request without an {@code Origin} header. */
    public IngressRequest(String method, String path, String query, String origin, String referer, List<String> cookies, String headerId)
    {
        this(method, path, query, origin, referer, cookies, headerId, null);
    }
}
