package io.sandgate.ingress.websocket;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.ingress.ActivityRecorder;
import io.sandgate.ingress.Route;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.util.Callback;

/**
 * One browser WebSocket joined to its sandbox's as a byte tunnel, once both handshakes are done (the
 * sandbox's first, so the browser's 101 repeats its answer): frames pass as the bytes they are, so
 * extensions such as permessage-deflate work end to end, between whichever endpoints negotiated them.
 *
 * <p>Two {@link Pump}s copy bytes, one each way. A pump reads its source only once its sink has
 * taken the last bytes, so a slow reader slows its peer down and the gateway holds at most one buffer
 * per direction; an idle tunnel holds none. Each pump follows its direction's frame headers with a
 * {@link FrameTracker}: it counts messages, closes a message over the size limit (1009) before any of
 * its frames passes, writes the gateway's own pings between whole frames and drops the pongs that
 * answer them.</p>
 *
 * <p>Closing: close frames pass like any other, and the tunnel ends once each side's close frame has
 * passed. A side that is gone without one (1006) has the other side told with a close frame of the
 * gateway's, 1011 ("sandbox connection lost") to a browser and 1001 to a sandbox, unless that side
 * was in the middle of a frame, when only cutting its connection is honest. When the gateway closes
 * (revocation, size limit, idle timeout, drain, shutdown) it writes close frames both ways and then drops
 * what either side still sends but its own close. Whatever is still open {@link #CLOSE_GRACE_MILLIS}
 * after closing began is cut.</p>
 *
 * <p>The tunnel's own {@link State} only moves forward, in {@link #advance}: waiting for the
 * browser's 101, open, closing, closed. Each pump has its own ({@link Pump.State}).</p>
 */
final class Tunnel
{
    /** How long the close handshakes may take before both connections are cut. */
    private static final long CLOSE_GRACE_MILLIS = 5000;
    static final int GOING_AWAY = 1001;
    /** RFC 6455 §7.4.1 as registered by IANA: the service is restarting, the client may reconnect (elsewhere). */
    static final int SERVICE_RESTART = 1012;
    private static final int ABNORMAL = 1006;
    private static final int INTERNAL_ERROR = 1011;

    enum Side
    {
        BROWSER, SANDBOX;

        String label()
        {
            return this == BROWSER ? "browser" : "sandbox";
        }
    }

    /** Where a tunnel is in its life; it never goes back. */
    private enum State
    {
        /** The sandbox said 101; the browser has not had its own yet, and nothing flows. */
        WAITING,
        /** Both sides upgraded: the pumps copy. */
        OPEN,
        /** A close frame is passing, the gateway closes, or a side is gone: the other side has {@link #CLOSE_GRACE_MILLIS} to finish. */
        CLOSING,
        /** Both connections are closed. */
        CLOSED
    }

    /** Counters shared by all tunnels. */
    record Meters(MeterRegistry registry, Counter bytesToSandbox, Counter bytesToBrowser, Counter messagesToSandbox, Counter messagesToBrowser)
    {
        void closed(String by, int code)
        {
            registry.counter("sandgate.ingress.websocket.closes", "by", by, "code", Integer.toString(code)).increment();
        }
    }

    /**
     * What every tunnel of one gateway shares.
     *
     * @param activity where each tunnel notes that it is open and that data passes
     */
    record Shared(long maxMessageSize, Duration idleTimeout, Set<Tunnel> open, Meters meters, ScheduledExecutorService timer, ActivityRecorder activity)
    {
    }

    /**
     * What the sandbox answered to the upgrade: the browser's 101 repeats it. The browser's own key
     * went to the sandbox, so the sandbox's accept value is the one the browser expects.
     */
    record Answer(String accept, String protocol, String extensions)
    {
        void headers(BiConsumer<String, String> header)
        {
            header.accept(HttpHeader.UPGRADE.asString(), "websocket");
            header.accept(HttpHeader.CONNECTION.asString(), "Upgrade");
            header.accept(HttpHeader.SEC_WEBSOCKET_ACCEPT.asString(), accept);
            if (protocol != null)
                header.accept(HttpHeader.SEC_WEBSOCKET_SUBPROTOCOL.asString(), protocol);
            if (extensions != null)
                header.accept(HttpHeader.SEC_WEBSOCKET_EXTENSIONS.asString(), extensions);
        }
    }

    private final String sandboxId;
    /** The route the tunnel was opened on: a revocation or a new pod changes the current one. */
    private final Route route;
    private final Leg sandbox;
    private final Answer answer;
    /** Where the pumps' read buffers come from: the browser connection's server's pool when the bridge can reach it. */
    private final ByteBufferPool buffers;
    private final Shared shared;
    // Guarded by this.
    private State state = State.WAITING;
    private Leg browser;
    private Pump toBrowser;
    private Pump toSandbox;
    /** The sandbox's activity notes while the tunnel is open; nothing before. */
    private ActivityRecorder.WebSocket traffic = ActivityRecorder.WebSocket.NONE;
    private int pumpsDone;
    private ScheduledFuture<?> grace;

    Tunnel(String sandboxId, Route route, Leg sandbox, Answer answer, ByteBufferPool buffers, Shared shared)
    {
        this.sandboxId = sandboxId;
        this.route = route;
        this.sandbox = sandbox;
        this.answer = answer;
        this.buffers = buffers;
        this.shared = shared;
    }

    String sandboxId()
    {
        return sandboxId;
    }

    Answer answer()
    {
        return answer;
    }

    /** How long a leg may carry nothing either way before the gateway closes the tunnel (1001). */
    Duration idleTimeout()
    {
        return shared.idleTimeout;
    }

    /** Whether the sandbox's current route still stands for this tunnel: no revocation, no new pod since it opened. */
    boolean standsFor(Route current)
    {
        return route.sameAccess(current);
    }

