package io.sandgate.ingress;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.Errors;
import io.sandgate.web.RequestAttribute;
import io.sandgate.web.StreamingProxyServlet;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.ClientConnector;

/**
 * Servlet glue of the ingress face: forwards a request whose sandbox {@link SessionFilter} has
 * resolved, letting Jetty's asynchronous proxy servlet stream it there, or hands a WebSocket upgrade
 * to the {@link WebSocketBridge} (and hands it back when the container dispatches it again).
 * Overrides only the hooks whose defaults do not fit a sandbox gateway: target rewriting,
 * forwarding headers, response headers, response flushing and error bodies.
 */
public class IngressServlet extends StreamingProxyServlet
{
    /** The name the servlet is registered under: host mode hands requests to it by this name. */
    public static final String NAME = "sandgate-ingress";
    /** The header that lets a service worker claim a wider scope than its script's directory. */
    static final String SERVICE_WORKER_ALLOWED = "Service-Worker-Allowed";
    /** Where noVNC 1.3 opens its WebSocket when told {@code path=vnc/websockify}: no id, the cookie routes it. */
    static final String IDLESS_WEBSOCKET = "websockify";
    private static final RequestAttribute<Route> ROUTE = RequestAttribute.of("ingress.route", Route.class);

    private final Ingress ingress;
    private final WebSocketBridge webSockets;
    private final SandboxCookies cookies;

    /**
     * @param webSockets the bridge for upgrades; started and closed by whoever built it
     */
    public IngressServlet(Ingress ingress, WebSocketBridge webSockets)
    {
        this.ingress = ingress;
        this.webSockets = webSockets;
        this.cookies = new SandboxCookies(ingress.config().cookie().name());
    }

    @Override
    protected void service(HttpServletRequest clientRequest, HttpServletResponse proxyResponse) throws ServletException, IOException
    {
        Forward forward = SessionFilter.FORWARD.get(clientRequest);
        if (forward == null)
            throw new ServletException("No ingress decision: " + SessionFilter.class.getSimpleName() + " must be mapped in front of this servlet");
        Route route;
        try
        {
            if (webSockets.resume(clientRequest, proxyResponse))
                return;
            route = ingress.route(forward, SessionFilter.RESOLVED.get(clientRequest));
            if (forward.hostMode())
                route = forward.host().target(route, ingress.config().sandboxPorts());
            if (WebSocketBridge.isUpgrade(clientRequest))
            {
                webSockets.upgrade(clientRequest, proxyResponse, forward, route);
                return;
            }
        }
        catch (RuntimeException x)
        {
            SandboxPolicy.refusal(proxyResponse);
            Errors.write(clientRequest, proxyResponse, Errors.map(x));
            return;
        }
        ROUTE.set(clientRequest, route);
        super.service(clientRequest, proxyResponse);
    }

    @Override
    protected String rewriteTarget(HttpServletRequest clientRequest)
    {
        return "http://" + ROUTE.get(clientRequest).authority() + SessionFilter.FORWARD.get(clientRequest).upstreamPath();
    }

    @Override
    protected HttpClient newHttpClient(ClientConnector clientConnector)
    {
        clientConnector.setConnectTimeout(ingress.config().connectTimeout());
        HttpClient client = super.newHttpClient(clientConnector);
        // Sandbox pods come and go all day; without this every pod IP ever seen keeps a
        // destination (and its pool) in the client forever.
        client.setDestinationIdleTimeout(ingress.config().destinationIdleTimeout().toMillis());
        client.setConnectTimeout(ingress.config().connectTimeout().toMillis());
        return client;
    }

