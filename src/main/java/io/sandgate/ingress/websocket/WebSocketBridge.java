package io.sandgate.ingress.websocket;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.sandgate.config.ConfigKeys;
import io.sandgate.config.IngressConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.ForwardPolicy;
import io.sandgate.ingress.Ingress;
import io.sandgate.ingress.IngressDecision;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.SandboxHost;
import io.sandgate.net.Origins;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.ClientThreads;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import io.sandgate.web.RequestAttribute;
import io.sandgate.web.ServerSpan;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.ByteBufferPool;

/**
 * Joins a browser's WebSocket to its sandbox's as a byte tunnel ({@link Tunnel}). The sandbox leg is
 * opened first, with the browser's own handshake (its key, version, subprotocols and extensions), so
 * that the browser's 101 can repeat the sandbox's answer, and so that an unreachable or refusing
 * sandbox is an honest HTTP 502 (504 when it does not answer in time) rather than a socket that opens
 * and dies. No thread waits for it: the browser's request goes async while the leg opens, and comes
 * back through the container's dispatch ({@link #upgrade}, then {@link #resume}), which is how a
 * servlet container (Jetty and Tomcat alike) lets a later thread perform the upgrade.
 *
 * <p>Once the sandbox said 101, the browser's connection becomes the other leg through a
 * {@link BrowserUpgrade}: the standard servlet upgrade in the WAR, Jetty's own connection switch in
 * the embedded runner. After that only bytes pass; the pumps run on the threads that completed the
 * last read or write (Jetty's selectors), with no thread per message and no hand-off.</p>
 *
 * <p>Built, started and closed by the composition root, which hands it to {@code IngressServlet}
 * and to whoever shows live sessions; it keeps an HTTP client of its own for the sandbox legs and
 * pings on the gateway's timer.</p>
 */
public final class WebSocketBridge implements AutoCloseable
{
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(WebSocketBridge.class);
    private static final RequestAttribute<SandboxConnect> CONNECT = RequestAttribute.of("ingress.websocket.connect", SandboxConnect.class);
    private static final long CONNECT_GRACE_MILLIS = 1000;
    /** The only version of RFC 6455's handshake. */
    private static final String WEBSOCKET_VERSION = "13";

    private final Ingress ingress;
    private final IngressConfig.WebSocket config;
    /** Path mode: who may open a sandbox's WebSocket. */
    private final Origins origins;
    /** Host mode: who besides the sandbox's own pages may ({@code ingress.host-mode.allowed-origins}). */
    private final Origins hostModeOrigins;
    private final HttpClient client;
    private final Schedulers schedulers;
    private final BrowserUpgrade browsers;
    private final Set<Tunnel> open = ConcurrentHashMap.newKeySet();
    private final Tunnel.Shared shared;
    private volatile ScheduledFuture<?> pings;
    private volatile ScheduledFuture<?> standing;

    /**
     * @param publicOrigins {@code server.public-origins}: pages of these may open sandbox WebSockets
     * @param browsers how browsers' connections become tunnel legs ({@link BrowserUpgrade#forThisContainer})
     */
    public WebSocketBridge(Ingress ingress, List<String> publicOrigins, MeterRegistry registry, Schedulers schedulers, BrowserUpgrade browsers)
    {
        this.ingress = ingress;
        this.config = ingress.config().webSocket();
        this.origins = new Origins(publicOrigins).and(config.allowedOrigins());
        this.hostModeOrigins = Origins.exactly(ingress.config().hostModeAllowedOrigins());
        this.browsers = browsers;
        this.schedulers = schedulers;
        // Its own client: the proxy servlet's strips the protocol handler that performs upgrades.
        // Its threads parse handshake answers; the tunnels' bytes move on its selector.
        this.client = new HttpClient();
        ClientThreads.install(client, "sandgate-ws");
        client.setByteBufferPool(new ArrayByteBufferPool());
        client.setDestinationIdleTimeout(ingress.config().destinationIdleTimeout().toMillis());
        client.setConnectTimeout(ingress.config().connectTimeout().toMillis());
        // The handshake carries the browser's own headers, nothing of the client's.
        client.setUserAgentField(null);
        client.getContentDecoderFactories().clear();
        registry.gaugeCollectionSize("sandgate.ingress.websocket.sessions", Collections.emptyList(), open);
        Tunnel.Meters meters = new Tunnel.Meters(registry,
            Counter.builder("sandgate.ingress.websocket.bytes").tag("direction", "to_sandbox").description("Message payload bytes tunnelled, as on the wire").register(registry),
            Counter.builder("sandgate.ingress.websocket.bytes").tag("direction", "to_browser").description("Message payload bytes tunnelled, as on the wire").register(registry),
            Counter.builder("sandgate.ingress.websocket.messages").tag("direction", "to_sandbox").description("Whole messages tunnelled").register(registry),
            Counter.builder("sandgate.ingress.websocket.messages").tag("direction", "to_browser").description("Whole messages tunnelled").register(registry));
        this.shared = new Tunnel.Shared(config.maxMessageSize(), config.idleTimeout(), open, meters, schedulers.timer(), ingress.activity());
    }

