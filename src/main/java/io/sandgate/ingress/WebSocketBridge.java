package io.sandgate.ingress;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.ConfigKeys;
import io.sandgate.config.IngressConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.net.Origins;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import io.sandgate.web.RequestAttribute;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.websocket.DeploymentException;
import jakarta.websocket.Endpoint;
import jakarta.websocket.server.ServerContainer;
import jakarta.websocket.server.ServerEndpointConfig;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.api.exceptions.UpgradeException;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;

/**
 * Bridges a browser's WebSocket to its sandbox. The sandbox leg is opened first, offering the
 * browser's subprotocols, so that the browser's upgrade can answer with the one the sandbox picked,
 * and so that an unreachable sandbox is an honest HTTP 502 rather than a socket that opens and dies.
 * No thread waits for it: the browser's request goes async while the leg opens, and comes back
 * through the container's dispatch ({@link #upgrade}, then {@link #resume}), which is how a servlet
 * container (Jetty and Tomcat alike) lets a later thread perform the upgrade.
 *
 * <p>Towards browsers it uses the standard Jakarta WebSocket API (so the WAR bridges on Tomcat as
 * well as Jetty); towards sandboxes, Jetty's WebSocketClient with explicit demand, which is what
 * gives end-to-end back-pressure (see {@link BridgedSession}).</p>
 *
 * <p>Built, started and closed by the composition root, which hands it to {@link IngressServlet}
 * and to whoever shows live sessions; it keeps a client of its own and pings on the gateway's
 * timer.</p>
 */
public final class WebSocketBridge implements AutoCloseable
{
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(WebSocketBridge.class);
    private static final String SERVER_CONTAINER = ServerContainer.class.getName();
    private static final RequestAttribute<SandboxConnect> CONNECT = RequestAttribute.of("ingress.websocket.connect", SandboxConnect.class);
    private static final long CONNECT_GRACE_MILLIS = 1000;

    private final Ingress ingress;
    private final IngressConfig.WebSocket config;
    private final Origins origins;
    private final WebSocketClient client;
    private final Schedulers schedulers;
    private final Set<BridgedSession> open = ConcurrentHashMap.newKeySet();
    private final BridgedSession.Meters meters;
    private volatile ScheduledFuture<?> pings;
    private volatile ScheduledFuture<?> standing;

    /**
     * @param publicOrigins {@code server.public-origins}: pages of these may open sandbox WebSockets
     */
    public WebSocketBridge(Ingress ingress, List<String> publicOrigins, MeterRegistry registry, Schedulers schedulers)
    {
        this.ingress = ingress;
        this.config = ingress.config().webSocket();
        this.origins = new Origins(publicOrigins).and(config.allowedOrigins());
        // Its own HttpClient: the proxy servlet's has its protocol handlers stripped, including the
        // one that performs WebSocket upgrades.
        HttpClient httpClient = new HttpClient();
        httpClient.setDestinationIdleTimeout(ingress.config().destinationIdleTimeout().toMillis());
        httpClient.setConnectTimeout(ingress.config().connectTimeout().toMillis());
        this.client = new WebSocketClient(httpClient);
        client.setIdleTimeout(config.idleTimeout());
        client.setMaxBinaryMessageSize(config.maxMessageSize());
        client.setMaxTextMessageSize(config.maxMessageSize());
        client.setConnectTimeout(ingress.config().connectTimeout().toMillis());
        client.setStopAtShutdown(false);
        this.schedulers = schedulers;
        registry.gaugeCollectionSize("sandgate.ingress.websocket.sessions", Collections.emptyList(), open);
        this.meters = new BridgedSession.Meters(registry,
            Counter.builder("sandgate.ingress.websocket.bytes").tag("direction", "to_sandbox").description("Payload bytes bridged").register(registry),
            Counter.builder("sandgate.ingress.websocket.bytes").tag("direction", "to_browser").description("Payload bytes bridged").register(registry));
    }

    /** Starts the client towards sandboxes and the pings on both legs of every bridged session. */
    public void start() throws Exception
    {
        client.start();
        long ping = config.pingInterval().toMillis();
        // Sending a ping only queues a frame, so the tick never blocks the timer.
        pings = schedulers.timer().scheduleAtFixedRate(this::pingAll, ping, ping, TimeUnit.MILLISECONDS);
        // A revocation or a new pod reaches every replica through its route cache; open sessions
        // follow within a second. A route lookup may ask the store, so this runs on a worker.
        if (ingress.config().access() == IngressConfig.Access.SIGNED)
            standing = schedulers.every(Duration.ofSeconds(1), Duration.ofSeconds(1), "WebSocket revocation check", this::dropRevoked);
    }

    /**
     * Closes this replica's bridged sessions of a sandbox (an operator revoked access to it).
     *
     * @return how many were closed
     */
    public int closeSandbox(String sandboxId)
    {
        int closed = 0;
        for (BridgedSession session : open)
        {
            if (session.sandboxId().equals(sandboxId))
            {
                session.revoke();
                closed++;
            }
        }
        return closed;
    }

