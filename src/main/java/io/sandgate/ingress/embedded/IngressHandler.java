package io.sandgate.ingress.embedded;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.sandgate.config.IngressConfig;
import io.sandgate.ingress.CanonicalPath;
import io.sandgate.ingress.ForwardPolicy;
import io.sandgate.ingress.Ingress;
import io.sandgate.ingress.IngressDecision.Redirect;
import io.sandgate.ingress.IngressDecision;
import io.sandgate.ingress.IngressRequest;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.SandboxHead.Body;
import io.sandgate.ingress.SendAgain;
import io.sandgate.tracing.Spans;
import io.sandgate.tracing.TraceAttributes;
import io.sandgate.tracing.TraceHeaders;
import io.sandgate.tracing.Tracing;
import io.sandgate.web.AccessLog;
import io.sandgate.web.AccessNote;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.ClientLimitFilter;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import io.sandgate.web.LogContext;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;

/**
 * The ingress face on Jetty's core API, for the embedded runner: plain HTTP to sandboxes without
 * the servlet layer. It decides as the servlet path does ({@link Ingress}, {@link ForwardPolicy},
 * the same per-client limit and access log) and forwards on its own connections to sandboxes
 * ({@link SandboxLinks}): the request head written in one pass over the client's header fields, the
 * sandbox's answer relayed as it is parsed, straight from the connection's read buffer, every step
 * completed through callbacks.
 *
 * <p>It takes what the ingress servlet mapping takes ({@link Ingress#serves}) on the listener that
 * serves ingress, except WebSocket upgrades, and declines the rest: the handler after it (the
 * servlet context, with the WebSocket bridge, MCP, egress and operations) serves those.</p>
 *
 * <p>It never waits, and says so, so that Jetty may run it on the thread that parsed the request: a
 * route the store must be asked for is read without holding a thread, and a grant redemption is
 * decided on the server's pool ({@link Ingress#decideAndRoute}). Its connections share the server's
 * pool, and read the sandbox's response on their own selectors, since nothing they do with a
 * response waits either.</p>
 */
public final class IngressHandler extends Handler.Abstract.NonBlocking
{
    /** The host a Via entry names, as Jetty's proxies name it. */
    private static final String VIA_HOST = viaHost();
    /** The status logged for an exchange whose browser left before its answer, as nginx logs it. */
    private static final int CLIENT_CLOSED = 499;
    /** Nearly every request's Via entry, built once. */
    private static final String VIA_HTTP_1_1 = "1.1 " + VIA_HOST;

    private final Ingress ingress;
    /** The request header that names a sandbox ({@code ingress.header}). */
    private final String sandboxHeaderName;
    private final ForwardPolicy policy;
    private final ClientInfo clients;
    private final ClientLimitFilter limit;
    private final AccessLog log;
    /** Null when tracing is off: then no span, and nothing built for one, on this path. */
    private final Tracer tracer;
    private final IngressConnector connector;
    private Executor executor;
    private volatile SandboxLinks links;

    /**
     * @param limit the per-client limit the servlets also count against
     * @param log where each exchange is counted and logged
     * @param tracing where each exchange's server span goes
     * @param connector the listener that serves ingress; requests on any other one are declined
     */
    public IngressHandler(Ingress ingress, ClientLimitFilter limit, AccessLog log, Tracing tracing, IngressConnector connector, MeterRegistry registry)
    {
        this.ingress = ingress;
        this.sandboxHeaderName = ingress.config().header();
        this.policy = ingress.policy();
        this.clients = ingress.clients();
        this.limit = limit;
        this.log = log;
        this.tracer = tracing.tracer();
        this.connector = connector;
        // Read from whichever links the handler has when scraped: a restart makes new ones.
        for (SandboxLinks.State state : SandboxLinks.State.values())
            Gauge.builder("sandgate.ingress.sandbox.connections", this, handler -> handler.count(state)).tag("state", state.label())
                .description("The core front-end's connections to sandboxes: busy with an exchange, idle in a pool, or requests waiting for one")
                .register(registry);
    }

    private double count(SandboxLinks.State state)
    {
        SandboxLinks current = links;
        return current == null ? 0 : current.count(state);
    }

    private static String viaHost()
    {
        try
        {
            return InetAddress.getLocalHost().getHostName();
        }
        catch (UnknownHostException x)
        {
            return "localhost";
        }
    }

