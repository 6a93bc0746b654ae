package io.sandgate.ingress;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.IngressConfig;
import jakarta.websocket.CloseReason;
import jakarta.websocket.Endpoint;
import jakarta.websocket.EndpointConfig;
import jakarta.websocket.MessageHandler;
import jakarta.websocket.PongMessage;
import jakarta.websocket.SendResult;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One browser WebSocket joined to one sandbox WebSocket.
 *
 * <p>Back-pressure, end to end: the sandbox leg reads with explicit demand and demands the next
 * message only when the browser leg has written the current one, so a slow browser slows the
 * sandbox down and at most one message per session is in flight in the gateway. The browser leg's
 * handler returns only once the sandbox leg has written the message, so the container reads the
 * next browser frame only then. Messages pass whole: a fragmented message is reassembled (bounded
 * by the maximum message size) and may be re-fragmented, which RFC 6455 section 5.4 allows an
 * intermediary to do.</p>
 *
 * <p>Closing: a close from either side is passed to the other with its code and reason; a leg
 * that dies without a close frame (1006) becomes a real close frame on the other leg, 1011 from a
 * sandbox ("sandbox connection lost"), 1001 from a browser.</p>
 */
public final class BridgedSession
{
    private static final Logger LOG = LoggerFactory.getLogger(BridgedSession.class);
    private static final int NO_STATUS = 1005;
    private static final int ABNORMAL = 1006;
    private static final int TLS_FAILURE = 1015;

    /** Counters shared by all sessions. */
    record Meters(MeterRegistry registry, Counter toSandbox, Counter toBrowser)
    {
        void closed(String by, int code)
        {
            registry.counter("sandgate.ingress.websocket.closes", "by", by, "code", Integer.toString(code)).increment();
        }
    }

    private final String sandboxId;
    private final IngressConfig.WebSocket config;
    private final Set<BridgedSession> open;
    private final Meters meters;
    private volatile Session sandbox;
    private volatile jakarta.websocket.Session browser;
    /** The route the session was opened on: a revocation or a new pod changes the current one. */
    private final Route route;

    BridgedSession(String sandboxId, Route route, IngressConfig.WebSocket config, Set<BridgedSession> open, Meters meters)
    {
        this.sandboxId = sandboxId;
        this.route = route;
        this.config = config;
        this.open = open;
        this.meters = meters;
    }

    String sandboxId()
    {
        return sandboxId;
    }

    Session.Listener sandboxListener()
    {
        return new SandboxLeg();
    }

    Endpoint browserEndpoint()
    {
        return new BrowserLeg();
    }

    void ping()
    {
        ByteBuffer payload = ByteBuffer.allocate(0);
        Session s = sandbox;
        if (s != null && s.isOpen())
            s.sendPing(payload, Callback.NOOP);
        jakarta.websocket.Session b = browser;
        if (b != null && b.isOpen())
        {
            try
            {
                b.getAsyncRemote().sendPing(payload);
            }
            catch (IOException | IllegalStateException x)
            {
                LOG.debug("Ping to browser failed", x);
            }
        }
    }

    /** Whether the sandbox's current route still stands for this session: no revocation, no new pod since it opened. */
    boolean standsFor(Route current)
    {
        return current.revokedBefore().equals(route.revokedBefore()) && current.generation().equals(route.generation());
    }

    /** Access revoked (or the pod replaced): the browser is told so (1008) and the sandbox leg closed. */
    void revoke()
    {
        closeBrowser(1008, "access revoked");
        closeSandbox(1001, "access revoked");
    }

    /** Gateway stopping: tell both sides, so clients reconnect to another replica. */
    void shutdown()
    {
        closeBrowser(1001, "gateway shutting down");
        closeSandbox(1001, "gateway shutting down");
    }

    private void closeBrowser(int code, String reason)
    {
        jakarta.websocket.Session b = browser;
        open.remove(this);
        if (b == null || !b.isOpen())
            return;
        try
        {
            b.close(new CloseReason(CloseReason.CloseCodes.getCloseCode(code), reason));
        }
        catch (IOException | IllegalStateException x)
        {
            LOG.debug("Closing browser leg failed", x);
        }
    }

    private void closeSandbox(int code, String reason)
    {
        open.remove(this);
        Session s = sandbox;
        if (s != null && s.isOpen())
            s.close(code, reason, Callback.NOOP);
    }

