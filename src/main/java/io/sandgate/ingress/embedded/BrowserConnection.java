package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritePendingException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.micrometer.core.instrument.MeterRegistry;
import org.eclipse.jetty.http.ComplianceViolation;
import org.eclipse.jetty.http.HostPortHttpField;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpGenerator;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.http.HttpScheme;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.server.AbstractMetaDataConnection;
import org.eclipse.jetty.server.Components;
import org.eclipse.jetty.server.ConnectionMetaData;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Context;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Session;
import org.eclipse.jetty.server.TunnelSupport;
import org.eclipse.jetty.util.Attributes;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.HostPort;
import org.eclipse.jetty.util.thread.Invocable;

/**
 * A browser's connection to the public listener, serving the plainest ingress requests without
 * Jetty's server channel: a GET or HEAD in HTTP/1.1 with no body, no upgrade and no expectation,
 * which is nearly every request a page and its assets make. It parses the head with Jetty's
 * {@link HttpParser} under the server's compliance, hands {@link IngressHandler} a request and a
 * response of its own, and writes the answer with Jetty's {@link HttpGenerator}; what it leaves out
 * is the channel's state machine, its wrappers and listeners: a seventh of the gateway's user time
 * on a 1 KB exchange (docs/BENCHMARKS.md, "The browser's connection of the gateway's own").
 *
 * <p>Anything else goes to Jetty, not through code of this class: a request that is not one of
 * those, that the parser finds bad or that reports a compliance violation, a head longer than the
 * buffer, a request the ingress handler declines (the other faces, health), and every request after
 * it, is served by Jetty's own {@code HttpConnection}, which the endpoint is upgraded to with the
 * request's bytes still unread. So the smuggling defences (lengths with chunking, folded or bare-LF
 * lines, duplicate lengths), {@code Expect}, WebSocket upgrades and error pages stay Jetty's.</p>
 *
 * <p>One exchange at a time, as Jetty serves HTTP/1: bytes pipelined behind a request are not parsed
 * before its answer is complete. It reads nothing while an exchange is under way; the endpoint
 * reports a browser that leaves ({@code KeptReadEndPoint}) to the sandbox's link, as for Jetty's
 * connection.</p>
 */
final class BrowserConnection extends AbstractMetaDataConnection implements Connection.UpgradeFrom, HttpParser.RequestHandler, RequestPhase.Parsing
{
    private final Handler ingress;
    private final HttpConnectionFactory jetty;
    private final Handover.Counts handovers;
    private final ByteBufferPool pool;
    private static final int IDLE = 0;
    private static final int DISPATCHING = 1;
    private static final int DONE_IN_DISPATCH = 2;

    private final HttpParser parser;
    private final HttpGenerator generator = new HttpGenerator();
    private final Attributes attributes = new Attributes.Lazy();
    /** The request's header fields as parsed, reused by the next request as Jetty's connection reuses its own. */
    private final HttpFields.Mutable fields = HttpFields.build();
    private final BrowserSender sender;
    /**
     * Run by the selector itself: nothing this connection does waits (the handler it calls is
     * non-blocking, and Jetty's connection, once handed a request, runs on its own executor).
     */
    private final Callback fillable = Callback.from(Invocable.InvocationType.NON_BLOCKING, this::onFillable, this::onFillInterestedFailed);
    private RetainableByteBuffer buffer;

    // The request being parsed.
    private String method;
    private String target;
    private HttpVersion version;
    private HostPortHttpField host;
    private int hosts;
    private boolean close;
    /** Why this request is left to Jetty; null while nothing says so. */
    private Handover leftToJetty;
    /** Where the request being parsed starts in the buffer; -1 between requests. */
    private int start = -1;

    /** The exchange under way; null between exchanges. */
    private Exchange exchange;
    /**
     * Who goes on after an exchange: {@link #DISPATCHING} while the handler is called; an exchange
     * completed within the call leaves {@link #DONE_IN_DISPATCH}, and the calling thread goes on;
     * one completed later finds {@link #IDLE} and goes on itself. So one thread at a time parses.
     */
    private final AtomicInteger turn = new AtomicInteger();
    /** The output is shut: what the browser sends now is read and dropped until it closes. */
    private boolean draining;
    private long requests;