    @Override
    protected void doStart() throws Exception
    {
        executor = getServer().getThreadPool();
        IngressConfig config = ingress.config();
        links = new SandboxLinks(connector, executor, getServer().getScheduler(), getServer().getByteBufferPool(), config.connectTimeout(),
            config.idleTimeout(), config.destinationIdleTimeout(), config.maxConnectionsPerSandbox());
        addBean(links, true);
        super.doStart();
    }

    @Override
    protected void doStop() throws Exception
    {
        super.doStop();
        removeBean(links);
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback)
    {
        if (request.getConnectionMetaData().getConnector() != connector)
            return false;
        HttpURI uri = request.getHttpURI();
        // Decoded, without dot segments and parameters: the path a servlet mapping matches on.
        String path = uri.getDecodedPath();
        if (path == null || ForwardPolicy.isWebSocketUpgrade(request.getMethod(), request.getHeaders().get(HttpHeader.UPGRADE)))
            return false;
        View client = new View(request);
        if (!ingress.serves(path, client))
            return false;
        Exchange exchange = new Exchange(request, response, callback, client);
        if (tracer != null)
            exchange.span = Spans.server(tracer, request.getMethod(), request.getHeaders()::get);
        String address = clients.clientAddress(client);
        Runnable release = limit.tryAcquire(address);
        if (release == null)
        {
            exchange.refuse(limit.tooMany());
            return true;
        }
        exchange.admitted(release);
        CompletableFuture<Ingress.Routed> routing = decideAndRoute(request, uri, path, client, address);
        // Mostly decided at once (a cached route); a route the store is asked for, or a grant to
        // redeem, completes elsewhere, and the forward goes on from the pool.
        if (routing.isDone())
            exchange.routed(routing);
        else
            routing.whenCompleteAsync((routed, failure) -> exchange.routed(routing), executor);
        return true;
    }

    private CompletableFuture<Ingress.Routed> decideAndRoute(Request request, HttpURI uri, String path, View client, String address)
    {
        try
        {
            return ingress.decideAndRoute(ingressRequest(request, uri, path, client), "https".equals(clients.scheme(client)), address, executor);
        }
        catch (RuntimeException x)
        {
            // A path that does not mean what it was routed on.
            return CompletableFuture.failedFuture(x);
        }
    }

    /** What session resolution reads, as {@code SessionFilter} reads it from a servlet request. */
    private IngressRequest ingressRequest(Request request, HttpURI uri, String decodedPath, View client)
    {
        String path = CanonicalPath.of(uri.getPath(), decodedPath);
        // One pass for what the resolver reads; of a field sent twice, the first counts, as HttpFields.get takes it.
        List<String> sessionCookies = new ArrayList<>(1);
        String referer = null;
        String sandboxHeader = null;
        String pageOrigin = null;
        for (HttpField field : request.getHeaders())
        {
            HttpHeader header = field.getHeader();
            if (header == HttpHeader.COOKIE)
                policy.addSessionCookies(field.getValue(), sessionCookies);
            else if (header == HttpHeader.REFERER && referer == null)
                referer = field.getValue();
            else if (header == HttpHeader.ORIGIN && pageOrigin == null)
                pageOrigin = field.getValue();
            if (sandboxHeader == null && field.is(sandboxHeaderName))
                sandboxHeader = field.getValue();
        }
        return new IngressRequest(request.getMethod(), path, uri.getQuery(), origin(client), referer, sessionCookies, sandboxHeader, pageOrigin);
    }

    private String origin(View client)
    {
        if (client.origin == null)
            client.origin = clients.origin(client);
        return client.origin;
    }

    /** The request head the sandbox gets, its fields as {@link ForwardPolicy#requestHead} writes them. */
    private RetainableByteBuffer head(Exchange exchange, Body body, ByteBufferPool pool)
    {
        Request request = exchange.request;
        View client = exchange.client;
        RequestHead head = RequestHead.start(request.getMethod(), exchange.forward.upstreamPath());
        policy.requestHead(head, request.getHeaders(), clients.isTrusted(client.remoteAddr()), viaOf(request), exchange.forward,
            client.remoteAddr(), clients.scheme(client), clients.host(client), exchange.route.authority(), body, request.getLength(), exchange.span);
        return head.finish(pool);
    }

    /** What a Via entry says of the client's hop: {@code 1.1 host} for HTTP/1.1, as Jetty's proxies write it. */
    private static String viaOf(Request request)
    {
        String protocol = request.getConnectionMetaData().getProtocol();
        if ("HTTP/1.1".equals(protocol))
            return VIA_HTTP_1_1;
        return (protocol.startsWith("HTTP/") ? protocol.substring(5) : protocol) + " " + VIA_HOST;
    }

