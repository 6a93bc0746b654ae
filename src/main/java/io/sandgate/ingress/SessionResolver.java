package io.sandgate.ingress;

import io.sandgate.config.ConfigKeys;
import io.sandgate.config.CookieConfig;
import io.sandgate.config.IngressConfig;
import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.ingress.IngressDecision.Redirect;
import io.sandgate.ingress.IngressDecision.Source;
import io.sandgate.net.Origins;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.util.URIUtil;

/**
 * Finds the sandbox of an ingress request. In host mode the host names it ({@code 7.sbx.example.com},
 * see {@link HostPattern}) and the whole path is the sandbox's. In path mode most requests of a noVNC
 * session carry no id: the path ({@code /vnc/{id}/...}), then a same-origin Referer under
 * {@code /vnc/{id}/}, then the signed session cookie, then the sandbox header. In {@code signed}
 * access mode every id found must also be in the session cookie, which only a grant token puts there.
 */
public final class SessionResolver
{
    /** The prefix a cookie name needs to be bound to one host, path {@code /} and HTTPS (RFC 6265bis). */
    static final String HOST_COOKIE_PREFIX = "__Host-";

    private final String contextPath;
    private final String prefix;
    private final IdSyntax ids;
    private final HostPattern hosts;
    private final SessionCookie cookie;
    private final GrantRedemption redemption;
    private final IngressConfig.Access access;
    private final String grantParam;
    private final String cookieName;
    private final boolean pathMode;
    /** {@code ingress.host-mode.allowed-origins}: pages that may drive a host-mode sandbox besides its own. */
    private final Origins hostModeOrigins;

    SessionResolver(IngressConfig config, IdSyntax ids, SessionCookie cookie, GrantRedemption redemption)
    {
        this(config, "", ids, cookie, redemption);
    }

    /**
     * @param contextPath the servlet context path the gateway is deployed under ("" for the root):
     *        paths, Referers, redirects and the cookie's Path all include it
     */
    SessionResolver(IngressConfig config, String contextPath, IdSyntax ids, SessionCookie cookie, GrantRedemption redemption)
    {
        this.contextPath = contextPath;
        this.prefix = contextPath + config.prefix();
        this.ids = ids;
        this.hosts = HostPattern.of(config.hostPattern(), ids);
        this.cookie = cookie;
        this.redemption = redemption;
        this.access = config.access();
        this.grantParam = config.grantParam();
        this.cookieName = config.cookie().name();
        this.pathMode = config.pathMode();
        this.hostModeOrigins = Origins.exactly(config.hostModeAllowedOrigins());
    }

    /**
     * @param secure whether the client reached us over HTTPS (directly or via a trusted proxy)
     * @throws GatewayException 400 for a malformed id, 403 for a forged cookie or missing grant,
     *         404 when nothing names a sandbox
     */
    public IngressDecision resolve(IngressRequest request, boolean secure, CookieConfig.SecureMode secureMode)
    {
        SandboxHost host = hosts.match(request.origin());
        if (host != null)
            return fromHost(request, host, secure, secureMode);
        if (!pathMode)
            throw GatewayException.notFound("no sandbox is served under " + prefix + " here: each is on a host of its own ("
                + ConfigKeys.INGRESS_PATH_MODE.name() + " is false)");
        String path = request.path();
        if (!path.startsWith(prefix))
        {
            if ((path + "/").equals(prefix))
                return new Redirect(HttpStatus.PERMANENT_REDIRECT_308, prefix + query(request.query()), null);
            throw GatewayException.notFound("not an ingress path");
        }
        SessionCookie.Decoded session = cookie.decode(request.cookies());
        String rest = path.substring(prefix.length());
        int slash = rest.indexOf('/');
        String first = slash < 0 ? rest : rest.substring(0, slash);

        if (ids.isId(first))
            return fromPath(request, session, first, slash < 0 ? null : rest.substring(slash), secure, secureMode);
        if (!first.isEmpty() && (ids.isOverlongId(first) || !IdSyntax.isPlainSegment(first) || ids.isIdWithParameters(first)))
            throw GatewayException.badRequest("malformed sandbox id in path");

        String upstreamPath = "/" + rest + query(request.query());
        String fromReferer = refererId(request);
        if (fromReferer != null)
            return forward(session, fromReferer, Source.REFERER, upstreamPath);
        if (!session.entries().isEmpty())
            return forward(session, session.entries().get(0).id(), Source.COOKIE, upstreamPath);
        if (session.forged() || session.expired())
            throw GatewayException.forbidden("session cookie is invalid or expired; open the sandbox link again");
        if (request.headerId() != null)
        {
            if (!ids.isId(request.headerId()))
                throw GatewayException.badRequest("malformed sandbox id in header");
            return forward(session, request.headerId(), Source.HEADER, upstreamPath);
        }
        throw GatewayException.notFound("no sandbox session: open " + prefix + "{id}/ first");
    }

    /**
     * Whether resolving the request may redeem a grant, which writes to the store: only in signed
     * access, and only when the query carries a grant.
     */
    boolean mayRedeemGrant(IngressRequest request)
    {
        return access == IngressConfig.Access.SIGNED && param(request.query(), grantParam) != null;
    }