    /** Starts the client towards sandboxes and the pings on both legs of every tunnel. */
    public void start() throws Exception
    {
        client.start();
        long ping = config.pingInterval().toMillis();
        // Asking for a ping only marks a pump, so the tick never blocks the timer.
        pings = schedulers.timer().scheduleAtFixedRate(this::pingAll, ping, ping, TimeUnit.MILLISECONDS);
        // A revocation or a new pod reaches every replica through its route cache; open tunnels
        // and streams follow within a second. A route lookup may ask the store, so this runs on a worker.
        if (ingress.config().access() == IngressConfig.Access.SIGNED)
            standing = schedulers.every(Duration.ofSeconds(1), Duration.ofSeconds(1), "ingress revocation check", this::dropRevoked);
    }

    /**
     * Closes this replica's tunnels to a sandbox (an operator revoked access to it), and cuts its
     * answers of unknown length in progress (streams).
     *
     * @return how many tunnels were closed
     */
    public int closeSandbox(String sandboxId)
    {
        ingress.streams().cut(sandboxId);
        int closed = 0;
        for (Tunnel tunnel : open)
        {
            if (tunnel.sandboxId().equals(sandboxId))
            {
                tunnel.revoke();
                closed++;
            }
        }
        return closed;
    }

    private void dropRevoked()
    {
        ingress.streams().cutRevoked(ingress::currentRoute);
        for (Tunnel tunnel : open)
        {
            Optional<Route> current = ingress.currentRoute(tunnel.sandboxId());
            if (current.isPresent() && !tunnel.standsFor(current.get()))
                tunnel.revoke();
        }
    }

    /** Open tunnels by sandbox id (live ingress sessions), for the admin view. */
    public Map<String, Integer> liveSessions()
    {
        Map<String, Integer> counts = new TreeMap<>();
        for (Tunnel tunnel : open)
            counts.merge(tunnel.sandboxId(), 1, Integer::sum);
        return counts;
    }

    /** Whether this request asks to become a WebSocket. */
    public static boolean isUpgrade(HttpServletRequest request)
    {
        return ForwardPolicy.isWebSocketUpgrade(request.getMethod(), request.getHeader(HttpHeader.UPGRADE.asString()));
    }

    /**
     * First half of an upgrade: checks the Origin and the handshake, starts opening the sandbox leg
     * and lets the request thread go. A sandbox that accepts TCP and never answers holds no thread of
     * the gateway's: the request waits in async mode until the leg opens or fails, or the connect
     * timeout passes, and the container then dispatches it back to {@link #resume}.
     *
     * @throws GatewayException 403 for a foreign Origin, 501 in a container that cannot switch the
     *         browser's connection over, 400 for a handshake without key or version 13
     */
    public void upgrade(HttpServletRequest request, HttpServletResponse response, IngressDecision.Forward forward, Route route)
    {
        checkOrigin(request, forward);
        browsers.checkSupported(request);
        HttpFields headers = sandboxHandshake(request);
        URI target = ForwardPolicy.sandboxUri(route, forward.upstreamPath());

        // One pool for the server and its tunnels where the container shows its own.
        ByteBufferPool buffers = Objects.requireNonNullElse(browsers.buffers(request), client.getByteBufferPool());
        SandboxConnect connect = new SandboxConnect(forward.sandboxId(), route, buffers);
        CONNECT.set(request, connect);
        AsyncContext async = request.startAsync();
        // The container's timer, a little after the client's own timeout: a leg that has not
        // settled by then is answered 504 all the same.
        async.setTimeout(ingress.config().connectTimeout().toMillis() + CONNECT_GRACE_MILLIS);
        async.addListener(connect);
        SandboxHandshake.open(client, target, headers, ingress.config().connectTimeout(), config.idleTimeout()).whenComplete((opened, failure) ->
        {
            if (connect.settle(opened, failure))
                connect.dispatch(async);
        });
    }