    /** How the browser's body goes on, as Jetty's proxies judge it: a length, or a body of unknown length sent chunked. */
    private static Body body(Request request)
    {
        long length = request.getLength();
        if (length > 0)
            return Body.AS_IS;
        if (length == 0)
            return Body.NONE;
        HttpFields headers = request.getHeaders();
        return headers.contains(HttpHeader.TRANSFER_ENCODING) || headers.contains(HttpHeader.CONTENT_TYPE)
            ? Body.CHUNKED : Body.NONE;
    }

    /**
     * One request through this handler, from the decision to the end of its exchange, which gives
     * the client's place back and is counted and logged. It is the callback the proxy completes.
     */
    private final class Exchange extends Callback.Nested implements SandboxLink.Exchange
    {
        private final Request request;
        private final Response response;
        private final View client;
        private final long start = System.nanoTime();
        /** The exchange's server span; null when tracing is off. */
        private Span span;
        private Runnable release;
        private AccessNote note;
        private IngressDecision.Forward forward;
        private Route route;
        private String origin;
        private Body body;
        /** Whether the request was sent again on another connection, after the sandbox closed the first as it was taken. */
        private boolean retried;
        /** Forgets this exchange's stream, if its answer is one. */
        private Runnable forgetStream;
        /** When the request was handed to the sandbox's connections, and then how long its answer's head took. */
        private long sent;
        private long upstream = -1;

        Exchange(Request request, Response response, Callback callback, View client)
        {
            super(callback);
            this.request = request;
            this.response = response;
            this.client = client;
        }

        /** The client had room for this request: it counts as ingress from now on, and gives its place back at the end. */
        void admitted(Runnable release)
        {
            this.release = release;
            note = new AccessNote(AccessNote.Face.INGRESS, null, null);
        }

        /** Goes on with the decision, on whichever thread it completed. */
        void routed(CompletableFuture<Ingress.Routed> routing)
        {
            Ingress.Routed routed;
            try
            {
                routed = routing.join();
            }
            catch (CompletionException x)
            {
                refuse(Errors.map(x.getCause()));
                return;
            }
            catch (RuntimeException x)
            {
                refuse(Errors.map(x));
                return;
            }
            if (routed.decision() instanceof Redirect redirect)
            {
                response.setStatus(redirect.status());
                redirect.addHeaders(response.getHeaders()::add);
                response.write(true, BufferUtil.EMPTY_BUFFER, this);
                return;
            }
            forward = (IngressDecision.Forward)routed.decision();
            route = routed.route();
            origin = origin(client);
            note = new AccessNote(AccessNote.Face.INGRESS, forward.sandboxId(), forward.source().label());
            if (span != null)
                policy.describe(span, request.getMethod(), forward);
            try
            {
                body = IngressHandler.body(request);
                // Timed from here, a new connection's opening included, as on the servlet path; for
                // the access line and the sandboxes' histogram alike.
                sent = System.nanoTime();
                links.send(route, this, false);
            }
            catch (RuntimeException x)
            {
                refuse(Errors.map(x));
            }
        }

        @Override
        public Request request()
        {
            return request;
        }

        @Override
        public Response response()
        {
            return response;
        }

        @Override
        public RetainableByteBuffer head(ByteBufferPool pool)
        {
            return IngressHandler.this.head(this, body, pool);
        }

        @Override
        public Body body()
        {
            return body;
        }

        /** The sandbox's header fields as {@link ForwardPolicy} lets them through, in one pass, then the gateway's own. */
        @Override
        public void headers(int status, HttpFields fromSandbox)
        {
            if (sent != 0)
                upstream = System.nanoTime() - sent;
            response.setStatus(status);
            HttpFields.Mutable toBrowser = response.getHeaders();
            // Jetty's Date (and Server) can be replaced but not removed: the sandbox's first of such a
            // name replaces it, the rest are added.
            int preset = Math.min(toBrowser.size(), Long.SIZE);
            HttpField[] presets = preset == 0 ? null : ForwardPolicy.presets(toBrowser, preset);
            long replaced = 0;
            List<String> connection = ForwardPolicy.connectionNames(fromSandbox);
            for (HttpField field : fromSandbox)
            {
                HttpField kept = policy.toBrowser(field, forward, route, connection);
                if (kept == null)
                    continue;
                int at = presets == null ? -1 : ForwardPolicy.presetOfName(presets, kept);
                if (at >= 0 && (replaced & 1L << at) == 0)
                {
                    replaced |= 1L << at;
                    toBrowser.put(kept);
                }
                else
                {
                    toBrowser.add(kept);
                }
            }
            policy.addToBrowser(forward, origin, toBrowser::add);
        }

