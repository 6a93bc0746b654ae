package io.sandgate.egress;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import io.opentelemetry.api.trace.Span;
import io.sandgate.config.EgressConfig;
import io.sandgate.tracing.Spans;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ConnectHandler;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.HostPort;
import org.eclipse.jetty.util.IO;
import org.eclipse.jetty.util.Promise;

/**
 * Forward-proxy mode of the embedded runner, for tools that only speak {@code HTTPS_PROXY}: a
 * CONNECT to the gateway is planned like a base-URL request by the {@link EgressPlanner} (route by
 * host and {@code X-Agent-Task-Type}, SSRF guard) and tunnelled through a node chosen by health,
 * region and stickiness, with a CONNECT of its own to the checked address. A node that refuses is
 * followed by another as the {@link FailurePolicy} allows.
 *
 * <p>No thread waits for DNS or for a node. The target's name is resolved on the egress face's
 * lookup threads (see {@link DnsLookups}) while the CONNECT holds none. The connection to the node
 * is made by Jetty's selector (within {@code egress.connect-timeout}); the node's side of the
 * tunnel then writes its own CONNECT and reads the answer as bytes arrive (the same timeout again,
 * as silence), and only once the node has answered 2xx is the agent answered and the relay
 * started. A node that fails either step hands the CONNECT to the next attempt, on a pooled
 * thread, as {@link TunnelAttempts} decides.
 */
public final class EgressConnectHandler extends ConnectHandler
{
    /** The request attribute holding a CONNECT's attempts between Jetty's callbacks. */
    private static final String ATTEMPTS = TunnelAttempts.class.getName();
    private static final String SPAN = EgressConnectHandler.class.getName() + ".span";

    private final Supplier<Egress> egress;
    private SelectorManager selector;

    public EgressConnectHandler(Supplier<Egress> egress, Handler next)
    {
        super(next);
        this.egress = egress;
    }

    @Override
    protected void doStart() throws Exception
    {
        // The selector connects to nodes: within the egress connect timeout, not Jetty's default.
        Egress face = egress.get();
        if (face != null)
            setConnectTimeout(face.planner().connectTimeout().toMillis());
        super.doStart();
    }

    /**
     * A request from inside an inspected tunnel ({@link TlsInspection}) is served as the base-URL
     * request {@code /egress/{tunnel's host}/{path}}: the tunnel's target, not the request's Host,
     * names where it goes. What cannot be served so is refused in words the agent reads.
     */
    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception
    {
        if (!(request.getConnectionMetaData().getAttribute(TlsInspection.TUNNEL) instanceof TlsInspection.Tunnel tunnel))
            return super.handle(request, response, callback);
        if (HttpMethod.CONNECT.is(request.getMethod()))
        {
            Response.writeError(request, response, callback, HttpStatus.BAD_REQUEST_400, "CONNECT inside an inspected tunnel");
            return true;
        }
        // A WebSocket's frames would bypass the request and response scan: refused, not relayed unread.
        if (request.getHeaders().contains(HttpHeader.UPGRADE))
        {
            Response.writeError(request, response, callback, HttpStatus.NOT_IMPLEMENTED_501,
                "protocol upgrades (WebSocket) are not served inside an inspected tunnel; use base-URL mode or a passthrough domain");
            return true;
        }
        HttpURI uri = request.getHttpURI();
        String path = uri.getPath() == null || uri.getPath().isEmpty() ? "/" : uri.getPath();
        HttpURI rewritten = HttpURI.build(uri).path(EgressServlet.PATH + "/" + tunnel.authority() + path);
        HttpFields headers = withTunnelHeaders(request.getHeaders(), tunnel);
        request.setAttribute(EgressServlet.INSPECTED.name(), tunnel);
        return getHandler().handle(new Request.Wrapper(request)
        {
            @Override
            public HttpURI getHttpURI()
            {
                return rewritten;
            }

            @Override
            public HttpFields getHeaders()
            {
                return headers;
            }
        }, response, callback);
    }