    /**
     * Second half, on the container's dispatch: the browser gets the sandbox's answer and its
     * connection becomes the tunnel's other leg, or is told why the sandbox leg failed.
     *
     * @return false when the request is not an upgrade coming back from {@link #upgrade}
     * @throws GatewayException 502/504 when the sandbox leg failed
     */
    public boolean resume(HttpServletRequest request, HttpServletResponse response) throws IOException
    {
        SandboxConnect connect = CONNECT.get(request);
        // Back by dispatch: ASYNC, or in host mode FORWARD, when the session filter hands it on by name.
        if (connect == null || request.getDispatcherType() == DispatcherType.REQUEST)
            return false;
        CONNECT.set(request, null);
        Tunnel tunnel = connect.tunnel();
        try
        {
            browsers.upgrade(request, response, tunnel);
        }
        catch (IOException | ServletException | RuntimeException x)
        {
            tunnel.abandon();
            throw x instanceof IOException io ? io : new IOException(x);
        }
        return true;
    }

    /**
     * A page on another site must not open a sandbox session with the user's cookie (cross-site
     * WebSocket hijacking). In path mode the Origin must be a loopback one, one of
     * {@code server.public-origins} or {@code ingress.websocket.allowed-origins}. In host mode only
     * the sandbox's own origin, built from the host pattern, and {@code ingress.host-mode.allowed-origins}
     * ({@link SandboxHost#admits}): the gateway's origins are every path-mode sandbox's. Never
     * whatever the {@code Host} header says: a DNS-rebinding page sends {@code Host: evil.example}
     * with {@code Origin: http://evil.example}. A request without Origin is not from a browser, which
     * always sends it on WebSocket upgrades.
     */
    private void checkOrigin(HttpServletRequest request, IngressDecision.Forward forward)
    {
        String origin = request.getHeader(HttpHeader.ORIGIN.asString());
        if (origin != null && forward.hostMode() && !forward.host().admits(origin, hostModeOrigins))
            throw SandboxHost.refused(origin, "open this sandbox's WebSocket");
        if (origin == null || forward.hostMode() || origins.allows(origin, null))
            return;
        throw GatewayException.forbidden("WebSocket from origin " + origin.replaceAll("[^\\x20-\\x7e]", "?") + " is not allowed; "
            + "if users reach the gateway there, add it to " + ConfigKeys.SERVER_PUBLIC_ORIGINS.name()
            + ", or to " + ConfigKeys.WS_ALLOWED_ORIGINS.name() + " for pages that may open sandbox WebSockets");
    }

    /**
     * The sandbox leg's handshake: the browser's own key, version, subprotocols and extensions (so
     * that both ends negotiate with each other and the sandbox's answer fits the browser), its
     * cookies less the gateway's, its User-Agent, and the forwarding headers; with tracing on, the
     * gateway's span as the sandbox's parent. Its Origin stays at the gateway, which checked it.
     *
     * @throws GatewayException 400 without a key or with a version other than 13
     */
    private HttpFields sandboxHandshake(HttpServletRequest request)
    {
        String key = request.getHeader(HttpHeader.SEC_WEBSOCKET_KEY.asString());
        if (key == null || key.isBlank() || !WEBSOCKET_VERSION.equals(request.getHeader(HttpHeader.SEC_WEBSOCKET_VERSION.asString())))
            throw GatewayException.badRequest("not a WebSocket handshake: it needs Sec-WebSocket-Key and Sec-WebSocket-Version 13");
        HttpFields.Mutable headers = HttpFields.build()
            .put(HttpHeader.UPGRADE, "websocket")
            .put(HttpHeader.CONNECTION, "Upgrade")
            .put(HttpHeader.SEC_WEBSOCKET_KEY, key.trim())
            .put(HttpHeader.SEC_WEBSOCKET_VERSION, WEBSOCKET_VERSION);
        for (HttpHeader passed : new HttpHeader[] {HttpHeader.SEC_WEBSOCKET_SUBPROTOCOL, HttpHeader.SEC_WEBSOCKET_EXTENSIONS, HttpHeader.USER_AGENT})
        {
            List<String> values = Collections.list(request.getHeaders(passed.asString()));
            if (!values.isEmpty())
                headers.put(passed, String.join(", ", values));
        }
        String cookies = ForwardPolicy.withoutSessionCookie(String.join("; ", Collections.list(request.getHeaders(HttpHeader.COOKIE.asString()))), ingress.config().cookie().name());
        if (cookies != null)
            headers.put(HttpHeader.COOKIE, cookies);
        ClientInfo clients = ingress.clients();
        headers.put(ClientInfo.X_FORWARDED_FOR, request.getRemoteAddr());
        headers.put(ClientInfo.X_FORWARDED_PROTO, clients.scheme(request));
        headers.put(ClientInfo.X_FORWARDED_HOST, clients.host(request));
        Span span = ServerSpan.of(request);
        if (span != null)
            ForwardPolicy.addTraceHeaders(headers, span);
        return headers;
    }