    private void dropRevoked()
    {
        for (BridgedSession session : open)
        {
            Optional<Route> current = ingress.currentRoute(session.sandboxId());
            if (current.isPresent() && !session.standsFor(current.get()))
                session.revoke();
        }
    }

    /** Open bridged WebSockets by sandbox id (live ingress sessions), for the admin view. */
    public Map<String, Integer> liveSessions()
    {
        Map<String, Integer> counts = new TreeMap<>();
        for (BridgedSession session : open)
            counts.merge(session.sandboxId(), 1, Integer::sum);
        return counts;
    }

    /** Whether this request asks to become a WebSocket. */
    static boolean isUpgrade(HttpServletRequest request)
    {
        return ForwardPolicy.isWebSocketUpgrade(request.getMethod(), request.getHeader(HttpHeader.UPGRADE.asString()));
    }

    /**
     * First half of an upgrade: checks the Origin, starts opening the sandbox leg and lets the
     * request thread go. A sandbox that accepts TCP and never answers holds no thread of the
     * gateway's: the request waits in async mode until the leg opens or fails, or the connect
     * timeout passes, and the container then dispatches it back to {@link #resume}.
     *
     * @throws GatewayException 403 for a foreign Origin, 501 without a WebSocket container
     */
    void upgrade(HttpServletRequest request, HttpServletResponse response, IngressDecision.Forward forward, Route route)
    {
        checkOrigin(request, forward);
        serverContainer(request);
        BridgedSession bridge = new BridgedSession(forward.sandboxId(), route, config, open, meters);
        ClientUpgradeRequest upgrade = sandboxUpgrade(request);
        URI target = URI.create("ws://" + route.authority() + forward.upstreamPath());

        SandboxConnect connect = new SandboxConnect(forward.sandboxId(), bridge);
        CONNECT.set(request, connect);
        AsyncContext async = request.startAsync();
        // The container's timer, a little after the client's own timeout: a leg that has not
        // settled by then is answered 504 all the same.
        async.setTimeout(ingress.config().connectTimeout().toMillis() + CONNECT_GRACE_MILLIS);
        async.addListener(connect);
        CompletableFuture<Session> leg;
        try
        {
            leg = client.connect(bridge.sandboxListener(), target, upgrade);
        }
        catch (IOException | RuntimeException x)
        {
            leg = CompletableFuture.failedFuture(x);
        }
        leg.whenComplete((session, failure) ->
        {
            if (connect.settle(session, failure))
                async.dispatch();
        });
    }

    /**
     * Second half, on the container's dispatch: upgrades the browser with the subprotocol the
     * sandbox picked, or answers why the sandbox leg failed.
     *
     * @return false when the request is not an upgrade coming back from {@link #upgrade}
     * @throws GatewayException 502/504 when the sandbox leg failed
     */
    boolean resume(HttpServletRequest request, HttpServletResponse response) throws IOException
    {
        SandboxConnect connect = CONNECT.get(request);
        // Back by dispatch: ASYNC, or in host mode FORWARD, when the session filter hands it on by name.
        if (connect == null || request.getDispatcherType() == DispatcherType.REQUEST)
            return false;
        CONNECT.set(request, null);
        Session sandbox = connect.session();
        BridgedSession bridge = connect.bridge;
        String protocol = sandbox.getUpgradeResponse().getAcceptedSubProtocol();
        ServerEndpointConfig endpoint = ServerEndpointConfig.Builder.create(Endpoint.class, request.getRequestURI())
            .subprotocols(protocol == null ? List.of() : List.of(protocol))
            .configurator(new ServerEndpointConfig.Configurator()
            {
                @Override
                public <T> T getEndpointInstance(Class<T> endpointClass)
                {
                    return endpointClass.cast(bridge.browserEndpoint());
                }

                @Override
                public String getNegotiatedSubprotocol(List<String> supported, List<String> requested)
                {
                    return protocol == null ? "" : protocol;
                }

                @Override
                public boolean checkOrigin(String originHeaderValue)
                {
                    return true;
                }
            })
            .build();
        try
        {
            serverContainer(request).upgradeHttpToWebSocket(request, response, endpoint, Map.of());
        }
        catch (DeploymentException | IOException | RuntimeException x)
        {
            sandbox.close(1011, "browser upgrade failed", Callback.NOOP);
            throw x instanceof IOException io ? io : new IOException(x);
        }
        return true;
    }

    private static ServerContainer serverContainer(HttpServletRequest request)
    {
        ServerContainer container = (ServerContainer)request.getServletContext().getAttribute(SERVER_CONTAINER);
        if (container == null)
            throw new GatewayException(HttpStatus.NOT_IMPLEMENTED_501, "websocket_unsupported", "this servlet container does not offer WebSocket");
        return container;
    }