        /** A sandbox that fails before the browser has its headers gets the gateway's error; after, the response is cut short. */
        @Override
        public void failed(Throwable failure, boolean retryable)
        {
            if (SendAgain.mayGoAgain(request.getMethod(), retried, retryable, failure))
            {
                retried = true;
                links.send(route, this, true);
                return;
            }
            if (response.isCommitted())
            {
                failed(failure);
                return;
            }
            response.reset();
            writeError(Errors.map(failure), this);
        }

        @Override
        public void streaming(Runnable cut)
        {
            forgetStream = ingress.streams().add(forward.sandboxId(), route, cut);
        }

        /**
         * Nothing is written to a browser that has gone, not even an error page: the exchange is
         * aborted, which the server answers by closing the connection, as nginx closes it; that
         * close is all a client that shut only its sending side learns. The access line says 499,
         * as nginx's does.
         */
        @Override
        public void browserGone()
        {
            if (!response.isCommitted())
                response.setStatus(CLIENT_CLOSED);
            failed(new Request.Handler.AbortException("the browser closed its connection before its answer"));
        }

        /** Answers the gateway's error and ends the exchange. */
        void refuse(GatewayException error)
        {
            writeError(error, this);
        }

        /** The error as {@link Errors} words it, with its headers: no page the gateway writes may host a script. */
        void writeError(GatewayException error, Callback callback)
        {
            Errors.Reply reply = Errors.reply(error, request.getHeaders().get(HttpHeader.ACCEPT));
            response.setStatus(error.status());
            HttpFields.Mutable headers = response.getHeaders();
            headers.add(Errors.headers(error));
            headers.put(HttpHeader.CONTENT_TYPE, reply.contentType());
            response.write(true, ByteBuffer.wrap(reply.body().getBytes(StandardCharsets.UTF_8)), callback);
        }

        @Override
        public void succeeded()
        {
            end();
            super.succeeded();
        }

        @Override
        public void failed(Throwable x)
        {
            end();
            super.failed(x);
        }

        private void end()
        {
            if (release != null)
                release.run();
            if (forgetStream != null)
                forgetStream.run();
            AccessNote logged = note == null ? new AccessNote(AccessNote.Face.OPS, null, null) : upstream < 0 ? note : note.upstream(upstream);
            if (span != null)
            {
                span.setAttribute(TraceAttributes.FACE, logged.face().label());
                span.setAttribute(TraceAttributes.URL_PATH, log.printable(request.getHttpURI().getPath()));
                Spans.endServer(span, response.getStatus());
            }
            // The access line carries the request's fields as the servlet path's do; this thread may
            // be any of the pool's, so they are set for the line alone, and only if there is a line.
            boolean line = log.writesLines();
            if (line)
            {
                if (span == null)
                    LogContext.trace(request.getHeaders().get(TraceHeaders.TRACEPARENT));
                else
                    LogContext.trace(span);
                LogContext.put(LogContext.Field.FACE, logged.face().label());
                LogContext.put(LogContext.Field.SANDBOX, logged.subject());
            }
            try
            {
                log.record(client.remoteAddr(), request.getMethod(), request.getHttpURI().getPath(), request.getHttpURI().getQuery(), response.getStatus(), start, logged);
            }
            finally
            {
                if (line)
                    LogContext.clear();
            }
        }
    }

    /** A core request as {@link ClientInfo} reads it; the peer's address is worked out once. */
    private static final class View implements ClientInfo.RequestView
    {
        private final Request request;
        private String remoteAddr;
        /** Read for the decision and again for the confinement policy. */
        private String origin;

        View(Request request)
        {
            this.request = request;
        }

        @Override
        public String remoteAddr()
        {
            if (remoteAddr == null)
                remoteAddr = Request.getRemoteAddr(request);
            return remoteAddr;
        }

        @Override
        public String scheme()
        {
            return request.getHttpURI().getScheme();
        }

        @Override
        public String header(String name)
        {
            return request.getHeaders().get(name);
        }

        @Override
        public List<String> headers(String name)
        {
            return request.getHeaders().getValuesList(name);
        }

        @Override
        public String serverAuthority()
        {
            return Request.getServerName(request) + ":" + Request.getServerPort(request);
        }
    }
}