    /**
     * What the browser is told when the sandbox leg did not open: the one error mapping, where a
     * sandbox that answered with anything but a fitting 101 refused (502 {@code upstream_refused}),
     * and a failure of any other kind on the way to it is the exchange with it failing (502), not
     * an error of the gateway's.
     */
    static GatewayException failed(Throwable failure)
    {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        GatewayException error = Errors.map(cause);
        return error.status() == HttpStatus.INTERNAL_SERVER_ERROR_500 ? Errors.ofStatus(HttpStatus.BAD_GATEWAY_502) : error;
    }

    private void pingAll()
    {
        for (Tunnel tunnel : open)
            tunnel.ping();
    }

    /** Open tunnels, closing ones included: a drain waits until there are none. */
    public int openTunnels()
    {
        return open.size();
    }

    /**
     * One action per tunnel that still carries bytes, each closing it with 1012 (service restart)
     * towards the browser and true when that call began the close; a drain spreads them over time
     * so that the browsers do not all reconnect at once. Tunnels already closing are left out, so a
     * later call lists only the tunnels opened since.
     */
    public List<BooleanSupplier> restarts()
    {
        List<BooleanSupplier> restarts = new ArrayList<>();
        for (Tunnel tunnel : open)
        {
            if (tunnel.flowing())
                restarts.add(tunnel::restart);
        }
        return restarts;
    }

    /** Tells both sides of every tunnel that the gateway is going away (1001), so that clients reconnect to another replica. */
    public void endTunnels()
    {
        for (Tunnel tunnel : open)
            tunnel.shutdown();
    }

    /** Stops the pings, closes every tunnel with 1001, then stops the client. */
    @Override
    public void close() throws Exception
    {
        for (ScheduledFuture<?> scheduled : new ScheduledFuture<?>[] {pings, standing})
        {
            if (scheduled != null)
                scheduled.cancel(false);
        }
        endTunnels();
        client.stop();
    }

    /**
     * One upgrade's sandbox leg between the handshake and the dispatch back into the servlet. The
     * first outcome settles it: the leg opening, the leg failing, the container's timeout or the
     * browser going away. A leg that opens after its request has given up is closed at once.
     */
    private final class SandboxConnect implements AsyncListener
    {
        private final String sandboxId;
        private final Route route;
        private final ByteBufferPool buffers;
        private final AtomicBoolean settled = new AtomicBoolean();
        private final AtomicBoolean dispatched = new AtomicBoolean();
        private volatile Tunnel tunnel;
        private volatile Throwable failure;

        SandboxConnect(String sandboxId, Route route, ByteBufferPool buffers)
        {
            this.sandboxId = sandboxId;
            this.route = route;
            this.buffers = buffers;
        }

        /** @return whether this outcome is the one the request gets */
        boolean settle(SandboxHandshake.Opened opened, Throwable failure)
        {
            Tunnel joined = opened == null ? null : new Tunnel(sandboxId, route, opened.leg(), opened.answer(), buffers, shared);
            if (!settled.compareAndSet(false, true))
            {
                if (joined != null)
                    joined.abandon();
                return false;
            }
            this.tunnel = joined;
            this.failure = failure;
            return true;
        }

        /** Sends the request back into the servlet, once, whichever outcome settled it. */
        void dispatch(AsyncContext async)
        {
            if (dispatched.compareAndSet(false, true))
                async.dispatch();
        }

        /** @throws GatewayException why the leg did not open */
        Tunnel tunnel()
        {
            Throwable x = failure;
            if (x == null)
                return tunnel;
            LOG.debug("WebSocket to sandbox {} failed", sandboxId, x);
            throw failed(x);
        }

        @Override
        public void onTimeout(AsyncEvent event)
        {
            settle(null, new TimeoutException("the sandbox leg did not open in time"));
            // Dispatched here even when the leg's own outcome won an instant ago and dispatched
            // already (a busy machine delays the client's timeout past the container's): that
            // dispatch may have come while the container was starting to expire the request, where
            // it does not count, and a timeout that no listener dispatches is answered 500 by the
            // container. A dispatch that did count makes this one throw, and the request goes back once.
            dispatched.set(true);
            try
            {
                event.getAsyncContext().dispatch();
            }
            catch (IllegalStateException alreadyDispatched)
            {
                LOG.debug("WebSocket to sandbox {}: dispatched before the timeout", sandboxId);
            }
        }

        @Override
        public void onError(AsyncEvent event)
        {
            // The browser's connection failed while the leg was opening: nobody is left to answer.
            if (settle(null, event.getThrowable()))
                event.getAsyncContext().complete();
        }

        @Override
        public void onComplete(AsyncEvent event)
        {
        }

        @Override
        public void onStartAsync(AsyncEvent event)
        {
        }
    }
}