    BrowserConnection(Connector connector, HttpConfiguration config, EndPoint endPoint, Handler ingress, HttpConnectionFactory jetty, Handover.Counts handovers)
    {
        super(connector, config, endPoint);
        this.ingress = ingress;
        this.jetty = jetty;
        this.handovers = handovers;
        this.pool = connector.getByteBufferPool();
        this.sender = new BrowserSender(generator, pool, config, endPoint);
        parser = new HttpParser(this, config.getRequestHeaderSize(), config.getHttpCompliance());
        parser.setHeaderCacheSize(config.getHeaderCacheSize());
        parser.setHeaderCacheCaseSensitive(config.isHeaderCacheCaseSensitive());
    }

    @Override
    public void fillInterested()
    {
        fillInterested(fillable);
    }

    @Override
    public void onOpen()
    {
        super.onOpen();
        fillInterested();
    }

    @Override
    public void onClose(Throwable cause)
    {
        super.onClose(cause);
        release();
    }

    @Override
    public void onFillable()
    {
        serveOrClose();
    }

    private void serveOrClose()
    {
        try
        {
            serve();
        }
        catch (Throwable x)
        {
            // A fault of this class's: the browser sees a closed connection, not one that hangs.
            getEndPoint().close(x);
        }
    }

    /**
     * Parses and serves requests while there are bytes for them and no exchange under way; asks to
     * be told of more bytes when there are none.
     */
    private void serve()
    {
        while (exchange == null)
        {
            if (!getEndPoint().isOpen())
            {
                release();
                return;
            }
            ByteBuffer bytes = acquire().getByteBuffer();
            if (draining)
            {
                bytes.clear().limit(0);
                if (!fill(bytes))
                    return;
                continue;
            }
            if (!bytes.hasRemaining() && !(room(bytes) && fill(bytes)))
                return;
            if (start < 0)
            {
                start = bytes.position();
                clearRequest();
            }
            // Restored to hand the request over as it came: the parser empties the buffer of a bad one.
            int end = bytes.limit();
            try
            {
                parser.parseNext(bytes);
            }
            catch (RuntimeException x)
            {
                leave(Handover.MALFORMED);
            }
            if (leftToJetty == null && !parser.isComplete() && !parser.inHeaderState())
                leave(Handover.BODY);
            if (leftToJetty != null)
            {
                handOver(leftToJetty, bytes.limit(end));
                return;
            }
            // A head not yet whole is parsed on as more bytes come, its first bytes kept.
            if (!parser.isComplete())
                continue;
            int first = start;
            start = -1;
            Handover declined = dispatch();
            if (declined != null)
            {
                start = first;
                handOver(declined, bytes.limit(end));
                return;
            }
            // An exchange still under way goes on when it completes, on the thread that completes it.
            if (turn.compareAndSet(DISPATCHING, IDLE))
                return;
            turn.set(IDLE);
        }
    }

    /**
     * Makes room after a head not yet whole by moving it to the start of the buffer, the parser's
     * place in it kept; a head that fills the buffer is handed over, for Jetty to refuse.
     *
     * @return whether there is room to read into
     */
    private boolean room(ByteBuffer bytes)
    {
        if (start < 0 || bytes.limit() < bytes.capacity())
            return true;
        if (start == 0)
        {
            handOver(Handover.LONG_HEAD, bytes);
            return false;
        }
        int parsed = bytes.position() - start;
        bytes.position(start);
        bytes.compact().flip().position(parsed);
        start = 0;
        return true;
    }