    /** The CONNECT's task type and session stand for the inner request's when it names none. */
    private static HttpFields withTunnelHeaders(HttpFields headers, TlsInspection.Tunnel tunnel)
    {
        boolean taskType = tunnel.taskType() != null && !headers.contains(EgressPlanner.TASK_TYPE);
        boolean session = tunnel.session() != null && !headers.contains(EgressPlanner.SESSION);
        if (!taskType && !session)
            return headers;
        HttpFields.Mutable added = HttpFields.build(headers);
        if (taskType)
            added.put(EgressPlanner.TASK_TYPE, tunnel.taskType());
        if (session)
            added.put(EgressPlanner.SESSION, tunnel.session());
        return added.asImmutable();
    }

    /**
     * A CONNECT whose route inspects its host is answered 200 here and its connection handed to
     * {@link TlsInspection}; any other is planned and relayed blind, as {@link #connectToServer} does.
     */
    @Override
    protected void handleConnect(Request request, Response response, Callback callback, String serverAddress)
    {
        Egress face = egress.get();
        if (face == null)
        {
            super.handleConnect(request, response, callback, serverAddress);
            return;
        }
        TlsInspection.Tunnel tunnel;
        try
        {
            HostPort target = new HostPort(serverAddress);
            String host = target.getHost().toLowerCase(java.util.Locale.ROOT);
            int port = target.getPort(443);
            RequestHeaders headers = RequestHeaders.of(request.getHeaders());
            if (!face.planner().inspects(host, port, headers, face.inspection()))
            {
                super.handleConnect(request, response, callback, serverAddress);
                return;
            }
            tunnel = new TlsInspection.Tunnel(host, port, headers.first(EgressPlanner.TASK_TYPE), headers.first(EgressPlanner.SESSION),
                face.planner().tunnelAgent(headers));
        }
        catch (GatewayException x)
        {
            onConnectFailure(request, response, callback, x);
            return;
        }
        catch (IllegalArgumentException x)
        {
            onConnectFailure(request, response, callback, GatewayException.badRequest("malformed CONNECT target"));
            return;
        }
        // Jetty puts this connection on the end point once the 200 has been written, as it does a relay's.
        request.setAttribute(HttpStream.UPGRADE_CONNECTION_ATTRIBUTE, face.inspection().open(request, tunnel));
        response.getHeaders().put(HttpFields.CONTENT_LENGTH_0);
        response.setStatus(HttpStatus.OK_200);
        callback.succeeded();
    }

    @Override
    protected SelectorManager newSelectorManager()
    {
        selector = new NodeConnects();
        return selector;
    }

    @Override
    protected void connectToServer(Request request, String host, int port, Promise<SocketChannel> promise)
    {
        Egress face = egress.get();
        if (face == null)
        {
            promise.failed(GatewayException.unavailable("gateway starting"));
            return;
        }
        CompletableFuture<EgressPlan> planned;
        try
        {
            planned = face.planner().planTunnel(host, port, RequestHeaders.of(request.getHeaders()));
        }
        catch (GatewayException x)
        {
            promise.failed(x);
            return;
        }
        // While the target's name is resolved the request thread goes; the tunnel is opened on a
        // pooled thread once the lookup has answered, not on the lookup's or the deadline's.
        if (planned.isDone())
            tunnel(face, request, planned, promise);
        else
            planned.whenComplete((plan, failure) -> dispatch(() -> tunnel(face, request, planned, promise)));
    }

