package io.sandgate.ingress;

import java.io.IOException;
import java.util.Enumeration;

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
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.ClientConnector;

/**
 * Servlet glue of the ingress face: forwards a request whose sandbox {@link SessionFilter} has
 * resolved, letting Jetty's asynchronous proxy servlet stream it there, or hands a WebSocket upgrade
 * to the {@link WebSocketBridge} (and hands it back when the container dispatches it again).
 * Overrides only the hooks whose defaults do not fit a sandbox gateway: target rewriting, headers
 * both ways (as {@link ForwardPolicy} says, each in one pass), response flushing and error bodies.
 */
public class IngressServlet extends StreamingProxyServlet
{
    /** The name the servlet is registered under: host mode hands requests to it by this name. */
    public static final String NAME = "sandgate-ingress";
    private static final RequestAttribute<Route> ROUTE = RequestAttribute.of("ingress.route", Route.class);

    private final Ingress ingress;
    private final WebSocketBridge webSockets;
    private final ForwardPolicy policy;

    /**
     * @param webSockets the bridge for upgrades; started and closed by whoever built it
     */
    public IngressServlet(Ingress ingress, WebSocketBridge webSockets)
    {
        this.ingress = ingress;
        this.webSockets = webSockets;
        this.policy = ingress.policy();
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

    /** The client's headers as {@link ForwardPolicy} lets them through. */
    @Override
    protected void copyRequestHeaders(HttpServletRequest clientRequest, Request proxyRequest)
    {
        HttpFields.Mutable fromClient = HttpFields.build();
        for (Enumeration<String> names = clientRequest.getHeaderNames(); names.hasMoreElements(); )
        {
            String name = names.nextElement();
            for (Enumeration<String> values = clientRequest.getHeaders(name); values.hasMoreElements(); )
                fromClient.add(name, values.nextElement());
        }
        boolean trusted = ingress.clients().isTrusted(clientRequest);
        proxyRequest.headers(headers -> policy.copyRequestHeaders(fromClient, headers.clear(), trusted));
    }

    /**
     * Adds Via and the {@code X-Forwarded-*} headers that web UIs in sandboxes read (Jetty 12.1
     * sends RFC 7239 {@code Forwarded} instead).
     */
    @Override
    protected void addProxyHeaders(HttpServletRequest clientRequest, Request proxyRequest)
    {
        addViaHeader(clientRequest, proxyRequest);
        ClientInfo.RequestView client = ClientInfo.view(clientRequest);
        String scheme = ingress.clients().scheme(client);
        String host = ingress.clients().host(client);
        proxyRequest.headers(headers -> policy.addForwardingHeaders(headers, SessionFilter.FORWARD.get(clientRequest), clientRequest.getRemoteAddr(), scheme, host));
    }

    /** The sandbox's headers as {@link ForwardPolicy} lets them through, in one pass, then the gateway's own. */
    @Override
    protected void onServerResponseHeaders(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse)
    {
        Forward forward = SessionFilter.FORWARD.get(clientRequest);
        Route route = ROUTE.get(clientRequest);
        HttpFields fromSandbox = serverResponse.getHeaders();
        for (HttpField field : fromSandbox)
        {
            HttpField kept = policy.toBrowser(field, forward, route);
            if (kept == null)
                continue;
            if (ForwardPolicy.isFirstOfName(fromSandbox, field))
                proxyResponse.setHeader(kept.getName(), kept.getValue());
            else
                proxyResponse.addHeader(kept.getName(), kept.getValue());
        }
        policy.addToBrowser(forward, ingress.clients().origin(clientRequest), proxyResponse::addHeader);
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

}
