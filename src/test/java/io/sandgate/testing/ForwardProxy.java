package io.sandgate.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ConnectHandler;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;

import static org.awaitility.Awaitility.await;

/**
 * An in-process HTTP forward proxy playing one egress node in gateway tests: absolute-form
 * requests ({@code GET http://host:port/path}) are forwarded by Jetty's {@link ProxyHandler.Forward}
 * with {@code Via: 1.1 <name>} added, and {@code CONNECT host:port} opens a raw tunnel through
 * Jetty's {@link ConnectHandler} (nothing can be added inside a TLS tunnel, so tunnelled requests
 * carry no Via from this proxy).
 *
 * <p>Faults can be switched at any time from the test thread and apply to requests that arrive
 * afterwards; a request already being forwarded keeps the behaviour it started with:
 * <ul>
 *   <li>{@link #ok()} - forward normally (and reopen the listener after {@link #refuse()}).</li>
 *   <li>{@link #refuse()} - the connector is stopped: the port refuses connections and open
 *       connections (idle keep-alives, tunnels) are closed, as when a node goes down.</li>
 *   <li>{@link #hang()} - connections are accepted and requests read, but never answered.</li>
 *   <li>{@link #delay(Duration, Duration)} - forwarding starts after base + random(0..jitter).</li>
 *   <li>{@link #dropMidResponse()} - the response headers and part of the body reach the client,
 *       then the connection is cut.</li>
 *   <li>{@link #error5xx(int)} - the proxy answers every request (CONNECT too) itself with that
 *       status and {@code X-Proxy-Error: 1}, without contacting the target.</li>
 * </ul>
 * {@link #requests()} counts every request the proxy read (a CONNECT counts once, for the whole
 * tunnel), whatever the fault; {@link #connects()} counts the CONNECTs among them, and
 * {@link #received()} lists their request targets.
 */
public final class ForwardProxy implements ProxyNode, AutoCloseable
{
    /** Set on the response by {@link #error5xx(int)}, so tests can tell a proxy error from a target's. */
    public static final String ERROR_HEADER = "X-Proxy-Error";

    /**
     * Bytes {@link #dropMidResponse()} lets through before the cut. For absolute-form requests that
     * is body bytes (the end of the body is withheld anyway, so even a short body fails). For a
     * CONNECT tunnel it is raw target-to-client bytes: the TLS handshake (about 1 KiB with the
     * test certificate), then TLS records of up to 16 KiB, the first of which usually holds the
     * response headers together with the start of the body. A tunnel budget under roughly 18 KiB
     * therefore cuts before the client can decrypt the headers; with this default the headers and
     * some body arrive, so a tunnelled response must be well over 64 KiB to be cut mid-body.
     */
    public static final int DEFAULT_DROP_AFTER_BYTES = 64 * 1024;

    private static final String TUNNEL_CUT_ATTRIBUTE = ForwardProxy.class.getName() + ".tunnelCut";
    private static final String TUNNEL_CUT_CONTEXT = "sandgate.tunnelCut";

    private enum Kind { OK, HANG, DELAY, DROP, ERROR }

    /**
     * One request as the proxy read it: the target is {@code host:port} for a CONNECT and the
     * absolute URI otherwise; {@code host} is the Host header, or {@code null}.
     */
    public record Received(String method, String target, String host)
    {
    }

    /** One immutable fault setting, so a request sees a consistent snapshot of kind and parameters. */
    private record Fault(Kind kind, long baseMillis, long jitterMillis, int dropAfterBytes, int status)
    {
        static final Fault OK = new Fault(Kind.OK, 0, 0, 0, 0);
    }

    private final String name;
    private final Server server;
    private final ServerConnector connector;
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger connects = new AtomicInteger();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private volatile Fault fault = Fault.OK;
    private int port;
    private boolean refusing;

    private ForwardProxy(String name)
    {
        this.name = Objects.requireNonNull(name, "name");
        server = LoopbackServers.server("proxy-" + name);
        connector = LoopbackServers.connector(server);

        ProxyHandler.Forward forward = new ProxyHandler.Forward()
        {
            @Override
            protected void configureHttpClient(HttpClient httpClient)
            {
                super.configureHttpClient(httpClient);
                // The client's User-Agent is copied through; without this the proxy's own
                // HttpClient would add a second one, which a real egress proxy does not do.
                httpClient.setUserAgentField(null);
            }
        };
        // ProxyHandler appends "1.1 <viaHost>" to any Via already present, as RFC 9110 asks.
        forward.setViaHost(name);
        TunnelHandler tunnels = new TunnelHandler(forward);
        tunnels.setConnectTimeout(5_000);
        tunnels.setIdleTimeout(30_000);
        server.setHandler(new FaultHandler(tunnels));
    }

    /** Starts a proxy on 127.0.0.1 and an ephemeral port; {@code name} goes into its Via header. */
    public static ForwardProxy start(String name)
    {
        ForwardProxy proxy = new ForwardProxy(name);
        LoopbackServers.start(proxy.server, proxy::close, "forward proxy " + name);
        proxy.port = proxy.connector.getLocalPort();
        return proxy;
    }

