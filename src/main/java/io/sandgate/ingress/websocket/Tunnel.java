package io.sandgate.ingress.websocket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.ingress.Route;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IteratingCallback;
import org.eclipse.jetty.util.thread.Invocable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One browser WebSocket joined to its sandbox's as a byte tunnel, once both handshakes are done (the
 * sandbox's first, so the browser's 101 repeats its answer): frames pass as the bytes they are, so
 * extensions such as permessage-deflate work end to end, between whichever endpoints negotiated them.
 *
 * <p>Two pumps copy bytes, one each way. A pump reads its source only once its sink has taken the
 * last bytes, so a slow reader slows its peer down and the gateway holds at most one buffer per
 * direction; an idle tunnel holds none. Each pump follows its direction's frame headers with a
 * {@link FrameTracker}: it counts messages, closes a message over the size limit (1009) before any of
 * its frames passes, writes the gateway's own pings between whole frames and drops the pongs that
 * answer them.</p>
 *
 * <p>Closing: close frames pass like any other, and the tunnel ends once each side's close frame has
 * passed. A side that is gone without one (1006) has the other side told with a close frame of the
 * gateway's, 1011 ("sandbox connection lost") to a browser and 1001 to a sandbox, unless that side
 * was in the middle of a frame, when only cutting its connection is honest. When the gateway closes
 * (revocation, size limit, idle timeout, shutdown) it writes close frames both ways and then drops
 * what either side still sends but its own close. Whatever is still open {@link #CLOSE_GRACE_MILLIS}
 * after closing began is cut.</p>
 */
final class Tunnel
{
    private static final Logger LOG = LoggerFactory.getLogger(Tunnel.class);
    /** How long the close handshakes may take before both connections are cut. */
    private static final long CLOSE_GRACE_MILLIS = 5000;
    /** One read's worth: large enough for a desktop update in a few reads. */
    private static final int BUFFER_SIZE = 16 * 1024;
    private static final int GOING_AWAY = 1001;
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

    /** Counters shared by all tunnels. */
    record Meters(MeterRegistry registry, Counter bytesToSandbox, Counter bytesToBrowser, Counter messagesToSandbox, Counter messagesToBrowser)
    {
        void closed(String by, int code)
        {
            registry.counter("sandgate.ingress.websocket.closes", "by", by, "code", Integer.toString(code)).increment();
        }
    }

    /** What every tunnel of one gateway shares. */
    record Shared(long maxMessageSize, Duration idleTimeout, Set<Tunnel> open, Meters meters, ScheduledExecutorService timer)
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
    private Leg browser;
    private Pump toBrowser;
    private Pump toSandbox;
    private boolean closing;
    private boolean closed;
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
            if (closing || closed)
            {
                leg.close();
                sandbox.close();
                return;
            }
            browser = leg;
            boolean direct = leg.direct() && sandbox.direct();
            down = new Pump(Side.SANDBOX, sandbox, leg, direct, shared.meters.bytesToBrowser(), shared.meters.messagesToBrowser());
            up = new Pump(Side.BROWSER, leg, sandbox, direct, shared.meters.bytesToSandbox(), shared.meters.messagesToSandbox());
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
            if (closing || toBrowser == null)
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

    /** A close of the gateway's own: a close frame each way, at the next frame boundary. */
    private void closeBoth(int toBrowserCode, int toSandboxCode, String reason)
    {
        Pump down;
        Pump up;
        synchronized (this)
        {
            if (closing || closed)
                return;
            closing = true;
            shared.meters.closed("gateway", toBrowserCode);
            startGrace();
            down = toBrowser;
            up = toSandbox;
        }
        if (down == null)
        {
            // Not started: nothing flows yet, and the browser has no WebSocket to close.
            closeLegs();
            return;
        }
        down.wantClose(FrameTracker.close(toBrowserCode, reason, false));
        up.wantClose(FrameTracker.close(toSandboxCode, reason, true));
    }

    /** A side's close frame is passing: the other side has {@link #CLOSE_GRACE_MILLIS} to answer it. */
    private synchronized void closeFramePassing(Side from, int code)
    {
        shared.meters.closed(from.label(), code);
        if (!closing)
        {
            closing = true;
            startGrace();
        }
    }

    /**
     * A side is gone without a close frame (1006): the other side is told with a close frame of the
     * gateway's, written by the pump whose source is gone, and nothing more is written to the lost side.
     */
    private void lost(Side side)
    {
        Pump fromLost;
        Pump toLost;
        boolean tell;
        synchronized (this)
        {
            if (closed)
                return;
            tell = !closing;
            if (tell)
            {
                closing = true;
                shared.meters.closed(side.label(), ABNORMAL);
                startGrace();
            }
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

    private void startGrace()
    {
        grace = shared.timer.schedule(this::closeLegs, CLOSE_GRACE_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void pumpDone()
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
        synchronized (this)
        {
            if (closed)
                return;
            closed = true;
            closing = true;
            if (grace != null)
                grace.cancel(false);
            b = browser;
        }
        shared.open.remove(this);
        sandbox.close();
        if (b != null)
            b.close();
    }

    /**
     * Copies one direction, following its frames. Reads only once the sink has taken the last bytes,
     * and runs on whichever thread the last read or write completed on, never waiting (so Jetty runs
     * it on its selector threads, without a hand-off per read).
     */
    private final class Pump extends IteratingCallback
    {
        private final Side from;
        private final Leg source;
        private final Leg sink;
        private final boolean direct;
        private final Counter bytes;
        private final Counter messages;
        private final FrameTracker tracker;
        /** Frames of the gateway's towards a sandbox are a client's, so masked (RFC 6455 section 5.3). */
        private final boolean maskOwnFrames;
        private final Callback readable;
        private RetainableByteBuffer buffer;
        /** The buffer's real limit while a part of it is being written. */
        private int restoreLimit = -1;
        /** A read callback is registered with the source. */
        private volatile boolean reading;
        /** The last read left room in the buffer. */
        private boolean drained;
        private volatile Throwable readFailure;
        private volatile boolean pingWanted;
        private volatile ByteBuffer closeWanted;
        /** Nothing more of the source's goes to the sink: the gateway closed it, or it is gone. */
        private volatile boolean discarding;
        /** When discarding began, the sink was between frames (so a close frame of the gateway's may still follow). */
        private volatile boolean stoppedAtBoundary;
        /** The tracker lost the thread: the rest of the source is dropped unread. */
        private boolean blind;
        /** The last write is on its way; the pump ends with it. */
        private boolean ending;

        Pump(Side from, Leg source, Leg sink, boolean direct, Counter bytes, Counter messages)
        {
            this.from = from;
            this.source = source;
            this.sink = sink;
            this.direct = direct;
            this.bytes = bytes;
            this.messages = messages;
            this.tracker = new FrameTracker(shared.maxMessageSize);
            this.maskOwnFrames = from == Side.BROWSER;
            this.readable = Callback.from(Invocable.InvocationType.NON_BLOCKING, this::onReadable, this::onUnreadable);
        }

        @Override
        public InvocationType getInvocationType()
        {
            return InvocationType.NON_BLOCKING;
        }

        void wantPing()
        {
            if (!discarding && closeWanted == null)
            {
                pingWanted = true;
                iterate();
            }
        }

        void wantClose(ByteBuffer frame)
        {
            synchronized (this)
            {
                if (discarding && !stoppedAtBoundary)
                    return;
                closeWanted = frame;
                pingWanted = false;
            }
            iterate();
        }

        /** The sink is gone: what the source still sends is read (for its close frame) and dropped. */
        void sinkGone()
        {
            synchronized (this)
            {
                stoppedAtBoundary = false;
                discarding = true;
                closeWanted = null;
                pingWanted = false;
            }
        }

        private boolean sinkAtBoundary()
        {
            return discarding ? stoppedAtBoundary : tracker.atBoundary();
        }

        /** The gateway's next frame for the sink, if one waits: a close before a ping, and after a close nothing. */
        private synchronized ByteBuffer ownFrame()
        {
            ByteBuffer close = closeWanted;
            if (close != null)
            {
                closeWanted = null;
                pingWanted = false;
                stoppedAtBoundary = true;
                discarding = true;
                return close;
            }
            if (pingWanted && !discarding)
            {
                pingWanted = false;
                return FrameTracker.keepalivePing(maskOwnFrames);
            }
            return null;
        }

        private synchronized ByteBuffer takeClose()
        {
            ByteBuffer close = closeWanted;
            closeWanted = null;
            return close;
        }

        /** Stops passing the source on at a frame boundary of the sink's, so that a close of the gateway's may follow. */
        private void stopAtBoundary()
        {
            stoppedAtBoundary = true;
            discarding = true;
        }

        private void onReadable()
        {
            reading = false;
            iterate();
        }

        private void onUnreadable(Throwable cause)
        {
            reading = false;
            // An idle timeout leaves the connection open: the gateway closes both sides properly.
            if (cause instanceof TimeoutException)
                closeBoth(GOING_AWAY, GOING_AWAY, "idle timeout");
            else
                readFailure = cause;
            iterate();
        }

        @Override
        protected Action process()
        {
            ByteBuffer in = buffer == null ? null : buffer.getByteBuffer();
            if (restoreLimit >= 0)
            {
                in.limit(restoreLimit);
                restoreLimit = -1;
            }
            count();
            if (ending)
                return Action.SUCCEEDED;
            while (true)
            {
                if ((closeWanted != null || pingWanted) && sinkAtBoundary())
                {
                    ByteBuffer own = ownFrame();
                    if (own != null)
                    {
                        sink.write(this, own);
                        return Action.SCHEDULED;
                    }
                }
                if (in == null || !in.hasRemaining())
                {
                    if (reading)
                        return Action.IDLE;
                    int filled = fill();
                    if (filled == 0)
                        return Action.IDLE;
                    if (filled < 0)
                        return sourceEnded();
                    in = buffer.getByteBuffer();
                }
                int passing = blind ? in.remaining() : tracker.pass(in, closeWanted != null || pingWanted);
                if (passing > 0)
                {
                    if (discarding)
                    {
                        in.position(in.position() + passing);
                        continue;
                    }
                    restoreLimit = in.limit();
                    in.limit(in.position() + passing);
                    sink.write(this, in);
                    return Action.SCHEDULED;
                }
                switch (tracker.take(in))
                {
                    case MORE:
                        break;
                    case HEADER:
                        if (discarding)
                        {
                            tracker.drop();
                            break;
                        }
                        sink.write(this, tracker.held());
                        return Action.SCHEDULED;
                    case CONTROL:
                        if (tracker.controlOpcode() == FrameTracker.CLOSE)
                            return sourceClosing();
                        if (discarding || tracker.isKeepalivePong())
                        {
                            tracker.drop();
                            break;
                        }
                        sink.write(this, tracker.held());
                        return Action.SCHEDULED;
                    case TOO_BIG:
                        stopAtBoundary();
                        closeBoth(1009, 1009, "message too big");
                        break;
                    default:
                        tracker.drop();
                        blind = true;
                        stopAtBoundary();
                        closeBoth(1002, 1002, "protocol error");
                        break;
                }
            }
        }

        /**
         * Reads into an empty buffer.
         *
         * @return bytes read; 0 when nothing was there, a read callback now being registered; -1 at the end or on failure
         */
        private int fill()
        {
            Throwable failure = readFailure;
            if (failure != null)
            {
                LOG.debug("{} leg of sandbox {} failed", from.label(), sandboxId, failure);
                return -1;
            }
            if (drained)
            {
                // The last read took less than it could: the source had no more then, and asking
                // again at once would cost a system call that most often finds nothing (one
                // message, one answer). The source calls back when there is more.
                drained = false;
                return awaitSource();
            }
            if (buffer == null)
                buffer = buffers.acquire(BUFFER_SIZE, direct);
            ByteBuffer in = buffer.getByteBuffer();
            BufferUtil.clear(in);
            int filled;
            try
            {
                filled = source.fill(in);
            }
            catch (IOException x)
            {
                LOG.debug("{} leg of sandbox {} failed", from.label(), sandboxId, x);
                filled = -1;
            }
            if (filled > 0)
            {
                drained = in.limit() < in.capacity();
                return filled;
            }
            if (filled == 0)
                return awaitSource();
            release();
            return filled;
        }

        /** Idle until the source has more: no buffer is held while waiting. */
        private int awaitSource()
        {
            release();
            reading = true;
            source.fillInterested(readable);
            return 0;
        }

        /** The source's close frame: passed on (unless the gateway closed the sink already), and the pump ends. */
        private Action sourceClosing()
        {
            if (discarding)
            {
                tracker.drop();
                return Action.SUCCEEDED;
            }
            closeFramePassing(from, tracker.closeCode());
            ending = true;
            sink.write(this, tracker.held());
            return Action.SCHEDULED;
        }

        /** The source ended or failed without a close frame. */
        private Action sourceEnded()
        {
            boolean atBoundary = sinkAtBoundary();
            lost(from);
            ByteBuffer close = takeClose();
            if (close == null)
                return Action.SUCCEEDED;
            if (!atBoundary)
            {
                // The sink is in the middle of a frame: no close frame can follow it.
                sink.close();
                return Action.SUCCEEDED;
            }
            ending = true;
            sink.write(this, close);
            return Action.SCHEDULED;
        }

        private void count()
        {
            long n = tracker.drainMessages();
            if (n > 0)
                messages.increment(n);
            n = tracker.drainPayloadBytes();
            if (n > 0)
                bytes.increment(n);
        }

        private void release()
        {
            if (buffer != null)
            {
                buffer.release();
                buffer = null;
            }
        }

        @Override
        protected void onCompleteSuccess()
        {
            release();
            pumpDone();
        }

        @Override
        protected void onCompleteFailure(Throwable cause)
        {
            // A write failed: the sink is gone.
            LOG.debug("Writing to the {} of sandbox {} failed", from == Side.BROWSER ? "sandbox" : "browser", sandboxId, cause);
            release();
            lost(from == Side.BROWSER ? Side.SANDBOX : Side.BROWSER);
            pumpDone();
        }
    }
}