    /**
     * A page on another site must not open a sandbox session with the user's cookie (cross-site
     * WebSocket hijacking). The Origin must be a loopback one, one of {@code server.public-origins}
     * or {@code ingress.websocket.allowed-origins}, or in host mode the sandbox's own origin, built
     * from the host pattern. Never whatever the {@code Host} header says: a DNS-rebinding page sends
     * {@code Host: evil.example} with {@code Origin: http://evil.example}. A request without Origin
     * is not from a browser, which always sends it on WebSocket upgrades.
     */
    private void checkOrigin(HttpServletRequest request, IngressDecision.Forward forward)
    {
        String origin = request.getHeader(HttpHeader.ORIGIN.asString());
        if (origin == null || origins.allows(origin, forward.hostMode() ? forward.host().origin() : null))
            return;
        throw GatewayException.forbidden("WebSocket from origin " + origin.replaceAll("[^\\x20-\\x7e]", "?") + " is not allowed; "
            + "if users reach the gateway there, add it to " + ConfigKeys.SERVER_PUBLIC_ORIGINS.name()
            + ", or to " + ConfigKeys.WS_ALLOWED_ORIGINS.name() + " for pages that may open sandbox WebSockets");
    }

    /** The sandbox leg's upgrade request: the browser's subprotocols and cookies (less the gateway's), forwarding headers. */
    private ClientUpgradeRequest sandboxUpgrade(HttpServletRequest request)
    {
        ClientUpgradeRequest upgrade = new ClientUpgradeRequest();
        List<String> protocols = new ArrayList<>();
        for (String header : Collections.list(request.getHeaders(HttpHeader.SEC_WEBSOCKET_SUBPROTOCOL.asString())))
        {
            for (String protocol : header.split(","))
            {
                if (!protocol.isBlank())
                    protocols.add(protocol.trim());
            }
        }
        if (!protocols.isEmpty())
            upgrade.setSubProtocols(protocols);
        String cookies = ForwardPolicy.withoutSessionCookie(String.join("; ", Collections.list(request.getHeaders(HttpHeader.COOKIE.asString()))), ingress.config().cookie().name());
        if (cookies != null)
            upgrade.setHeader(HttpHeader.COOKIE.asString(), cookies);
        String userAgent = request.getHeader(HttpHeader.USER_AGENT.asString());
        if (userAgent != null)
            upgrade.setHeader(HttpHeader.USER_AGENT.asString(), userAgent);
        ClientInfo clients = ingress.clients();
        upgrade.setHeader(ClientInfo.X_FORWARDED_FOR, request.getRemoteAddr());
        upgrade.setHeader(ClientInfo.X_FORWARDED_PROTO, clients.scheme(request));
        upgrade.setHeader(ClientInfo.X_FORWARDED_HOST, clients.host(request));
        upgrade.setTimeout(ingress.config().connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        return upgrade;
    }

    /**
     * What the browser is told when the sandbox leg did not open: the one error mapping, where a
     * sandbox that answered the upgrade with a status of its own (no I/O error) refused it.
     */
    static GatewayException failed(Throwable failure)
    {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        GatewayException error = Errors.map(cause);
        if (error.status() == HttpStatus.INTERNAL_SERVER_ERROR_500 && cause instanceof UpgradeException)
            return new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_refused", "the sandbox refused the WebSocket");
        return error;
    }

    private void pingAll()
    {
        for (BridgedSession session : open)
            session.ping();
    }

    /** Stops the pings, closes every bridged session with 1001 (clients reconnect elsewhere), then stops the client. */
    @Override
    public void close() throws Exception
    {
        for (ScheduledFuture<?> scheduled : new ScheduledFuture<?>[] {pings, standing})
        {
            if (scheduled != null)
                scheduled.cancel(false);
        }
        for (BridgedSession session : open)
            session.shutdown();
        client.stop();
    }

    /**
     * One upgrade's sandbox leg between the connect and the dispatch back into the servlet. The
     * first outcome settles it: the leg opening, the leg failing, the container's timeout or the
     * browser going away. A leg that opens after its request has given up is closed at once.
     */
    private static final class SandboxConnect implements AsyncListener
    {
        private final String sandboxId;
        private final BridgedSession bridge;
        private final AtomicBoolean settled = new AtomicBoolean();
        private volatile Session session;
        private volatile Throwable failure;

        SandboxConnect(String sandboxId, BridgedSession bridge)
        {
            this.sandboxId = sandboxId;
            this.bridge = bridge;
        }

        /** @return whether this outcome is the one the request gets */
        boolean settle(Session session, Throwable failure)
        {
            if (!settled.compareAndSet(false, true))
            {
                if (session != null)
                    session.close(1001, "the browser's request gave up", Callback.NOOP);
                return false;
            }
            this.session = session;
            this.failure = failure;
            return true;
        }

        /** @throws GatewayException why the leg did not open */
        Session session()
        {
            Throwable x = failure;
            if (x == null)
                return session;
            LOG.debug("WebSocket to sandbox {} failed", sandboxId, x);
            throw failed(x);
        }

        @Override
        public void onTimeout(AsyncEvent event)
        {
            if (settle(null, new TimeoutException("the sandbox leg did not open in time")))
                event.getAsyncContext().dispatch();
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