    /** The sandbox leg, reading with explicit demand. Public: Jetty binds listener methods through a public lookup. */
    public final class SandboxLeg implements Session.Listener
    {
        @Override
        public void onWebSocketOpen(Session session)
        {
            // No demand yet: nothing is read from the sandbox until the browser leg is open.
            sandbox = session;
        }

        @Override
        public void onWebSocketBinary(ByteBuffer payload, Callback callback)
        {
            meters.toBrowser().increment(payload.remaining());
            browser.getAsyncRemote().sendBinary(payload, result -> afterBrowserWrite(result, callback));
        }

        @Override
        public void onWebSocketText(String text)
        {
            meters.toBrowser().increment(text.length());
            browser.getAsyncRemote().sendText(text, result -> afterBrowserWrite(result, Callback.NOOP));
        }

        private void afterBrowserWrite(SendResult result, Callback callback)
        {
            if (result.isOK())
            {
                callback.succeed();
                sandbox.demand();
            }
            else
            {
                callback.fail(result.getException());
                closeSandbox(1001, "browser connection lost");
            }
        }

        @Override
        public void onWebSocketPing(ByteBuffer payload)
        {
            // With explicit demand the application answers pings itself.
            ByteBuffer copy = ByteBuffer.allocate(payload.remaining()).put(payload.slice()).flip();
            sandbox.sendPong(copy, Callback.NOOP);
            sandbox.demand();
        }

        @Override
        public void onWebSocketPong(ByteBuffer payload)
        {
            sandbox.demand();
        }

        @Override
        public void onWebSocketClose(int statusCode, String reason)
        {
            meters.closed("sandbox", statusCode);
            if (statusCode == ABNORMAL || statusCode == TLS_FAILURE)
                closeBrowser(1011, "sandbox connection lost");
            else
                closeBrowser(statusCode == NO_STATUS ? 1000 : statusCode, reason == null ? "" : reason);
        }

        @Override
        public void onWebSocketError(Throwable cause)
        {
            LOG.debug("Sandbox {} WebSocket failed", sandboxId, cause);
            closeBrowser(1011, "sandbox connection lost");
        }
    }

    /** The browser leg, on the container's standard WebSocket API. */
    private final class BrowserLeg extends Endpoint
    {
        @Override
        public void onOpen(jakarta.websocket.Session session, EndpointConfig endpointConfig)
        {
            browser = session;
            session.setMaxIdleTimeout(config.idleTimeout().toMillis());
            session.setMaxBinaryMessageBufferSize(config.maxMessageSize());
            session.setMaxTextMessageBufferSize(config.maxMessageSize());
            session.addMessageHandler(ByteBuffer.class, (MessageHandler.Whole<ByteBuffer>)message ->
            {
                meters.toSandbox().increment(message.remaining());
                toSandbox(callback -> sandbox.sendBinary(message, callback));
            });
            session.addMessageHandler(String.class, (MessageHandler.Whole<String>)message ->
            {
                meters.toSandbox().increment(message.length());
                toSandbox(callback -> sandbox.sendText(message, callback));
            });
            session.addMessageHandler(PongMessage.class, (MessageHandler.Whole<PongMessage>)pong ->
            {
            });
            open.add(BridgedSession.this);
            Session s = sandbox;
            if (s.isOpen())
                s.demand();
            else
                closeBrowser(1011, "sandbox connection lost");
        }

        /** Writes to the sandbox and waits: the container reads the next browser frame only then. */
        private void toSandbox(java.util.function.Consumer<Callback> send)
        {
            Callback.Completable written = new Callback.Completable();
            send.accept(written);
            try
            {
                written.get(config.idleTimeout().toMillis(), TimeUnit.MILLISECONDS);
            }
            catch (InterruptedException x)
            {
                Thread.currentThread().interrupt();
                closeBrowser(1001, "gateway shutting down");
            }
            catch (ExecutionException | TimeoutException x)
            {
                closeBrowser(1011, "sandbox connection lost");
            }
        }

        @Override
        public void onClose(jakarta.websocket.Session session, CloseReason reason)
        {
            int code = reason.getCloseCode().getCode();
            meters.closed("browser", code);
            if (code == ABNORMAL || code == TLS_FAILURE)
                closeSandbox(1001, "browser went away");
            else
                closeSandbox(code == NO_STATUS ? 1000 : code, reason.getReasonPhrase());
        }

        @Override
        public void onError(jakarta.websocket.Session session, Throwable cause)
        {
            LOG.debug("Browser WebSocket for sandbox {} failed", sandboxId, cause);
            closeSandbox(1001, "browser connection lost");
        }
    }
}
