package io.sandgate.ingress.servlet;

import java.io.IOException;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.opentelemetry.api.trace.Span;
import io.sandgate.core.Futures;
import io.sandgate.ingress.ForwardPolicy;
import io.sandgate.ingress.Ingress;
import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.ingress.OpenStreams;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.SendAgain;
import io.sandgate.ingress.websocket.WebSocketBridge;
import io.sandgate.web.AccessNote;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import io.sandgate.web.RequestAttribute;
import io.sandgate.web.SendAgainOnce;
import io.sandgate.web.ServerSpan;
import io.sandgate.web.StreamingProxyServlet;
import io.sandgate.web.UpstreamClient;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.util.Callback;

/**
 * Servlet glue of the ingress face: forwards a request whose sandbox {@link SessionFilter} has
 * resolved, letting Jetty's asynchronous proxy servlet stream it there, or hands a WebSocket upgrade
 * to the {@link WebSocketBridge} (and hands it back when the container dispatches it again).
 * Overrides only the hooks whose defaults do not fit a sandbox gateway: target rewriting, headers
 * both ways (as {@link ForwardPolicy} says, each in one pass), small bodies, response flushing and
 * error bodies.
 */
public class IngressServlet extends StreamingProxyServlet
{
    /** The name the servlet is registered under: host mode hands requests to it by this name. */
    public static final String NAME = "sandgate-ingress";
    private static final RequestAttribute<Route> ROUTE = RequestAttribute.of("ingress.route", Route.class);
    /** The route of a sandbox woken while the request waited, when the request comes back through the container. */
    private static final RequestAttribute<Route> WOKEN = RequestAttribute.of("ingress.woken", Route.class);
    /** Why a sandbox the request waited for did not wake. */
    private static final RequestAttribute<GatewayException> WAKE_FAILED = RequestAttribute.of("ingress.wake-failed", GatewayException.class);
    /** Set on a response whose whole body goes out with the exchange's completion (see {@link #onServerResponseHeaders}). */
    private static final RequestAttribute<Boolean> WHOLE_BODY = RequestAttribute.of("ingress.whole-body", Boolean.class);
    /** Forgets the exchange's answer among the streams a revocation ends ({@link OpenStreams}), when it is one. */
    private static final RequestAttribute<Runnable> STREAM = RequestAttribute.of("ingress.stream", Runnable.class);
    /** When the request went to the sandbox, by {@link System#nanoTime()}: the access line gives how long its answer's head took. */
    private static final RequestAttribute<Long> SENT = RequestAttribute.of("ingress.sent", Long.class);

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
        GatewayException wakeFailed = WAKE_FAILED.get(clientRequest);
        if (wakeFailed != null)
        {
            Errors.write(clientRequest, proxyResponse, wakeFailed);
            return;
        }
        Route route;
        try
        {
            if (webSockets.resume(clientRequest, proxyResponse))
                return;
            route = WOKEN.get(clientRequest);
            if (route == null)
            {
                CompletableFuture<Route> routing = ingress.route(forward, SessionFilter.RESOLVED.get(clientRequest), ingress.clients().clientAddress(clientRequest));
                if (!routing.isDone())
                {
                    awaitWake(clientRequest, routing);
                    return;
                }
                route = Futures.join(routing);
            }
            Span span = ServerSpan.of(clientRequest);
            if (span != null)
                policy.describe(span, clientRequest.getMethod(), forward);
            if (WebSocketBridge.isUpgrade(clientRequest))
            {
                webSockets.upgrade(clientRequest, proxyResponse, forward, route);
                return;
            }
        }
        catch (RuntimeException x)
        {
            Errors.write(clientRequest, proxyResponse, Errors.map(x));
            return;
        }
        ROUTE.set(clientRequest, route);
        super.service(clientRequest, proxyResponse);
    }

    /**
     * Lets the container's thread go while the sandbox wakes, and brings the request back through
     * the container once it runs (or has failed to), as an upgrade's settled sandbox leg does.
     */
    private static void awaitWake(HttpServletRequest clientRequest, CompletableFuture<Route> routing)
    {
        AsyncContext async = clientRequest.startAsync();
        // The waker's own timeout ends the wait; the container's must not end it first.
        async.setTimeout(0);
        routing.whenComplete((route, failure) ->
        {
            if (failure != null)
                WAKE_FAILED.set(clientRequest, Errors.map(failure instanceof CompletionException ? failure.getCause() : failure));
            else
                WOKEN.set(clientRequest, route);
            try
            {
                async.dispatch();
            }
            catch (IllegalStateException x)
            {
                // The client left while it waited and the container ended the exchange: nobody to answer.
            }
        });
    }

    @Override
    protected String rewriteTarget(HttpServletRequest clientRequest)
    {
        return ForwardPolicy.sandboxTarget(ROUTE.get(clientRequest), SessionFilter.FORWARD.get(clientRequest).upstreamPath());
    }

    /**
     * The {@code Host} Jetty's client would give the request from its target: the route's authority,
     * without the port when it is HTTP's own. Set by the servlet, because a request without one has
     * the client build the target's URI twice more to find it.
     */
    private static String sandboxHost(Route route)
    {
        String authority = route.authority();
        return route.port() == 80 ? authority.substring(0, authority.lastIndexOf(':')) : authority;
    }

    @Override
    protected UpstreamClient upstreamClient()
    {
        return new UpstreamClient(ingress.config().connectTimeout(), ingress.config().destinationIdleTimeout(), Ingress.MAX_ANSWER_HEAD);
    }

    /**
     * Sends the request as Jetty's proxy does (without its debug log of the request's headers), but
     * one without a body whose connection failed before any answer began may go once more, by the
     * rule both front-ends follow ({@link SendAgain}). Jetty's client does not say whether a
     * connection was used before, so unlike the core front-end this also sends a GET again after a
     * new connection was dropped or answered with something not HTTP, as HTTP allows.
     */
    @Override
    protected void sendProxyRequest(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Request proxyRequest)
    {
        Response.CompleteListener answer = newProxyResponseListener(clientRequest, proxyResponse);
        SENT.set(clientRequest, System.nanoTime());
        String method = proxyRequest.getMethod();
        boolean withBody = proxyRequest.getBody() != null;
        if (answer instanceof Response.Listener listener)
            proxyRequest.send(new SendAgainOnce(getHttpClient(), proxyRequest, listener,
                (untouched, failure) -> SendAgain.mayGoAgain(method, false, untouched && !withBody, failure)));
        else
            proxyRequest.send(answer);
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
        Span span = ServerSpan.of(clientRequest);
        proxyRequest.headers(headers ->
        {
            policy.addForwardingHeaders(headers, SessionFilter.FORWARD.get(clientRequest), clientRequest.getRemoteAddr(), scheme, host);
            if (span != null)
                ForwardPolicy.addTraceHeaders(headers, span);
            // Last, where the client would have added it.
            headers.add(HttpHeader.HOST, sandboxHost(ROUTE.get(clientRequest)));
        });
    }

    /**
     * The sandbox's headers as {@link ForwardPolicy} lets them through, in one pass, then the
     * gateway's own. A small body of known length goes out whole with the exchange's completion:
     * its length is left to the container, which then has the body in its buffer before it commits
     * (see {@link #onResponseContent}).
     */
    @Override
    protected void onServerResponseHeaders(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse)
    {
        Long sent = SENT.get(clientRequest);
        if (sent != null)
            AccessNote.ATTRIBUTE.set(clientRequest, AccessNote.of(clientRequest).upstream(System.nanoTime() - sent));
        Forward forward = SessionFilter.FORWARD.get(clientRequest);
        Route route = ROUTE.get(clientRequest);
        boolean whole = fitsBuffer(clientRequest, proxyResponse, serverResponse);
        if (whole)
            WHOLE_BODY.set(clientRequest, Boolean.TRUE);
        HttpFields fromSandbox = serverResponse.getHeaders();
        List<String> connection = ForwardPolicy.connectionNames(fromSandbox);
        for (HttpField field : fromSandbox)
        {
            HttpField kept = policy.toBrowser(field, forward, route, connection);
            if (kept == null || (whole && kept.getHeader() == HttpHeader.CONTENT_LENGTH))
                continue;
            if (ForwardPolicy.isFirstOfName(fromSandbox, field))
                proxyResponse.setHeader(kept.getName(), kept.getValue());
            else
                proxyResponse.addHeader(kept.getName(), kept.getValue());
        }
        policy.addToBrowser(forward, ingress.clients().origin(clientRequest), field -> proxyResponse.addHeader(field.getName(), field.getValue()));
        if (fromSandbox.getLongField(HttpHeader.CONTENT_LENGTH) < 0)
        {
            STREAM.set(clientRequest, ingress.streams().add(forward.sandboxId(), route,
                () -> serverResponse.abort(new IOException("access to the sandbox was revoked, or its pod replaced, while its answer streamed"))));
        }
    }

    @Override
    protected void onProxyResponseSuccess(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse)
    {
        forgetStream(clientRequest);
        super.onProxyResponseSuccess(clientRequest, proxyResponse, serverResponse);
    }

    private static void forgetStream(HttpServletRequest clientRequest)
    {
        Runnable forget = STREAM.get(clientRequest);
        if (forget != null)
            forget.run();
    }

    /**
     * Whether the sandbox's whole body, by its declared length, fits well within the container's
     * buffer (a quarter of it, what containers aggregate without writing), so that writing it cannot
     * block. A declared length is no stream: SSE and chunked bodies have none.
     */
    private static boolean fitsBuffer(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse)
    {
        int status = serverResponse.getStatus();
        if (HttpMethod.HEAD.is(clientRequest.getMethod()) || HttpStatus.hasNoBody(status))
            return false;
        long length = serverResponse.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH);
        return length >= 0 && length <= proxyResponse.getBufferSize() / 4;
    }

    /**
     * A small body ({@link #fitsBuffer}) is written into the container's buffer, which takes it
     * without blocking, and leaves with the exchange's completion: no write listener, and so no
     * second dispatch. Anything else streams, each chunk flushed as it arrives.
     */
    @Override
    protected void onResponseContent(HttpServletRequest request, HttpServletResponse response, Response proxyResponse,
                                     byte[] buffer, int offset, int length, Callback callback)
    {
        if (WHOLE_BODY.get(request) == null)
        {
            super.onResponseContent(request, response, proxyResponse, buffer, offset, length, callback);
            return;
        }
        try
        {
            response.getOutputStream().write(buffer, offset, length);
            callback.succeeded();
        }
        catch (IOException | RuntimeException x)
        {
            callback.failed(x);
            proxyResponse.abort(x);
        }
    }

    @Override
    protected void onProxyResponseFailure(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse, Throwable failure)
    {
        forgetStream(clientRequest);
        if (proxyResponse.isCommitted())
        {
            // Headers are gone; the only honest signal left is to cut the response short.
            super.onProxyResponseFailure(clientRequest, proxyResponse, serverResponse, failure);
            return;
        }
        try
        {
            proxyResponse.reset();
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