    /**
     * Reads after what the buffer holds. A head not yet whole is shown whole to the endpoint, which
     * would otherwise take a buffer read to its end for an empty one, and read over the head's first
     * bytes, which a hand-over needs; the parser's place is kept.
     *
     * @return whether bytes were read; if not, the connection waits for more, or is closed
     */
    private boolean fill(ByteBuffer bytes)
    {
        int parsed = bytes.position();
        if (start >= 0)
            bytes.position(start);
        int filled;
        try
        {
            filled = getEndPoint().fill(bytes);
        }
        catch (IOException x)
        {
            getEndPoint().close(x);
            return false;
        }
        finally
        {
            if (start >= 0)
                bytes.position(parsed);
        }
        if (filled > 0)
            return true;
        if (filled < 0)
        {
            getEndPoint().close();
            return false;
        }
        if (!bytes.hasRemaining() && start < 0)
            release();
        fillInterested();
        return false;
    }

    private int readBufferSize()
    {
        return Math.max(getHttpConfiguration().getRequestHeaderSize(), jetty.getInputBufferSize());
    }

    /** The read buffer, taken from the pool when there is none; locked with its release, which a close may make from the selector. */
    private synchronized RetainableByteBuffer acquire()
    {
        if (buffer == null)
            buffer = pool.acquire(readBufferSize(), getHttpConfiguration().isUseInputDirectByteBuffers());
        return buffer;
    }

    private synchronized void release()
    {
        RetainableByteBuffer held = buffer;
        buffer = null;
        if (held != null)
            held.release();
    }

    private void clearRequest()
    {
        parser.reset();
        fields.clear();
        method = null;
        target = null;
        version = null;
        host = null;
        hosts = 0;
        close = false;
        leftToJetty = null;
    }

    /**
     * Gives the endpoint, and the bytes not yet served, to Jetty's connection, which serves this
     * request and those after it.
     */
    private void handOver(Handover reason, ByteBuffer bytes)
    {
        bytes.position(start);
        start = -1;
        handovers.count(reason);
        Connection next = jetty.newConnection(getConnector(), getEndPoint());
        getEndPoint().upgrade(next);
    }

    @Override
    public synchronized ByteBuffer onUpgradeFrom()
    {
        RetainableByteBuffer held = buffer;
        buffer = null;
        if (held == null)
            return null;
        ByteBuffer rest = held.hasRemaining() ? BufferUtil.copy(held.getByteBuffer()) : null;
        held.release();
        return rest;
    }

    /** @return why the request is Jetty's to serve, with nothing done with it; null if it was taken */
    private Handover dispatch()
    {
        if (version != HttpVersion.HTTP_1_1)
            return Handover.VERSION;
        if (!(HttpMethod.GET.is(method) || HttpMethod.HEAD.is(method)))
            return Handover.METHOD;
        if (getConnector().isShutdown())
            return Handover.SHUTDOWN;
        HttpURI uri = hosts == 1 && !target.isEmpty() && target.charAt(0) == '/' ? uri() : null;
        if (uri == null)
            return Handover.MALFORMED;
        generator.reset();
        generator.setPersistent(!close);
        Exchange next = new Exchange(uri, parser.getBeginNanoTime());
        exchange = next;
        turn.set(DISPATCHING);
        boolean taken;
        Throwable escaped = null;
        try
        {
            taken = ingress.handle(next.request, next.response, next);
        }
        catch (Throwable x)
        {
            // The handler maps its own failures to answers; one that escapes it leaves the exchange unfinished.
            taken = true;
            escaped = x;
        }
        if (!taken)
        {
            exchange = null;
            turn.set(IDLE);
            return Handover.NOT_INGRESS;
        }
        ++requests;
        if (escaped != null)
            next.failed(escaped);
        return null;
    }

    /**
     * The request's URI as Jetty's connection makes it, with the scheme and the Host's authority;
     * null for one with anything Jetty's compliance would judge (ambiguous or encoded segments, a
     * path above the root, bad encodings), which is then Jetty's to answer.
     */
    private HttpURI uri()
    {
        try
        {
            HttpURI.Mutable uri = HttpURI.build(method, target);
            HostPort authority = host.getHostPort();
            if (uri.hasViolations() || uri.getPath() == null || uri.getDecodedPath() == null || authority.getHost().isBlank())
                return null;
            int port = authority.getPort();
            return uri.scheme(HttpScheme.HTTP).authority(authority.getHost(), port == HttpScheme.HTTP.getDefaultPort() ? -1 : port).asImmutable();
        }
        catch (IllegalArgumentException x)
        {
            return null;
        }
    }

