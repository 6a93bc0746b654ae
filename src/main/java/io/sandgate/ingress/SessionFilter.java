package io.sandgate.ingress;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.ingress.IngressDecision.Redirect;
import io.sandgate.web.AccessNote;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.Errors;
import io.sandgate.web.RequestAttribute;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.URIUtil;

/**
 * Servlet glue in front of {@link IngressServlet}, mapped on the ingress prefix: reads the request
 * into an {@link IngressRequest}, asks {@link Ingress} which sandbox it belongs to, and either
 * answers itself (a redirect, or a refusal through {@link Errors}) or passes the request on with
 * the decision in {@link #FORWARD}. The rules live in {@link SessionResolver}; nothing here decides.
 */
public final class SessionFilter extends HttpFilter
{
    /** The decision for this request, read by the proxy hooks and the WebSocket hand-off. */
    public static final RequestAttribute<Forward> FORWARD = RequestAttribute.of("ingress.forward", Forward.class);

    private final Ingress ingress;

    public SessionFilter(Ingress ingress)
    {
        this.ingress = ingress;
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain) throws IOException, ServletException
    {
        AccessNote.face(request, AccessNote.Face.INGRESS);
        IngressDecision decision;
        try
        {
            decision = ingress.decide(ingressRequest(request), "https".equals(ingress.clients().scheme(request)));
        }
        catch (RuntimeException x)
        {
            Errors.write(request, response, Errors.map(x));
            return;
        }
        if (decision instanceof Redirect redirect)
        {
            redirect(response, redirect);
            return;
        }
        Forward forward = (Forward)decision;
        FORWARD.set(request, forward);
        AccessNote.ATTRIBUTE.set(request, new AccessNote(AccessNote.Face.INGRESS, forward.sandboxId(), forward.source().label()));
        chain.doFilter(request, response);
    }

    private IngressRequest ingressRequest(HttpServletRequest request)
    {
        ClientInfo clients = ingress.clients();
        String path = CanonicalPath.of(request.getRequestURI(), routedPath(request));
        return new IngressRequest(request.getMethod(), path, request.getQueryString(), clients.origin(request),
            request.getHeader(HttpHeader.REFERER.asString()), sessionCookies(request), request.getHeader(ingress.config().header()));
    }

    /** The decoded, normalised path the container mapped the request on (the context path comes encoded). */
    private static String routedPath(HttpServletRequest request)
    {
        String pathInfo = request.getPathInfo();
        return URIUtil.decodePath(request.getContextPath()) + request.getServletPath() + (pathInfo == null ? "" : pathInfo);
    }

    private List<String> sessionCookies(HttpServletRequest request)
    {
        Cookie[] cookies = request.getCookies();
        if (cookies == null)
            return List.of();
        List<String> values = new ArrayList<>(1);
        for (Cookie cookie : cookies)
        {
            if (cookie.getName().equals(ingress.config().cookie().name()))
                values.add(cookie.getValue());
        }
        return values;
    }

    private static void redirect(HttpServletResponse response, Redirect redirect)
    {
        if (redirect.setCookie() != null)
            response.addHeader(HttpHeader.SET_COOKIE.asString(), redirect.setCookie());
        response.setStatus(redirect.status());
        response.setHeader(HttpHeader.LOCATION.asString(), redirect.location());
        // A 308 is cacheable by default, and a redirect may carry a session cookie: neither may be stored.
        response.setHeader(HttpHeader.CACHE_CONTROL.asString(), "no-store");
    }
}
