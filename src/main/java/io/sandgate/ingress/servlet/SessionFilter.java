package io.sandgate.ingress.servlet;

import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Enumeration;
import java.util.List;

import io.sandgate.ingress.CanonicalPath;
import io.sandgate.ingress.Ingress;
import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.ingress.IngressDecision.Redirect;
import io.sandgate.ingress.IngressDecision;
import io.sandgate.ingress.IngressRequest;
import io.sandgate.ingress.SessionResolver;
import io.sandgate.web.AccessNote;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.Errors;
import io.sandgate.web.LogContext;
import io.sandgate.web.RequestAttribute;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterRegistration;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.URIUtil;

/**
 * Servlet glue in front of {@link IngressServlet}: reads the request into an {@link IngressRequest},
 * asks {@link Ingress} which sandbox it belongs to, and either answers itself (a redirect, or a
 * refusal through {@link Errors}) or passes the request on with the decision in {@link #FORWARD}.
 * The rules live in {@link SessionResolver}; nothing here decides.
 *
 * <p>In path mode it is mapped on the ingress prefix. In host mode a sandbox's host owns every path,
 * so it is mapped on all of them: requests for the gateway's own host outside the prefix pass
 * untouched, and a sandbox's request that the container mapped to another servlet ({@code /},
 * {@code /healthz}, {@code /mcp/...}) is handed to the ingress servlet by name.</p>
 */
public final class SessionFilter extends HttpFilter
{
    /** The decision for this request, read by the proxy hooks and the WebSocket hand-off. */
    public static final RequestAttribute<Forward> FORWARD = RequestAttribute.of("ingress.forward", Forward.class);
    /** The request as the resolver saw it, for the servlet's final check against the route it forwards to. */
    static final RequestAttribute<IngressRequest> RESOLVED = RequestAttribute.of("ingress.resolved", IngressRequest.class);

    private final Ingress ingress;

    public SessionFilter(Ingress ingress)
    {
        this.ingress = ingress;
    }

    /**
     * Maps this filter on what the ingress serves: the prefix, or in host mode every path, together
     * with the dispatch that brings a WebSocket upgrade back once its sandbox leg has settled (a
     * sandbox's {@code /websockify} is no path of the ingress servlet's).
     */
    public void mapOn(FilterRegistration.Dynamic registration)
    {
        if (ingress.config().hostPattern().isPresent())
            registration.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC), false, "/*");
        else
            registration.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, ingress.config().prefix() + "*");
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain) throws IOException, ServletException
    {
        Forward decided = FORWARD.get(request);
        if (decided != null)
        {
            // Dispatched again after an upgrade's sandbox leg settled: decided already.
            toServlet(request, response, chain, decided);
            return;
        }
        if (!serves(request))
        {
            chain.doFilter(request, response);
            return;
        }
        AccessNote.face(request, AccessNote.Face.INGRESS);
        IngressDecision decision;
        IngressRequest resolved = ingressRequest(request);
        try
        {
            decision = ingress.decide(resolved, "https".equals(ingress.clients().scheme(request)));
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
        RESOLVED.set(request, resolved);
        AccessNote.ATTRIBUTE.set(request, new AccessNote(AccessNote.Face.INGRESS, forward.sandboxId(), forward.source().label()));
        LogContext.put(LogContext.Field.SANDBOX, forward.sandboxId());
        toServlet(request, response, chain, forward);
    }

    /** Whether the ingress serves the request ({@link Ingress#serves}), which the container mapped on its path. */
    public boolean serves(HttpServletRequest request)
    {
        String pathInfo = request.getPathInfo();
        return ingress.serves(request.getServletPath() + (pathInfo == null ? "" : pathInfo), ClientInfo.view(request));
    }

    /** On to the ingress servlet: down the chain when the container mapped the request there, by name when not. */
    private static void toServlet(HttpServletRequest request, HttpServletResponse response, FilterChain chain, Forward forward)
        throws IOException, ServletException
    {
        if (!forward.hostMode() || IngressServlet.NAME.equals(request.getHttpServletMapping().getServletName()))
        {
            chain.doFilter(request, response);
            return;
        }
        RequestDispatcher servlet = request.getServletContext().getNamedDispatcher(IngressServlet.NAME);
        if (servlet == null)
            throw new ServletException("No servlet named " + IngressServlet.NAME + " for host mode");
        servlet.forward(request, response);
    }

    private IngressRequest ingressRequest(HttpServletRequest request)
    {
        ClientInfo clients = ingress.clients();
        String path = CanonicalPath.of(request.getRequestURI(), routedPath(request));
        return new IngressRequest(request.getMethod(), path, request.getQueryString(), clients.origin(request),
            request.getHeader(HttpHeader.REFERER.asString()), sessionCookies(request), request.getHeader(ingress.config().header()),
            request.getHeader(HttpHeader.ORIGIN.asString()));
    }

    /** The decoded, normalised path the container mapped the request on (the context path comes encoded). */
    private static String routedPath(HttpServletRequest request)
    {
        String pathInfo = request.getPathInfo();
        return URIUtil.decodePath(request.getContextPath()) + request.getServletPath() + (pathInfo == null ? "" : pathInfo);
    }

    /**
     * The session cookie's values, under its name or (host mode over HTTPS) its {@code __Host-}
     * name, read as the policy reads them to keep them from the sandbox (not by the container's
     * cookie parser).
     */
    private List<String> sessionCookies(HttpServletRequest request)
    {
        List<String> values = new ArrayList<>(1);
        for (Enumeration<String> headers = request.getHeaders(HttpHeader.COOKIE.asString()); headers.hasMoreElements(); )
            ingress.policy().addSessionCookies(headers.nextElement(), values);
        return values;
    }

    private static void redirect(HttpServletResponse response, Redirect redirect)
    {
        response.setStatus(redirect.status());
        redirect.addHeaders(response::addHeader);
    }
}