    @Override
    public String name()
    {
        return name;
    }

    /** The port, which stays the same across {@link #refuse()} and {@link #ok()}. */
    @Override
    public int port()
    {
        return port;
    }

    /** Requests and tunnels read so far, faulted ones included. */
    public int requests()
    {
        return requests.get();
    }

    /** CONNECT tunnels requested so far, faulted ones included. */
    public int connects()
    {
        return connects.get();
    }

    /** The request targets read so far, in order, faulted ones included. */
    public List<Received> received()
    {
        return List.copyOf(received);
    }

    public void resetCounters()
    {
        requests.set(0);
        connects.set(0);
        received.clear();
    }

    /** Forwards normally; reopens the listener on the same port if {@link #refuse()} closed it. */
    public synchronized ForwardProxy ok()
    {
        return set(Fault.OK);
    }

    /**
     * Stops the connector: new connections are refused (RST on loopback) and established ones are
     * closed. Returns once the port refuses. Any other mode reopens it on the same port.
     */
    public synchronized ForwardProxy refuse()
    {
        if (!refusing)
        {
            LoopbackServers.stop(connector, "the connector of proxy " + name);
            // Closing the listening socket may lag the connector's stop: return once it refuses.
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5)).until(this::portRefuses);
            refusing = true;
        }
        return this;
    }

    private boolean portRefuses()
    {
        try (Socket probe = new Socket())
        {
            probe.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
            return false;
        }
        catch (IOException x)
        {
            return true;
        }
    }

    /** Accepts connections and reads requests but never answers them. */
    public synchronized ForwardProxy hang()
    {
        return set(new Fault(Kind.HANG, 0, 0, 0, 0));
    }

    /** Waits base + random(0..jitter) before forwarding each request or opening each tunnel. */
    public synchronized ForwardProxy delay(Duration base, Duration jitter)
    {
        if (base.isNegative() || jitter.isNegative())
        {
            throw new IllegalArgumentException("delay and jitter must not be negative");
        }
        return set(new Fault(Kind.DELAY, base.toMillis(), jitter.toMillis(), 0, 0));
    }

    /** {@link #dropMidResponse(int)} with {@link #DEFAULT_DROP_AFTER_BYTES}. */
    public synchronized ForwardProxy dropMidResponse()
    {
        return dropMidResponse(DEFAULT_DROP_AFTER_BYTES);
    }

    /**
     * Forwards the target's response headers and then at most {@code afterBytes} bytes (see
     * {@link #DEFAULT_DROP_AFTER_BYTES} for what is counted), then closes the client connection.
     * For absolute-form requests the body is re-framed as chunked and its end is never sent, so
     * the client always sees a truncated response rather than a short but complete one.
     */
    public synchronized ForwardProxy dropMidResponse(int afterBytes)
    {
        if (afterBytes < 0)
        {
            throw new IllegalArgumentException("afterBytes must not be negative");
        }
        return set(new Fault(Kind.DROP, 0, 0, afterBytes, 0));
    }

    /** Answers every request, CONNECT included, with {@code status} and {@code X-Proxy-Error: 1}. */
    public synchronized ForwardProxy error5xx(int status)
    {
        if (status < 500 || status > 599)
        {
            throw new IllegalArgumentException("status must be a 5xx code: " + status);
        }
        return set(new Fault(Kind.ERROR, 0, 0, 0, status));
    }

    private ForwardProxy set(Fault newFault)
    {
        fault = newFault;
        if (refusing)
        {
            // Same port on purpose: the gateway under test holds this address in its config.
            connector.setPort(port);
            try
            {
                connector.start();
            }
            catch (Exception e)
            {
                throw new IllegalStateException("Could not reopen proxy " + name + " on port " + port
                        + " (another process may have taken it)", e);
            }
            refusing = false;
        }
        return this;
    }

    @Override
    public void close()
    {
        LoopbackServers.stop(server, "forward proxy " + name);
    }

    @Override
    public String toString()
    {
        return "ForwardProxy[" + name + " " + address() + " " + (refusing ? "REFUSE" : fault.kind()) + "]";
    }

    /** Applies the current fault, then hands over to the tunnel/forward handlers. */
    private final class FaultHandler extends Handler.Wrapper
    {
        FaultHandler(Handler next)
        {
            super(next);
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            requests.incrementAndGet();
            boolean connect = HttpMethod.CONNECT.is(request.getMethod());
            if (connect)
            {
                connects.incrementAndGet();
            }
            received.add(new Received(request.getMethod(),
                    connect ? request.getHttpURI().getAuthority() : request.getHttpURI().asString(),
                    request.getHeaders().get(HttpHeader.HOST)));
            Fault current = fault;
            switch (current.kind())
            {
                case HANG:
                    // Never completing the callback leaves the exchange open until the client gives
                    // up or close() tears the connection down.
                    return true;
                case ERROR:
                    response.setStatus(current.status());
                    response.getHeaders().put(ERROR_HEADER, "1");
                    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
                    Content.Sink.write(response, true,
                            "proxy " + name + " fault: " + current.status() + "\n", callback);
                    return true;
                case DELAY:
                    long millis = current.baseMillis() + (current.jitterMillis() == 0 ? 0
                            : ThreadLocalRandom.current().nextLong(current.jitterMillis() + 1));
                    // The scheduler thread must not run handlers, so the pool picks the request up.
                    server.getScheduler().schedule(
                            () -> server.getThreadPool().execute(() -> forward(request, response, callback)),
                            millis, TimeUnit.MILLISECONDS);
                    return true;
                case DROP:
                    if (connect)
                    {
                        // Picked up by TunnelHandler.prepareContext, which sees the request only
                        // before it becomes a raw tunnel.
                        request.setAttribute(TUNNEL_CUT_ATTRIBUTE, current.dropAfterBytes());
                        forward(request, response, callback);
                    }
                    else
                    {
                        forward(request, new DroppingResponse(request, response, current.dropAfterBytes()), callback);
                    }
                    return true;
                default:
                    forward(request, response, callback);
                    return true;
            }
        }

        private void forward(Request request, Response response, Callback callback)
        {
            try
            {
                if (!super.handle(request, response, callback))
                {
                    Response.writeError(request, response, callback, 404);
                }
            }
            catch (Throwable x)
            {
                callback.failed(x);
            }
        }
    }

    /**
     * Lets the headers and up to {@code budget} body bytes through, then closes the connection.
     * Content-Length is removed before commit so the body goes out chunked: a cut before the
     * terminating chunk is always visible to the client, even when every body byte got through.
     */
    private static final class DroppingResponse extends Response.Wrapper
    {
        private final long budget;
        private long sent;

        DroppingResponse(Request request, Response response, int budget)
        {
            super(request, response);
            this.budget = budget;
        }

        @Override
        public void write(boolean last, ByteBuffer content, Callback callback)
        {
            if (!isCommitted())
            {
                getHeaders().remove(HttpHeader.CONTENT_LENGTH);
            }
            int length = content == null ? 0 : content.remaining();
            long room = budget - sent;
            if (!last && length <= room)
            {
                sent += length;
                super.write(false, content, callback);
                return;
            }
            // Budget exhausted or end of body reached: send what is allowed (never the end), flush
            // it together with the headers if they are still pending, then cut.
            int allowed = (int) Math.max(0, Math.min(room, last ? length - 1 : length));
            ByteBuffer part = allowed == 0 ? BufferUtil.EMPTY_BUFFER : content.slice(content.position(), allowed);
            sent += allowed;
            EndPoint endPoint = getRequest().getConnectionMetaData().getConnection().getEndPoint();
            super.write(false, part, Callback.from(() ->
            {
                endPoint.close();
                callback.failed(new EofException("connection cut by ForwardProxy.dropMidResponse"));
            }, callback::failed));
        }
    }

    /** Where a tunnel in drop mode stands: how many target-to-client bytes it may still carry. */
    private static final class TunnelCut
    {
        final EndPoint client;
        final AtomicLong remaining;

        TunnelCut(EndPoint client, long budget)
        {
            this.client = client;
            this.remaining = new AtomicLong(budget);
        }
    }

    /** Jetty's CONNECT support, with a hook to cut the target-to-client direction in drop mode. */
    private static final class TunnelHandler extends ConnectHandler
    {
        TunnelHandler(Handler next)
        {
            super(next);
        }

        @Override
        protected void prepareContext(Request request, ConcurrentMap<String, Object> context)
        {
            Object cut = request.getAttribute(TUNNEL_CUT_ATTRIBUTE);
            if (cut != null)
            {
                // The client's endpoint survives the upgrade to a tunnel, so writes towards it can
                // be recognised by identity.
                context.put(TUNNEL_CUT_CONTEXT, new TunnelCut(
                        request.getConnectionMetaData().getConnection().getEndPoint(), (Integer) cut));
            }
        }

        @Override
        protected void write(EndPoint endPoint, ByteBuffer buffer, Callback callback, ConcurrentMap<String, Object> context)
        {
            TunnelCut cut = (TunnelCut) context.get(TUNNEL_CUT_CONTEXT);
            if (cut == null || endPoint != cut.client)
            {
                super.write(endPoint, buffer, callback, context);
                return;
            }
            int length = buffer.remaining();
            long before = cut.remaining.getAndAdd(-length);
            if (before >= length)
            {
                super.write(endPoint, buffer, callback, context);
                return;
            }
            int allowed = (int) Math.max(0, before);
            Runnable cutNow = () ->
            {
                endPoint.close();
                callback.failed(new EofException("tunnel cut by ForwardProxy.dropMidResponse"));
            };
            if (allowed == 0)
            {
                cutNow.run();
                return;
            }
            ByteBuffer part = buffer.slice(buffer.position(), allowed);
            super.write(endPoint, part, Callback.from(cutNow, callback::failed), context);
        }
    }
}