    private IngressDecision fromPath(IngressRequest request, SessionCookie.Decoded session, String id, String tail,
                                     boolean secure, CookieConfig.SecureMode secureMode)
    {
        String grant = access == IngressConfig.Access.SIGNED ? param(request.query(), grantParam) : null;
        if (grant != null)
        {
            SessionCookie.Entry entry = redemption.redeem(grant, id);
            String location = prefix + id + (tail == null ? "/" : tail) + query(withoutParam(request.query(), grantParam));
            return new Redirect(HttpStatus.SEE_OTHER_303, location, setCookie(cookie.withFirst(session, entry), secure, secureMode));
        }
        if (tail == null)
            return new Redirect(HttpStatus.PERMANENT_REDIRECT_308, prefix + id + "/" + query(request.query()), null);
        if (access == IngressConfig.Access.SIGNED && !session.contains(id))
            throw GatewayException.forbidden("this sandbox needs a grant: open the link you were given");
        String setCookie = session.isFirst(id) ? null : setCookie(cookie.withFirst(session, id), secure, secureMode);
        return new Forward(id, Source.PATH, tail + query(request.query()), setCookie);
    }

    /**
     * Host mode: the host is the sandbox, the path is all the sandbox's own (no prefix, no Referer,
     * no cookie order), and the cookie, host-only, holds that one sandbox. A request with an unsafe
     * method must come from a page that may drive the sandbox ({@link SandboxHost#admits}): the
     * cookie is SameSite=Lax, which browsers send on such requests from any page of the same site.
     */
    private IngressDecision fromHost(IngressRequest request, SandboxHost host, boolean secure, CookieConfig.SecureMode secureMode)
    {
        if (SandboxHost.needsOriginCheck(request.method(), request.pageOrigin()) && !host.admits(request.pageOrigin(), hostModeOrigins))
            throw SandboxHost.refused(request.pageOrigin(), "send " + request.method() + " requests to this sandbox");
        String path = request.path();
        if (!path.startsWith(contextPath + "/"))
            throw GatewayException.notFound("not an ingress path");
        if (access == IngressConfig.Access.SIGNED)
        {
            String grant = param(request.query(), grantParam);
            if (grant != null)
            {
                SessionCookie.Entry entry = redemption.redeem(grant, host.id());
                return new Redirect(HttpStatus.SEE_OTHER_303, path + query(withoutParam(request.query(), grantParam)),
                    hostCookie(cookie.withFirst(SessionCookie.Decoded.NONE, entry), secure, secureMode));
            }
            if (!cookie.decode(request.cookies()).contains(host.id()))
                throw GatewayException.forbidden("this sandbox needs a grant: open the link you were given");
        }
        return new Forward(host.id(), Source.HOST, path.substring(contextPath.length()) + query(request.query()), null, host);
    }

    private Forward forward(SessionCookie.Decoded session, String id, Source source, String upstreamPath)
    {
        if (access == IngressConfig.Access.SIGNED && !session.contains(id))
            throw GatewayException.forbidden("no grant for this sandbox in the session");
        return new Forward(id, source, upstreamPath, null);
    }

    /** The id in a same-origin Referer's path, or null. A cross-origin Referer proves nothing. */
    private String refererId(IngressRequest request)
    {
        String referer = request.referer();
        if (referer == null || request.origin() == null)
            return null;
        String rawPath = RefererPath.of(referer, request.origin());
        if (rawPath == null)
            return null;
        // As for the request's own path: the id is read after dot segments are gone.
        String path = URIUtil.normalizePath(rawPath);
        if (path == null || !path.startsWith(prefix))
            return null;
        String rest = path.substring(prefix.length());
        int slash = rest.indexOf('/');
        // Only a page under /vnc/{id}/ counts: /vnc/{id} without the slash was never served.
        if (slash < 0)
            return null;
        String id = rest.substring(0, slash);
        return ids.isId(id) ? id : null;
    }

    /** Path mode: the cookie under the prefix. */
    private String setCookie(String value, boolean secure, CookieConfig.SecureMode secureMode)
    {
        return cookieHeader(cookieName, value, prefix, isSecure(secure, secureMode));
    }

    /**
     * Host mode: a cookie for this host alone, holding this one sandbox. Without a Domain it is
     * never sent to another sandbox's host, and with the {@code __Host-} prefix (over HTTPS) no
     * sibling host can plant one of the same name with a Domain.
     */
    private String hostCookie(String value, boolean secure, CookieConfig.SecureMode secureMode)
    {
        boolean addSecure = isSecure(secure, secureMode);
        return cookieHeader(addSecure ? HOST_COOKIE_PREFIX + cookieName : cookieName, value, "/", addSecure);
    }

    private static boolean isSecure(boolean secure, CookieConfig.SecureMode secureMode)
    {
        return secureMode == CookieConfig.SecureMode.ALWAYS || (secureMode == CookieConfig.SecureMode.AUTO && secure);
    }

    private String cookieHeader(String name, String value, String path, boolean secure)
    {
        return name + "=" + value + "; Path=" + path + "; Max-Age=" + cookie.ttl().toSeconds() + "; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "");
    }

    private static String query(String query)
    {
        return query == null || query.isEmpty() ? "" : "?" + query;
    }

    static String param(String query, String name)
    {
        if (query == null)
            return null;
        for (String pair : query.split("&"))
        {
            int eq = pair.indexOf('=');
            if (eq > 0 && pair.substring(0, eq).equals(name))
                return pair.substring(eq + 1);
        }
        return null;
    }

    static String withoutParam(String query, String name)
    {
        if (query == null)
            return null;
        StringBuilder kept = new StringBuilder();
        for (String pair : query.split("&"))
        {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            if (key.equals(name) || pair.isEmpty())
                continue;
            if (kept.length() > 0)
                kept.append('&');
            kept.append(pair);
        }
        return kept.length() == 0 ? null : kept.toString();
    }
}