    /** An exchange is over: the next request is served, or the connection closed, as the answer said. */
    private void completed(Exchange done, Throwable failure)
    {
        if (exchange != done)
            return;
        exchange = null;
        // At its start between requests, as Jetty's connection's: the head deadline and the connection limit read it.
        parser.reset();
        if (failure != null || !generator.isEnd())
        {
            getEndPoint().close(failure);
        }
        else if (!generator.isPersistent())
        {
            // As Jetty does: the browser sees the end of the answer at once; what it still sends is dropped.
            getEndPoint().shutdownOutput();
            draining = true;
        }
        if (!turn.compareAndSet(DISPATCHING, DONE_IN_DISPATCH))
            serveOrClose();
    }

    @Override
    public HttpParser getParser()
    {
        return parser;
    }

    @Override
    public boolean onIdleExpired(TimeoutException timeout)
    {
        // Between exchanges, or with an answer the browser does not take: closed, as Jetty closes
        // it. While the sandbox is awaited, the link's own timeout answers for it.
        return exchange == null || sender.isPending();
    }

    // HttpParser.RequestHandler

    @Override
    public void startRequest(String method, String uri, HttpVersion version)
    {
        this.method = method;
        this.target = uri;
        this.version = version;
    }

    @Override
    public void parsedHeader(HttpField field)
    {
        HttpHeader header = field.getHeader();
        if (header != null)
        {
            switch (header)
            {
                case HOST ->
                {
                    hosts++;
                    if (field instanceof HostPortHttpField hostPort)
                        host = hostPort;
                    else
                        leave(Handover.MALFORMED);
                }
                case CONNECTION ->
                {
                    close |= field.contains(HttpHeaderValue.CLOSE.asString());
                    if (field.contains(HttpHeaderValue.UPGRADE.asString()))
                        leave(Handover.UPGRADE);
                }
                case CONTENT_LENGTH, TRANSFER_ENCODING -> leave(Handover.BODY);
                case EXPECT -> leave(Handover.EXPECT);
                case UPGRADE, HTTP2_SETTINGS -> leave(Handover.UPGRADE);
                default ->
                {
                }
            }
        }
        fields.add(field);
    }

    @Override
    public boolean headerComplete()
    {
        return false;
    }

    @Override
    public boolean content(ByteBuffer content)
    {
        // Only a request with a length or chunks has content, and those are Jetty's.
        leave(Handover.BODY);
        return true;
    }

    @Override
    public boolean contentComplete()
    {
        return false;
    }

    @Override
    public boolean messageComplete()
    {
        // The parser stops after the head of a request without a body; the bytes after it wait.
        return true;
    }

    @Override
    public void earlyEOF()
    {
        leave(Handover.MALFORMED);
    }

    @Override
    public void badMessage(HttpException failure)
    {
        leave(Handover.MALFORMED);
    }

    @Override
    public void onViolation(ComplianceViolation.Event event)
    {
        // Allowed by the compliance mode, but Jetty's to record.
        leave(Handover.MALFORMED);
    }

    /** The first reason found is the one counted. */
    private void leave(Handover reason)
    {
        if (leftToJetty == null)
            leftToJetty = reason;
    }

    // ConnectionMetaData

    @Override
    public String getId()
    {
        return Integer.toHexString(System.identityHashCode(this));
    }

    @Override
    public HttpVersion getHttpVersion()
    {
        return HttpVersion.HTTP_1_1;
    }

    @Override
    public String getProtocol()
    {
        return HttpVersion.HTTP_1_1.asString();
    }

    @Override
    public boolean isPersistent()
    {
        return generator.isPersistent();
    }

    @Override
    public Object removeAttribute(String name)
    {
        return attributes.removeAttribute(name);
    }

    @Override
    public Object setAttribute(String name, Object attribute)
    {
        return attributes.setAttribute(name, attribute);
    }

    @Override
    public Object getAttribute(String name)
    {
        return attributes.getAttribute(name);
    }