    /** Starts the first attempt of a planned tunnel, or fails the CONNECT with what refused its plan. */
    private void tunnel(Egress face, Request request, CompletableFuture<EgressPlan> planned, Promise<SocketChannel> promise)
    {
        EgressPlan plan;
        try
        {
            plan = planned.join();
        }
        catch (CompletionException x)
        {
            promise.failed(Errors.map(x, Errors.Peer.EGRESS));
            return;
        }
        Span span = face.connectSpan(request.getHeaders()::get);
        if (span != null)
        {
            span.updateName("CONNECT egress " + plan.routeName());
            request.setAttribute(SPAN, span);
        }
        TunnelAttempts attempts = new TunnelAttempts(plan, face.start(plan, span), face.policy(), EgressConnectHandler::open);
        request.setAttribute(ATTEMPTS, attempts);
        SocketChannel channel = attempts.first();
        if (channel == null)
        {
            promise.failed(attempts.exhausted());
            return;
        }
        // Jetty registers the channel with its selector, which finishes the connect.
        promise.succeeded(channel);
    }

    /** Starts a non-blocking connection to the node; the selector finishes it. */
    private static SocketChannel open(EgressConfig.Node node) throws IOException
    {
        SocketChannel channel = SocketChannel.open();
        try
        {
            channel.socket().setTcpNoDelay(true);
            channel.configureBlocking(false);
            channel.connect(new InetSocketAddress(node.host(), node.port()));
            return channel;
        }
        catch (IOException | RuntimeException x)
        {
            IO.close(channel);
            throw x;
        }
    }

    private static TunnelAttempts attempts(Request request)
    {
        return (TunnelAttempts)request.getAttribute(ATTEMPTS);
    }

    @Override
    protected UpstreamConnection newUpstreamConnection(EndPoint endPoint, ConnectContext context)
    {
        return new NodeTunnel(endPoint, context, attempts(context.getRequest()));
    }

    /**
     * The current attempt's tunnel did not open: the next attempt starts, or the agent is told that
     * none opened. On a pooled thread, not the selector's: choosing a node may ask the sticky-session store.
     */
    private void attemptFailed(ConnectContext context, Throwable failure)
    {
        dispatch(() ->
        {
            TunnelAttempts attempts = attempts(context.getRequest());
            SocketChannel next = attempts.failed(failure);
            if (next != null && !isRunning())
            {
                // Stopping: the selector takes no more channels.
                IO.close(next);
                next = null;
            }
            if (next == null)
                onConnectFailure(context.getRequest(), context.getResponse(), context.getCallback(), attempts.exhausted());
            else if (next.isConnected())
                selector.accept(next, context);
            else
                selector.connect(next, context);
        });
    }

    private void dispatch(Runnable task)
    {
        try
        {
            getExecutor().execute(task);
        }
        catch (RejectedExecutionException x)
        {
            // Stopping: the remaining steps only fail the CONNECT, which needs no other thread.
            task.run();
        }
    }

    /** A session that had to leave its pinned node is told so, as on the base-URL face. */
    @Override
    protected void onConnectSuccess(ConnectContext context, UpstreamConnection upstream)
    {
        if (attempts(context.getRequest()).repinned())
            context.getResponse().getHeaders().put(EgressServlet.STICKY, "repinned");
        endSpan(context.getRequest(), HttpStatus.OK_200);
        super.onConnectSuccess(context, upstream);
    }

    @Override
    protected void onConnectFailure(Request request, Response response, Callback callback, Throwable failure)
    {
        int status = failure instanceof GatewayException g ? g.status() : HttpStatus.BAD_GATEWAY_502;
        // A tunnel over its agent's budget says when to try again, as a base-URL call does.
        if (failure instanceof GatewayException g && g.retryAfterSeconds() > 0)
            response.getHeaders().put(HttpHeader.RETRY_AFTER, Long.toString(g.retryAfterSeconds()));
        if (failure instanceof GatewayException g && g.challenge() != null)
            response.getHeaders().put(Errors.challengeHeader(g), g.challenge());
        endSpan(request, status);
        Response.writeError(request, response, callback, status, failure instanceof GatewayException ? failure.getMessage() : "egress failed");
    }

    /** Ends the CONNECT's span, if it is traced, with the status the agent gets. */
    private static void endSpan(Request request, int status)
    {
        if (request.removeAttribute(SPAN) instanceof Span span)
            Spans.endServer(span, status);
    }