    /** The browser has its 101 and its connection is the browser leg: bytes start to flow. */
    void browserReady(Leg leg)
    {
        Pump down;
        Pump up;
        synchronized (this)
        {
            if (!advance(State.OPEN))
            {
                leg.close();
                sandbox.close();
                return;
            }
            browser = leg;
            traffic = shared.activity.webSocketOpened(sandboxId);
            boolean direct = leg.direct() && sandbox.direct();
            down = new Pump(this, Side.SANDBOX, sandbox, leg, buffers, direct, shared.maxMessageSize,
                shared.meters.bytesToBrowser(), shared.meters.messagesToBrowser(), traffic);
            up = new Pump(this, Side.BROWSER, leg, sandbox, buffers, direct, shared.maxMessageSize,
                shared.meters.bytesToSandbox(), shared.meters.messagesToSandbox(), traffic);
            toBrowser = down;
            toSandbox = up;
            shared.open.add(this);
        }
        down.iterate();
        up.iterate();
    }

    /** The browser never got its 101 (its request gave up, or the upgrade failed): the sandbox is told so. */
    void abandon()
    {
        sandbox.write(Callback.from(sandbox::close, x -> sandbox.close()), FrameTracker.close(GOING_AWAY, "the browser's request gave up", true));
    }

    /** Both legs get a ping between whole frames; their pongs stay in the gateway. */
    void ping()
    {
        Pump down;
        Pump up;
        synchronized (this)
        {
            if (state != State.OPEN)
                return;
            down = toBrowser;
            up = toSandbox;
        }
        down.wantPing();
        up.wantPing();
    }

    /** Access revoked (or the pod replaced): the browser is told so (1008), the sandbox that it went away. */
    void revoke()
    {
        closeBoth(1008, GOING_AWAY, "access revoked");
    }

    /** Gateway stopping: both sides are told, so that clients reconnect to another replica. */
    void shutdown()
    {
        closeBoth(GOING_AWAY, GOING_AWAY, "gateway shutting down");
    }

    /**
     * This replica drains: the browser is told the service restarts (1012), which a client takes as
     * leave to reconnect at once, through the balancer to another replica; the sandbox that the
     * gateway went away.
     */
    boolean restart()
    {
        return closeBoth(SERVICE_RESTART, GOING_AWAY, "service restart");
    }

    /** Whether bytes flow and no close has begun: a drain's turn for it is still to come. */
    synchronized boolean flowing()
    {
        return state == State.OPEN;
    }

    /**
     * A close of the gateway's own: a close frame each way, at the next frame boundary.
     *
     * @return whether this call began the close, false when the tunnel was closing already
     */
    boolean closeBoth(int toBrowserCode, int toSandboxCode, String reason)
    {
        Pump down;
        Pump up;
        synchronized (this)
        {
            if (!advance(State.CLOSING))
                return false;
            shared.meters.closed("gateway", toBrowserCode);
            down = toBrowser;
            up = toSandbox;
        }
        if (down == null)
        {
            // Not started: nothing flows yet, and the browser has no WebSocket to close.
            closeLegs();
            return true;
        }
        down.wantClose(FrameTracker.close(toBrowserCode, reason, false));
        up.wantClose(FrameTracker.close(toSandboxCode, reason, true));
        return true;
    }

    /** A side's close frame is passing: the other side has {@link #CLOSE_GRACE_MILLIS} to answer it. */
    synchronized void closeFramePassing(Side from, int code)
    {
        shared.meters.closed(from.label(), code);
        advance(State.CLOSING);
    }

    /**
     * A side is gone without a close frame (1006): the other side is told with a close frame of the
     * gateway's, written by the pump whose source is gone, and nothing more is written to the lost side.
     */
    void lost(Side side)
    {
        Pump fromLost;
        Pump toLost;
        boolean tell;
        synchronized (this)
        {
            if (state == State.CLOSED)
                return;
            tell = advance(State.CLOSING);
            if (tell)
                shared.meters.closed(side.label(), ABNORMAL);
            fromLost = side == Side.SANDBOX ? toBrowser : toSandbox;
            toLost = side == Side.SANDBOX ? toSandbox : toBrowser;
        }
        toLost.sinkGone();
        if (tell)
        {
            fromLost.wantClose(side == Side.SANDBOX
                ? FrameTracker.close(INTERNAL_ERROR, "sandbox connection lost", false)
                : FrameTracker.close(GOING_AWAY, "browser went away", true));
        }
        // Its pump learns of it from its own read, if it has not already.
        (side == Side.SANDBOX ? sandbox : browser).close();
    }

    /**
     * The one place the state changes, and only forward, so that a late event never reopens a tunnel.
     * Closing starts the grace period; closed ends it. The caller holds the lock.
     *
     * @return whether the tunnel moved, false when it was there or further already
     */
    private boolean advance(State next)
    {
        if (state.compareTo(next) >= 0)
            return false;
        state = next;
        if (next == State.CLOSING)
            grace = shared.timer.schedule(this::closeLegs, CLOSE_GRACE_MILLIS, TimeUnit.MILLISECONDS);
        else if (next == State.CLOSED && grace != null)
            grace.cancel(false);
        return true;
    }

    void pumpDone()
    {
        boolean both;
        synchronized (this)
        {
            both = ++pumpsDone == 2;
        }
        if (both)
            closeLegs();
    }

    private void closeLegs()
    {
        Leg b;
        ActivityRecorder.WebSocket closing;
        synchronized (this)
        {
            if (!advance(State.CLOSED))
                return;
            b = browser;
            closing = traffic;
        }
        shared.open.remove(this);
        closing.closed();
        sandbox.close();
        if (b != null)
            b.close();
    }
}