    @Override
    public Set<String> getAttributeNameSet()
    {
        return attributes.getAttributeNameSet();
    }

    @Override
    public String toConnectionString()
    {
        return String.format("%s@%x[requests=%d,exchange=%s]", getClass().getSimpleName(), hashCode(), requests, exchange != null);
    }

    /**
     * One request and its answer; the callback the handler completes. The request's fields are the
     * connection's, which are not touched again until this is complete.
     */
    private final class Exchange implements Callback
    {
        private final BrowserRequest request;
        private final BrowserResponse response;

        Exchange(HttpURI uri, long begin)
        {
            request = new BrowserRequest(method, uri, begin, System.nanoTime());
            response = new BrowserResponse(request);
        }

        @Override
        public void succeeded()
        {
            if (response.lastWritten)
                completed(this, null);
            else
                response.write(true, BufferUtil.EMPTY_BUFFER, Callback.from(() -> completed(this, null), x -> completed(this, x)));
        }

        @Override
        public void failed(Throwable x)
        {
            // As Jetty's channel answers it: a head refused before a byte of it was generated (too
            // large) gets the server's error page in its place.
            if (response.reopen())
                Response.writeError(request, response, Callback.from(() -> completed(this, null), y -> completed(this, y)), x);
            else
                completed(this, x);
        }

        @Override
        public Invocable.InvocationType getInvocationType()
        {
            return Invocable.InvocationType.NON_BLOCKING;
        }
    }

    /** Its attributes are a lazy map of its own: nothing on this path sets any. */
    private final class BrowserRequest extends Attributes.Lazy implements Request
    {
        private final String method;
        private final HttpURI uri;
        private final long begin;
        private final long headers;

        BrowserRequest(String method, HttpURI uri, long begin, long headers)
        {
            this.method = method;
            this.uri = uri;
            this.begin = begin;
            this.headers = headers;
        }

        @Override
        public String getId()
        {
            return BrowserConnection.this.getId() + "/" + requests;
        }

        @Override
        public Components getComponents()
        {
            return new ListenerComponents(getConnector(), attributes);
        }

        @Override
        public ConnectionMetaData getConnectionMetaData()
        {
            return BrowserConnection.this;
        }

        @Override
        public String getMethod()
        {
            return method;
        }

        @Override
        public HttpURI getHttpURI()
        {
            return uri;
        }

        @Override
        public Context getContext()
        {
            return getConnector().getServer().getContext();
        }

        @Override
        public HttpFields getHeaders()
        {
            return fields;
        }

        @Override
        public void demand(Runnable demandCallback)
        {
            demandCallback.run();
        }

        @Override
        public HttpFields getTrailers()
        {
            return null;
        }

        @Override
        public long getBeginNanoTime()
        {
            return begin;
        }

        @Override
        public long getHeadersNanoTime()
        {
            return headers;
        }

        @Override
        public boolean isSecure()
        {
            return false;
        }

        @Override
        public Content.Chunk read()
        {
            return Content.Chunk.EOF;
        }

        @Override
        public boolean consumeAvailable()
        {
            return true;
        }

        @Override
        public void fail(Throwable failure)
        {
            // No body to fail.
        }

        @Override
        public void addIdleTimeoutListener(Predicate<TimeoutException> onIdleTimeout)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public void addFailureListener(Consumer<Throwable> onFailure)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public TunnelSupport getTunnelSupport()
        {
            return null;
        }

        @Override
        public void addHttpStreamWrapper(Function<HttpStream, HttpStream> wrapper)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public Session getSession(boolean create)
        {
            return null;
        }

        @Override
        public String toString()
        {
            return method + " " + uri;
        }
    }

    private final class BrowserResponse implements Response
    {
        private final BrowserRequest request;
        private final boolean head;
        private final HttpFields.Mutable headers = HttpFields.build();
        private int status;
        private MetaData.Response committed;
        private long contentLength;
        private long written;
        private boolean lastWritten;
        private boolean reopened;
        private Supplier<HttpFields> trailers;