    /** Jetty's selector for tunnels, with a node that could not be reached handed to the next attempt. */
    private final class NodeConnects extends ConnectManager
    {
        NodeConnects()
        {
            super(EgressConnectHandler.this.getExecutor(), EgressConnectHandler.this.getScheduler(), 1);
        }

        @Override
        protected void connectionFailed(SelectableChannel channel, Throwable failure, Object attachment)
        {
            IO.close(channel);
            attemptFailed((ConnectContext)attachment, failure);
        }

        @Override
        protected void onAcceptFailed(SelectableChannel channel, Throwable failure, Object attachment)
        {
            IO.close(channel);
            attemptFailed((ConnectContext)attachment, failure);
        }
    }

    /**
     * The node's side of a tunnel. It first asks the node for the tunnel to the checked address, and
     * only when the node answers 2xx does it become Jetty's upstream connection: the agent is
     * answered 200 and the relay starts. Until then nothing of the agent's is read, and the
     * connection counts silence beyond the connect timeout as the node's failure.
     */
    private final class NodeTunnel extends UpstreamConnection
    {
        private final ConnectContext context;
        private final TunnelAttempts attempts;
        private final TunnelReply reply = new TunnelReply();
        /** Set once the handshake has ended, either way; read by every callback of the handshake. */
        private final AtomicBoolean ended = new AtomicBoolean();

        NodeTunnel(EndPoint endPoint, ConnectContext context, TunnelAttempts attempts)
        {
            super(endPoint, EgressConnectHandler.this.getExecutor(), EgressConnectHandler.this.getByteBufferPool(), context);
            this.context = context;
            this.attempts = attempts;
        }

        @Override
        public void onOpen()
        {
            attempts.connected();
            getEndPoint().setIdleTimeout(attempts.plan().timeouts().connect().toMillis());
            ByteBuffer head = ByteBuffer.wrap(attempts.plan().target().connectRequestHead());
            getEndPoint().write(Callback.from(this::fillInterested, this::handshakeFailed), head);
        }

        @Override
        public void onFillable()
        {
            if (ended.get())
            {
                super.onFillable();
                return;
            }
            try
            {
                while (true)
                {
                    ByteBuffer bytes = BufferUtil.allocate(reply.room());
                    int read = getEndPoint().fill(bytes);
                    if (read < 0)
                        throw new IOException("egress node closed the tunnel");
                    if (read == 0)
                    {
                        fillInterested();
                        return;
                    }
                    attempts.answered();
                    if (reply.feed(bytes))
                    {
                        reply.requireSuccess();
                        handshakeSucceeded();
                        return;
                    }
                }
            }
            catch (IOException x)
            {
                handshakeFailed(x);
            }
        }

        private void handshakeSucceeded()
        {
            if (!ended.compareAndSet(false, true))
                return;
            getEndPoint().setIdleTimeout(EgressConnectHandler.this.getIdleTimeout());
            attempts.opened();
            // Answers the agent and starts relaying, as Jetty does once it has connected.
            dispatch(NodeTunnel.super::onOpen);
        }

        private void handshakeFailed(Throwable failure)
        {
            if (!ended.compareAndSet(false, true))
                return;
            getEndPoint().close(failure);
            attemptFailed(context, failure);
        }

        @Override
        public boolean onIdleExpired(TimeoutException timeout)
        {
            if (ended.get())
                return super.onIdleExpired(timeout);
            handshakeFailed(timeout);
            return false;
        }

        @Override
        public void onFillInterestedFailed(Throwable cause)
        {
            if (ended.get())
                super.onFillInterestedFailed(cause);
            else
                handshakeFailed(cause);
        }

        @Override
        public void onClose(Throwable cause)
        {
            handshakeFailed(cause == null ? new ClosedChannelException() : cause);
            super.onClose(cause);
        }
    }
}
