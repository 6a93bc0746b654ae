package io.sandgate.egress;

import java.io.IOException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.nio.channels.WritePendingException;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.config.EgressConfig;
import io.sandgate.leak.LeakScanner;
import io.sandgate.web.AccessNote;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import io.sandgate.web.RequestAttribute;
import io.sandgate.web.StreamingProxyServlet;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.client.AsyncRequestContent;
import org.eclipse.jetty.client.HttpResponseException;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Servlet glue of the egress face, base-URL mode: {@code /egress/{host}/{path}} goes to
 * {@code https://{host}/{path}} (or http where the route says so) through an egress node chosen by
 * {@link Egress}. A request that fails on a node before anything was sent to the agent is retried
 * on another node when that is safe: an idempotent method without a body (or a route that allows
 * more), within the route's retry count and the retry budget, after an exponential back-off with
 * full jitter.
 */
public final class EgressServlet extends StreamingProxyServlet
{
    private static final Logger LOG = LoggerFactory.getLogger(EgressServlet.class);
    public static final String TASK_TYPE = "X-Agent-Task-Type";
    public static final String SESSION = "X-Agent-Session";
    /** Response header naming the node that carried the exchange. */
    public static final String NODE = "X-Sandgate-Egress-Node";
    /** Response header set when a sticky session had to move to another node. */
    public static final String STICKY = "X-Sandgate-Sticky";
    /** {@code host}, {@code host:port}, {@code [v6]} or {@code [v6]:port}; the guard judges what the host is. */
    private static final Pattern AUTHORITY = Pattern.compile("(\\[[0-9A-Fa-f:.]{2,45}]|[A-Za-z0-9.-]{1,253})(?::(\\d{1,5}))?");
    private static final Set<String> IDEMPOTENT = Set.of("GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE");
    private static final RequestAttribute<Exchange> EXCHANGE = RequestAttribute.of("egress.exchange", Exchange.class);
    /** Set on requests that came in as absolute-form forward-proxy requests: their target is plain http. */
    public static final RequestAttribute<Boolean> FORWARD_PROXY = RequestAttribute.of("egress.forward-proxy", Boolean.class);

    private final Egress egress;
    private final Credentials credentials;
    private final LeakGuard leaks;

    public EgressServlet(Egress egress, Credentials credentials, LeakGuard leaks)
    {
        this.egress = egress;
        this.credentials = credentials;
        this.leaks = leaks;
    }

    /** One agent request across its attempts. */
    private static final class Exchange
    {
        final EgressConfig.Route route;
        final String target;
        final String stickyKey;
        final long start = System.nanoTime();
        final Set<String> tried = new HashSet<>();
        final Credentials.Injection injection;
        final PinnedTarget pinned;
        NodeState node;
        /** Leak scanning of the response body, opened at its first chunk. */
        LeakScanner.Stream responseScan;
        boolean repinned;
        int attempts;
        java.util.concurrent.ScheduledFuture<?> deadline;

        void cancelDeadline()
        {
            if (deadline != null)
                deadline.cancel(false);
        }

        Exchange(EgressConfig.Route route, String target, String stickyKey, Credentials.Injection injection, PinnedTarget pinned)
        {
            this.pinned = pinned;
            this.route = route;
            this.target = target;
            this.stickyKey = stickyKey;
            this.injection = injection;
        }
    }

    /** The node answered for itself with a 5xx (marked by a node-error header): its failure, not the target's. */
    private static final class NodeFailure extends Exception
    {
        NodeFailure(int status)
        {
            super("egress node answered " + status, null, false, false);
        }
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws ServletException, IOException
    {
        AccessNote.face(request, AccessNote.Face.EGRESS);
        try
        {
            String path = request.getRequestURI().substring(request.getContextPath().length() + "/egress/".length());
            int slash = path.indexOf('/');
            // Clients percent-encode the brackets of an IPv6 literal in a path segment.
            String authority = (slash < 0 ? path : path.substring(0, slash)).replace("%5B", "[").replace("%5b", "[").replace("%5D", "]").replace("%5d", "]");
            Matcher parsed = AUTHORITY.matcher(authority);
            if (!parsed.matches() || authority.startsWith(".") || authority.contains(".."))
                throw GatewayException.badRequest("malformed target host in /egress/{host}/...");
            String host = parsed.group(1).toLowerCase(Locale.ROOT);
            int port = parsed.group(2) == null ? -1 : Integer.parseInt(parsed.group(2));
            if (port > 65535)
                throw GatewayException.badRequest("malformed target port in /egress/{host}:{port}/...");
            String taskType = request.getHeader(TASK_TYPE);
            Optional<EgressConfig.Route> route = egress.route(host, taskType);
            if (route.isEmpty())
                throw GatewayException.forbidden("no egress route for " + host + (taskType == null ? "" : " and task type " + taskType));
            String scheme = Boolean.TRUE.equals(FORWARD_PROXY.get(request)) ? "http" : route.get().scheme();
            Credentials.Injection injection = null;
            if (route.get().credential().isPresent())
            {
                if (!scheme.equals("https"))
                    throw GatewayException.forbidden("credential " + route.get().credential().get() + " is only sent over https (use /egress/" + host + "/...)");
                injection = credentials.authorize(request::getHeader, route.get(), host);
            }
            else
                credentials.refuseInternalToken(request::getHeader, host);
            String query = request.getQueryString();
            if (route.get().scan() != EgressConfig.ScanMode.OFF)
                scanRequestLine(request, route.get(), path, query);
            if (injection != null)
                query = injection.intoQuery(query);
            // Checked once per exchange: retries on other nodes go to the same checked address.
            PinnedTarget pinned = PinnedTarget.check(egress.guard(), scheme, host, port);
            String target = pinned.uri((slash < 0 ? "/" : path.substring(slash)) + (query == null ? "" : "?" + query)).toString();
            Exchange exchange = new Exchange(route.get(), target, request.getHeader(SESSION), injection, pinned);
            egress.requestStarted();
            choose(exchange);
            EXCHANGE.set(request, exchange);
        }
        catch (RuntimeException x)
        {
            Errors.write(request, response, Errors.map(x, Errors.Peer.EGRESS));
            return;
        }
        super.service(request, response);
    }

    /**
     * What the scanner cannot read it must not pass: a compressed body would hide a key from it.
     * A secret in the path or query is caught here, before anything is sent.
     */
    private void scanRequestLine(HttpServletRequest request, EgressConfig.Route route, String path, String query)
    {
        String encoding = request.getHeader(HttpHeader.CONTENT_ENCODING.asString());
        if (encoding != null && !encoding.equalsIgnoreCase("identity"))
            throw new GatewayException(415, "encoded_body", "request bodies with Content-Encoding " + encoding
                + " cannot be scanned for secrets; send them uncompressed");
        GatewayException blocked = leaks.onHits(leaks.scan(path + (query == null ? "" : "?" + query)), route, route.scan(), "request");
        if (blocked != null)
            throw blocked;
    }

    private void choose(Exchange exchange)
    {
        Egress.Choice choice = egress.choose(exchange.route, exchange.stickyKey, exchange.tried);
        if (choice == null)
            throw GatewayException.unavailable("no egress node available in pool " + exchange.route.pool());
        exchange.node = choice.node();
        exchange.repinned |= choice.repinned();
        exchange.tried.add(choice.node().node().id());
        exchange.attempts++;
    }

    @Override
    protected String rewriteTarget(HttpServletRequest clientRequest)
    {
        return EXCHANGE.get(clientRequest).target;
    }

    /** The request goes out on the chosen node's own client, whose proxy is that node. */
    @Override
    protected Request newProxyRequest(HttpServletRequest request, String rewrittenTarget)
    {
        Exchange exchange = EXCHANGE.get(request);
        return egress.client(exchange.node.node().id()).newRequest(rewrittenTarget).tag(exchange.pinned)
            .method(request.getMethod())
            .attribute(CLIENT_REQUEST_ATTRIBUTE, request);
    }

    /** The agent's own routing headers stay here; nothing says which agent or gateway made the call. */
    @Override
    protected void copyRequestHeaders(HttpServletRequest clientRequest, Request proxyRequest)
    {
        super.copyRequestHeaders(clientRequest, proxyRequest);
        Exchange exchange = EXCHANGE.get(clientRequest);
        Credentials.Injection injection = exchange.injection;
        proxyRequest.headers(headers ->
        {
            headers.remove(TASK_TYPE);
            headers.remove(SESSION);
            headers.remove("X-Forwarded-For");
            headers.remove("Forwarded");
            if (exchange.route.scan() == EgressConfig.ScanMode.REDACT)
                headers.remove(HttpHeader.CONTENT_LENGTH); // a redacted body has another length: send it chunked
            if (injection != null)
            {
                // The internal token stops here, wherever the SDK put it; the real key takes its place.
                Credentials.TOKEN_HEADERS.forEach(headers::remove);
                injection.header().ifPresent(name -> headers.put(name, injection.value()));
            }
            if (exchange.route.scanResponses() && exchange.route.scan() != EgressConfig.ScanMode.OFF)
                headers.put(HttpHeader.ACCEPT_ENCODING, "identity"); // a compressed answer could not be scanned
        });
    }

    @Override
    protected void addProxyHeaders(HttpServletRequest clientRequest, Request proxyRequest)
    {
        // No Via or Forwarded: an agent's outbound call must not reveal internal addresses.
    }

    @Override
    protected void sendProxyRequest(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Request proxyRequest)
    {
        Exchange exchange = EXCHANGE.get(clientRequest);
        long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(exchange.route.timeout().toNanos() - (System.nanoTime() - exchange.start)));
        // The hard limit is 1.5x the route's timeout: an exchange whose region failed over while it
        // was in flight may use the extra half to finish instead of being cut with the region.
        proxyRequest.timeout(left * 3 / 2, TimeUnit.MILLISECONDS);
        proxyRequest.idleTimeout(exchange.route.idleTimeout().toMillis(), TimeUnit.MILLISECONDS);
        NodeState node = exchange.node;
        String pool = exchange.route.pool();
        exchange.cancelDeadline();
        exchange.deadline = egress.deadline(left, () ->
        {
            if (!egress.regionFailingOver(pool, node))
                proxyRequest.abort(new TimeoutException("total timeout " + exchange.route.timeout() + " exceeded"));
        });
        super.sendProxyRequest(clientRequest, proxyResponse, proxyRequest);
    }

    @Override
    protected void onServerResponseHeaders(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse)
    {
        if (serverResponse.getStatus() >= 500)
        {
            for (String header : egress.config().nodeErrorHeaders())
            {
                HttpField field = serverResponse.getHeaders().getField(header);
                if (field != null)
                {
                    serverResponse.abort(new NodeFailure(serverResponse.getStatus()));
                    return;
                }
            }
        }
        super.onServerResponseHeaders(clientRequest, proxyResponse, serverResponse);
        Exchange exchange = EXCHANGE.get(clientRequest);
        if (exchange.route.scanResponses() && exchange.route.scan() == EgressConfig.ScanMode.REDACT)
            proxyResponse.setHeader(HttpHeader.CONTENT_LENGTH.asString(), null);
        proxyResponse.setHeader(NODE, exchange.node.node().id());
        if (exchange.repinned)
            proxyResponse.setHeader(STICKY, "repinned");
    }

    /**
     * A target that repeats the injected key in a header (a redirect's Location carrying the query,
     * a debug echo) must not hand it to the agent.
     */
    @Override
    protected String filterServerResponseHeader(HttpServletRequest clientRequest, Response serverResponse, String headerName, String headerValue)
    {
        String value = super.filterServerResponseHeader(clientRequest, serverResponse, headerName, headerValue);
        return value == null || EXCHANGE.get(clientRequest).injection == null ? value : leaks.redactor().text(value);
    }

    /** Request bodies on scanning routes are read through the leak scanner. */
    @Override
    protected ReadListener newReadListener(HttpServletRequest request, HttpServletResponse response, Request proxyRequest, AsyncRequestContent content)
    {
        Exchange exchange = EXCHANGE.get(request);
        LeakScanner.Stream scan = leaks.open(exchange.route.scan());
        return scan == null ? super.newReadListener(request, response, proxyRequest, content)
            : new ScanningReader(request, response, proxyRequest, content, exchange, scan);
    }

    /** Feeds each chunk to the scanner and sends on what it releases; a hit on a blocking route aborts the exchange. */
    private final class ScanningReader extends StreamReader
    {
        private final Request proxyRequest;
        private final AsyncRequestContent content;
        private final Exchange exchange;
        private final LeakScanner.Stream scan;

        ScanningReader(HttpServletRequest request, HttpServletResponse response, Request proxyRequest, AsyncRequestContent content,
                       Exchange exchange, LeakScanner.Stream scan)
        {
            super(request, response, proxyRequest, content);
            this.proxyRequest = proxyRequest;
            this.content = content;
            this.exchange = exchange;
            this.scan = scan;
        }

        @Override
        protected void onRequestContent(HttpServletRequest request, Request proxyRequest, AsyncRequestContent content,
                                        byte[] buffer, int offset, int length, Callback callback)
        {
            LeakScanner.Chunk chunk = scan.feed(ByteBuffer.wrap(buffer, offset, length));
            GatewayException blocked = leaks.onHits(chunk.hits(), exchange.route, exchange.route.scan(), "request");
            if (blocked != null)
            {
                callback.failed(blocked);
                proxyRequest.abort(blocked);
            }
            else if (chunk.output().hasRemaining())
                content.write(chunk.output(), callback);
            else
                callback.succeeded();
        }

        @Override
        public void onAllDataRead()
        {
            LeakScanner.Chunk last = scan.finish();
            GatewayException blocked = leaks.onHits(last.hits(), exchange.route, exchange.route.scan(), "request");
            if (blocked != null)
            {
                proxyRequest.abort(blocked);
                return;
            }
            if (last.output().hasRemaining())
                content.write(last.output(), Callback.NOOP);
            super.onAllDataRead();
        }
    }

    /** Response bodies of routes that scan them go through the scanner before reaching the agent. */
    @Override
    protected void onResponseContent(HttpServletRequest request, HttpServletResponse response, Response proxyResponse,
                                     byte[] buffer, int offset, int length, Callback callback)
    {
        Exchange exchange = EXCHANGE.get(request);
        if (!exchange.route.scanResponses() || exchange.route.scan() == EgressConfig.ScanMode.OFF)
        {
            super.onResponseContent(request, response, proxyResponse, buffer, offset, length, callback);
            return;
        }
        if (exchange.responseScan == null)
            exchange.responseScan = leaks.open(exchange.route.scan());
        LeakScanner.Chunk chunk = exchange.responseScan.feed(ByteBuffer.wrap(buffer, offset, length));
        GatewayException blocked = leaks.onHits(chunk.hits(), exchange.route, exchange.route.scan(), "response");
        if (blocked != null)
        {
            callback.failed(blocked);
            proxyResponse.abort(blocked);
            return;
        }
        writeReleased(request, response, proxyResponse, chunk.output(), callback);
    }

    private void writeReleased(HttpServletRequest request, HttpServletResponse response, Response proxyResponse, ByteBuffer output, Callback callback)
    {
        if (!output.hasRemaining())
        {
            callback.succeeded();
            return;
        }
        byte[] bytes = new byte[output.remaining()];
        output.get(bytes);
        super.onResponseContent(request, response, proxyResponse, bytes, 0, bytes.length, callback);
    }

    @Override
    protected void onProxyResponseSuccess(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse)
    {
        Exchange exchange = EXCHANGE.get(clientRequest);
        if (exchange.responseScan != null)
        {
            // The bytes held back for a secret that might have been starting go out last.
            LeakScanner.Chunk last = exchange.responseScan.finish();
            exchange.responseScan = null;
            GatewayException blocked = leaks.onHits(last.hits(), exchange.route, exchange.route.scan(), "response");
            if (blocked != null)
            {
                onProxyResponseFailure(clientRequest, proxyResponse, serverResponse, blocked);
                return;
            }
            writeReleased(clientRequest, proxyResponse, serverResponse, last.output(), Callback.from(
                () -> onProxyResponseSuccess(clientRequest, proxyResponse, serverResponse),
                x -> onProxyResponseFailure(clientRequest, proxyResponse, serverResponse, x)));
            return;
        }
        exchange.cancelDeadline();
        egress.recordResult(exchange.route.pool(), exchange.node, "ok", true);
        egress.latency(exchange.route.domains().get(0)).record(System.nanoTime() - exchange.start, TimeUnit.NANOSECONDS);
        super.onProxyResponseSuccess(clientRequest, proxyResponse, serverResponse);
    }

    @Override
    protected void onProxyResponseFailure(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse, Throwable failure)
    {
        Exchange exchange = EXCHANGE.get(clientRequest);
        exchange.cancelDeadline();
        boolean nodeFault = isNodeFault(failure, serverResponse);
        // A body stopped for holding a secret is the agent's doing, not a failed exchange.
        String outcome = nodeFault ? "node_failure" : failure instanceof GatewayException g && g.status() == 422 ? "blocked" : "failure";
        egress.recordResult(exchange.route.pool(), exchange.node, outcome, !nodeFault);
        if (!proxyResponse.isCommitted() && (nodeFault || isUnsent(failure)) && mayRetry(clientRequest, exchange) && egress.allowRetry())
        {
            try
            {
                choose(exchange);
                exchange.responseScan = null; // held-back bytes of the failed attempt are not part of the next one
                long backoff = backoffMillis(exchange.attempts - 1);
                proxyResponse.reset();
                retryLater(clientRequest, proxyResponse, backoff);
                return;
            }
            catch (GatewayException noNode)
            {
                // No other node: answer with the failure below.
            }
        }
        if (proxyResponse.isCommitted())
        {
            super.onProxyResponseFailure(clientRequest, proxyResponse, serverResponse, failure);
            return;
        }
        try
        {
            proxyResponse.reset();
            GatewayException mapped = Errors.map(failure, Errors.Peer.EGRESS);
            GatewayException error = nodeFault && mapped.status() != 504
                ? new GatewayException(502, "egress_node_failed", "the egress node failed (tried " + exchange.tried.size() + ")")
                : mapped;
            if (error.status() == 500)
                LOG.warn("Egress exchange to route {} failed unexpectedly", exchange.route.domains().get(0), failure);
            Errors.write(clientRequest, proxyResponse, error);
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

    /**
     * Whether the failure is the node's: it refused or dropped the connection, timed out before
     * answering, failed the CONNECT tunnel, or marked a 5xx as its own. A slow target that has
     * started answering, or a 4xx/5xx from the target, is not the node's fault.
     */
    private static boolean isNodeFault(Throwable failure, Response serverResponse)
    {
        for (Throwable t = failure; t != null; t = t.getCause())
        {
            if (t instanceof NodeFailure || t instanceof ConnectException || t instanceof HttpResponseException
                || t instanceof java.nio.channels.ClosedChannelException || t instanceof java.io.EOFException)
                return true;
            if (t instanceof TimeoutException)
                return serverResponse == null || serverResponse.getStatus() == 0;
        }
        return false;
    }

    /**
     * Whether the request failed before any of it was written: Jetty's client can fail a request on a
     * freshly opened CONNECT tunnel with a WritePendingException when the node answers the CONNECT
     * before the client has finished writing it (seen on loopback under load). Nothing reached the
     * target, and it is not the node's fault: worth another attempt, not an ejection.
     */
    private static boolean isUnsent(Throwable failure)
    {
        for (Throwable t = failure; t != null; t = t.getCause())
        {
            if (t instanceof WritePendingException)
                return true;
        }
        return false;
    }

    private boolean mayRetry(HttpServletRequest request, Exchange exchange)
    {
        if (exchange.attempts > exchange.route.retry())
            return false;
        boolean idempotent = IDEMPOTENT.contains(request.getMethod()) || exchange.route.retryNonIdempotent();
        // A body has been streamed to the failed node and cannot be replayed.
        return idempotent && !hasContent(request);
    }

    private long backoffMillis(int retry)
    {
        long cap = egress.config().retryBackoff().toMillis() << Math.min(retry, 10);
        return ThreadLocalRandom.current().nextLong(cap + 1);
    }

    private void retryLater(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, long delayMillis)
    {
        Runnable resend = () ->
        {
            Exchange exchange = EXCHANGE.get(clientRequest);
            Request proxyRequest = newProxyRequest(clientRequest, exchange.target);
            copyRequestHeaders(clientRequest, proxyRequest);
            addProxyHeaders(clientRequest, proxyRequest);
            sendProxyRequest(clientRequest, proxyResponse, proxyRequest);
        };
        if (delayMillis <= 0)
            resend.run();
        else
            CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS).execute(resend);
    }
}