    /**
     * Copies the client's headers, less what belongs to the gateway: the session cookie under either
     * of its names (a credential for the gateway, not for the sandbox), the sandbox header, and
     * forwarding headers from a peer that is not a trusted proxy.
     */
    @Override
    protected void copyRequestHeaders(HttpServletRequest clientRequest, Request proxyRequest)
    {
        super.copyRequestHeaders(clientRequest, proxyRequest);
        boolean trusted = ingress.clients().isTrusted(clientRequest);
        String cookieName = ingress.config().cookie().name();
        proxyRequest.headers(headers ->
        {
            headers.remove(ingress.config().header());
            if (!trusted)
            {
                for (String name : ClientInfo.FORWARDING_HEADERS)
                    headers.remove(name);
            }
            List<String> cookies = new ArrayList<>();
            for (HttpField field : headers.getFields(HttpHeader.COOKIE))
            {
                String kept = withoutCookie(field.getValue(), cookieName);
                if (kept != null)
                    cookies.add(kept);
            }
            headers.remove(HttpHeader.COOKIE);
            if (!cookies.isEmpty())
                headers.put(HttpHeader.COOKIE, String.join("; ", cookies));
        });
    }

    /**
     * Adds Via and the de-facto {@code X-Forwarded-*} headers that web UIs in sandboxes read
     * (Jetty 12.1 sends RFC 7239 {@code Forwarded} instead). {@code X-Forwarded-Prefix} tells the
     * sandbox where it is mounted so that it can build absolute links.
     */
    @Override
    protected void addProxyHeaders(HttpServletRequest clientRequest, Request proxyRequest)
    {
        addViaHeader(clientRequest, proxyRequest);
        ClientInfo clients = ingress.clients();
        String mount = mount(clientRequest, SessionFilter.FORWARD.get(clientRequest));
        proxyRequest.headers(headers ->
        {
            String chain = headers.get(ClientInfo.X_FORWARDED_FOR);
            headers.put(ClientInfo.X_FORWARDED_FOR, chain == null ? clientRequest.getRemoteAddr() : chain + ", " + clientRequest.getRemoteAddr());
            headers.put(ClientInfo.X_FORWARDED_PROTO, clients.scheme(clientRequest));
            headers.put(ClientInfo.X_FORWARDED_HOST, clients.host(clientRequest));
            // A sandbox at the root of its own host is mounted nowhere.
            if (mount.isEmpty())
                headers.remove(ClientInfo.X_FORWARDED_PREFIX);
            else
                headers.put(ClientInfo.X_FORWARDED_PREFIX, mount);
        });
    }

    /**
     * Adds the session cookie to the sandbox's response headers: only now is the sandbox known to
     * answer, and a cookie naming a dead sandbox would misroute the id-less requests that follow. In
     * path mode, adds the policy that keeps the sandbox's pages to its own path (see
     * {@link SandboxPolicy}) after the sandbox's own headers, so that a policy of the sandbox's can
     * only narrow it, never replace it.
     */
    @Override
    protected void onServerResponseHeaders(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse)
    {
        super.onServerResponseHeaders(clientRequest, proxyResponse, serverResponse);
        Forward forward = SessionFilter.FORWARD.get(clientRequest);
        if (!forward.hostMode())
        {
            String policy = SandboxPolicy.confine(ingress.clients().origin(clientRequest), ingress.mount() + forward.sandboxId() + "/",
                List.of(ingress.mount() + IDLESS_WEBSOCKET));
            proxyResponse.addHeader(SandboxPolicy.HEADER, policy);
        }
        String setCookie = forward.setCookie();
        if (setCookie != null)
            proxyResponse.addHeader(HttpHeader.SET_COOKIE.asString(), setCookie);
    }