        BrowserResponse(BrowserRequest request)
        {
            this.request = request;
            this.head = HttpMethod.HEAD.is(request.method);
            reset();
        }

        @Override
        public Request getRequest()
        {
            return request;
        }

        @Override
        public int getStatus()
        {
            return status;
        }

        @Override
        public void setStatus(int code)
        {
            if (committed == null)
                status = code;
        }

        @Override
        public HttpFields.Mutable getHeaders()
        {
            return headers;
        }

        @Override
        public Supplier<HttpFields> getTrailersSupplier()
        {
            return trailers;
        }

        @Override
        public void setTrailersSupplier(Supplier<HttpFields> trailers)
        {
            this.trailers = trailers;
        }

        @Override
        public boolean isCommitted()
        {
            return committed != null;
        }

        @Override
        public boolean hasLastWrite()
        {
            return lastWritten;
        }

        @Override
        public boolean isCompletedSuccessfully()
        {
            return lastWritten && !sender.isPending() && generator.isEnd();
        }

        /**
         * A response whose head was refused before any of it was generated is open again, once,
         * and empty, for an error page in its place.
         *
         * @return whether it was
         */
        boolean reopen()
        {
            if (committed == null || reopened || generator.isCommitted() || sender.isPending())
                return false;
            reopened = true;
            committed = null;
            written = 0;
            lastWritten = false;
            reset();
            return true;
        }

        @Override
        public void reset()
        {
            if (committed != null)
                throw new IllegalStateException("committed");
            status = 200;
            headers.clear();
            // As Jetty's response starts: its Date, which a sandbox's Date replaces.
            if (getHttpConfiguration().getSendDateHeader())
                headers.add(getConnector().getServer().getDateField());
        }

        @Override
        public CompletableFuture<Void> writeInterim(int status, HttpFields headers)
        {
            return CompletableFuture.failedFuture(new UnsupportedOperationException("no interim answers on this connection"));
        }

        @Override
        public void write(boolean last, ByteBuffer content, Callback callback)
        {
            if (lastWritten)
            {
                callback.failed(new IllegalStateException("the last write is done"));
                return;
            }
            if (sender.isPending())
            {
                callback.failed(new WritePendingException());
                return;
            }
            int length = content == null ? 0 : content.remaining();
            long expected = committed == null ? headers.getLongField(HttpHeader.CONTENT_LENGTH) : contentLength;
            // Checked before anything is committed, as Jetty's response checks it: the handler may
            // still answer with an error, and the connection does not carry another.
            String mismatch = WrittenLength.mismatch(written + length, expected, last, head, status);
            if (mismatch != null)
            {
                generator.setPersistent(false);
                callback.failed(new IOException(mismatch));
                return;
            }
            MetaData.Response info = null;
            if (committed == null)
            {
                contentLength = expected < 0 && last ? length : expected;
                if (getConnector().isShutdown())
                    generator.setPersistent(false);
                info = new MetaData.Response(status, null, HttpVersion.HTTP_1_1, headers, contentLength, trailers);
                committed = info;
            }
            written += length;
            lastWritten = last;
            sender.send(info, head, content, last, callback);
        }

        @Override
        public String toString()
        {
            return "BrowserResponse[" + status + "]";
        }
    }

    /** Serves {@link BrowserConnection}s on the public listener, in front of Jetty's HTTP/1.1 factory, which it hands requests to. */
    static final class Factory extends org.eclipse.jetty.server.AbstractConnectionFactory
    {
        private final Handler ingress;
        private final HttpConnectionFactory jetty;
        private final Handover.Counts handovers;

        Factory(Handler ingress, HttpConnectionFactory jetty, MeterRegistry registry)
        {
            super("sandgate-http/1.1");
            this.ingress = ingress;
            this.jetty = jetty;
            this.handovers = new Handover.Counts(registry);
        }

        @Override
        public Connection newConnection(Connector connector, EndPoint endPoint)
        {
            return configure(new BrowserConnection(connector, jetty.getHttpConfiguration(), endPoint, ingress, jetty, handovers), connector, endPoint);
        }
    }
}