    /**
     * Keeps the sandbox's cookies to the sandbox (see {@link SandboxCookies}) and its redirects
     * inside the gateway: a sandbox answering {@code Location: /x} or
     * {@code http://10.1.2.3:6080/x} means its own {@code /x}, which the browser reaches under the
     * ingress prefix (in host mode, at the root of the sandbox's host). Rewriting also keeps pod
     * addresses from leaking to the browser. In path mode a service worker may not claim a scope
     * wider than its directory: scoped to {@code /vnc/} it would see other sandboxes' requests.
     */
    @Override
    protected String filterServerResponseHeader(HttpServletRequest clientRequest, Response serverResponse, String headerName, String headerValue)
    {
        Forward forward = SessionFilter.FORWARD.get(clientRequest);
        if (HttpHeader.SET_COOKIE.is(headerName))
        {
            if (forward.hostMode())
                return cookies.confineToHost(headerValue);
            // Under the sandbox's own mount even when the request came without the id.
            return cookies.confine(headerValue, ingress.mount() + forward.sandboxId(), forward.upstreamPath());
        }
        if (SERVICE_WORKER_ALLOWED.equalsIgnoreCase(headerName) && !forward.hostMode())
            return null;
        if (!HttpHeader.LOCATION.is(headerName))
            return headerValue;
        String path = headerValue;
        if (!headerValue.startsWith("/"))
        {
            try
            {
                URI uri = URI.create(headerValue);
                if (uri.getRawAuthority() == null || !uri.getRawAuthority().equalsIgnoreCase(ROUTE.get(clientRequest).authority()))
                    return headerValue;
                path = (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath()) + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
            }
            catch (IllegalArgumentException x)
            {
                return headerValue;
            }
        }
        else if (headerValue.startsWith("//"))
        {
            return headerValue;
        }
        return mount(clientRequest, forward) + path;
    }

    /**
     * Where the sandbox appears to the browser, without a trailing slash: {@code /vnc/42} for a
     * request that named it in the path, the bare prefix {@code /vnc} for one resolved otherwise,
     * and in host mode the root of the sandbox's host (the context path, usually empty).
     */
    private String mount(HttpServletRequest clientRequest, Forward forward)
    {
        if (forward.hostMode())
            return clientRequest.getContextPath();
        String prefix = ingress.mount();
        return forward.source() == IngressDecision.Source.PATH ? prefix + forward.sandboxId() : prefix.substring(0, prefix.length() - 1);
    }

    @Override
    protected void onProxyResponseFailure(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse, Throwable failure)
    {
        if (proxyResponse.isCommitted())
        {
            // Headers are gone; the only honest signal left is to cut the response short.
            super.onProxyResponseFailure(clientRequest, proxyResponse, serverResponse, failure);
            return;
        }
        try
        {
            proxyResponse.reset();
            SandboxPolicy.refusal(proxyResponse);
            Errors.write(clientRequest, proxyResponse, Errors.map(failure));
        }
        catch (IOException | IllegalStateException x)
        {
            _log.debug("Cannot write error response", x);
        }
        finally
        {
            if (clientRequest.isAsyncStarted())
                clientRequest.getAsyncContext().complete();
        }
    }

    @Override
    protected void sendProxyResponseError(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, int status)
    {
        if (proxyResponse.isCommitted())
        {
            super.sendProxyResponseError(clientRequest, proxyResponse, status);
            return;
        }
        try
        {
            SandboxPolicy.refusal(proxyResponse);
            Errors.write(clientRequest, proxyResponse, Errors.ofStatus(status));
        }
        catch (IOException x)
        {
            _log.debug("Cannot write error response", x);
        }
        finally
        {
            if (clientRequest.isAsyncStarted())
                clientRequest.getAsyncContext().complete();
        }
    }

    /** The Cookie header without the named cookie (nor its {@code __Host-} form), or null when nothing is left. */
    static String withoutCookie(String header, String name)
    {
        StringBuilder kept = new StringBuilder();
        for (String pair : header.split(";"))
        {
            String trimmed = pair.trim();
            if (trimmed.isEmpty() || trimmed.startsWith(name + "=") || trimmed.startsWith(SessionResolver.HOST_COOKIE_PREFIX + name + "="))
                continue;
            if (kept.length() > 0)
                kept.append("; ");
            kept.append(trimmed);
        }
        return kept.length() == 0 ? null : kept.toString();
    }

}
