package io.sandgate.ingress.websocket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeoutException;

import io.micrometer.core.instrument.Counter;
import io.sandgate.ingress.ActivityRecorder;
import io.sandgate.ingress.websocket.Tunnel.Side;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IteratingCallback;
import org.eclipse.jetty.util.thread.Invocable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies one direction of a {@link Tunnel}, following its frames. Reads only once the sink has taken
 * the last bytes, and runs on whichever thread the last read or write completed on, never waiting (so
 * Jetty runs it on its selector threads, without a hand-off per read).
 *
 * <p>What the pump does with its source's frames, and what it owes its sink, is its {@link State}:
 * the tunnel asks for pings and closes and tells it that the sink is gone from other threads, while
 * the pump's own loop takes those frames and stops or ends. Every change goes through {@link #move},
 * under the pump's lock, and {@link State#on} lists the transitions. Whether the source has a read
 * on its way is apart ({@link Read}): it changes with every read, whatever the state.</p>
 */
final class Pump extends IteratingCallback
{
    private static final Logger LOG = LoggerFactory.getLogger(Pump.class);
    /** One read's worth: large enough for a desktop update in a few reads. */
    private static final int BUFFER_SIZE = 16 * 1024;
    private static final int MESSAGE_TOO_BIG = 1009;
    private static final int PROTOCOL_ERROR = 1002;

    /**
     * What the pump does with its source's frames and what it owes its sink. Once it drops the source's
     * frames it never passes them again, and once it ends nothing changes it.
     */
    enum State
    {
        /** The source's frames go on to the sink. */
        PASSING,
        /** Passing, and the gateway's ping goes at the sink's next frame boundary. */
        PING_WANTED,
        /** Passing up to the sink's next frame boundary, where the gateway's close goes. */
        CLOSE_WANTED,
        /**
         * The source's frames are dropped (it is still read, for its close frame), and the sink was left
         * between two frames: a close of the gateway's has gone, or may still follow.
         */
        STOPPED,
        /** Stopped, and the gateway's close goes next. */
        STOPPED_CLOSE_WANTED,
        /** The sink is gone: the source is read for its close frame and dropped, and nothing more is written. */
        SINK_GONE,
        /** The pump's last write is on its way, or it has ended. */
        ENDING;

        /** The legal transitions: the state an event leads to from this one, this one when the event changes nothing. */
        State on(Event event)
        {
            return switch (event)
            {
                case PING -> this == PASSING ? PING_WANTED : this;
                case CLOSE -> switch (this)
                {
                    case PASSING, PING_WANTED -> CLOSE_WANTED;
                    case STOPPED -> STOPPED_CLOSE_WANTED;
                    default -> this;
                };
                case OWN_FRAME_TAKEN -> switch (this)
                {
                    case PING_WANTED -> PASSING;
                    case CLOSE_WANTED, STOPPED_CLOSE_WANTED -> STOPPED;
                    default -> this;
                };
                case STOP -> switch (this)
                {
                    case PASSING, PING_WANTED -> STOPPED;
                    case CLOSE_WANTED -> STOPPED_CLOSE_WANTED;
                    default -> this;
                };
                case SINK_GONE -> this == ENDING ? ENDING : SINK_GONE;
                case END -> ENDING;
            };
        }

        boolean dropping()
        {
            return this == STOPPED || this == STOPPED_CLOSE_WANTED || this == SINK_GONE;
        }

        boolean closeWanted()
        {
            return this == CLOSE_WANTED || this == STOPPED_CLOSE_WANTED;
        }

        boolean ownFrameWanted()
        {
            return this == PING_WANTED || closeWanted();
        }
    }

    /** What changes a pump's {@link State}. */
    enum Event
    {
        /** The gateway wants a ping written between whole frames. */
        PING,
        /** The gateway wants a close frame written between whole frames, and nothing of the source's after it. */
        CLOSE,
        /** The pump takes the ping or close it was asked for, to write it. */
        OWN_FRAME_TAKEN,
        /** The source broke a rule at a frame boundary of the sink's: nothing more of it goes on, and a close of the gateway's may follow. */
        STOP,
        /** The sink is gone. */
        SINK_GONE,
        /** The source's close frame came, or the source ended: the pump writes its last, if anything. */
        END
    }

    /** Where the source's reads are, independent of the {@link State}. */
    private enum Read
    {
        /** No read callback is registered: the loop reads. */
        READY,
        /** A read callback is registered with the source: the loop waits for it. */
        AWAITED,
        /** The source failed: to the loop, the end of it. */
        FAILED
    }

    private final Tunnel tunnel;
    private final Side from;
    private final Leg source;
    private final Leg sink;
    private final ByteBufferPool buffers;
    private final boolean direct;
    private final Counter bytes;
    private final Counter messages;
    private final FrameTracker tracker;
    /** Noted at each write of data, never of the gateway's own frames or the pongs answering them. */
    private final ActivityRecorder.WebSocket traffic;
    /** Frames of the gateway's towards a sandbox are a client's, so masked (RFC 6455 section 5.3). */
    private final boolean maskOwnFrames;
    private final Callback readable;
    /** Read by the loop without the lock; changed only by {@link #move}. */
    private volatile State state = State.PASSING;
    /** The gateway's close frame while the state wants one. Guarded by this. */
    private ByteBuffer closeFrame;
    private volatile Read read = Read.READY;
    // The loop's own, touched only in process().
    private RetainableByteBuffer buffer;
    /** The buffer's real limit while a part of it is being written. */
    private int restoreLimit = -1;
    /** The last read left room in the buffer. */
    private boolean drained;

    /**
     * @param buffers where the read buffers come from
     * @param direct whether both legs take direct buffers best
     * @param traffic where the tunnel's activity is noted
     */
    Pump(Tunnel tunnel, Side from, Leg source, Leg sink, ByteBufferPool buffers, boolean direct, long maxMessageSize, Counter bytes, Counter messages,
         ActivityRecorder.WebSocket traffic)
    {
        this.tunnel = tunnel;
        this.from = from;
        this.source = source;
        this.sink = sink;
        this.buffers = buffers;
        this.direct = direct;
        this.bytes = bytes;
        this.messages = messages;
        this.traffic = traffic;
        this.tracker = new FrameTracker(maxMessageSize);
        this.maskOwnFrames = from == Side.BROWSER;
        this.readable = Callback.from(Invocable.InvocationType.NON_BLOCKING, this::onReadable, this::onUnreadable);
    }

    @Override
    public InvocationType getInvocationType()
    {
        return InvocationType.NON_BLOCKING;
    }

    /** The one place the state changes; the close frame comes with {@link Event#CLOSE}. */
    private synchronized State move(Event event, ByteBuffer close)
    {
        State was = state;
        State next = was.on(event);
        if (event == Event.CLOSE && next.closeWanted())
            closeFrame = close;
        state = next;
        return was;
    }

    private State move(Event event)
    {
        return move(event, null);
    }

    /** A ping of the gateway's at the next frame boundary, unless a close is on its way. */
    void wantPing()
    {
        State was = move(Event.PING);
        if (was == State.PASSING || was == State.PING_WANTED)
            iterate();
    }

    /** A close frame of the gateway's at the next frame boundary, in place of a ping; nothing once the sink is gone. */
    void wantClose(ByteBuffer frame)
    {
        if (move(Event.CLOSE, frame) != State.SINK_GONE)
            iterate();
    }

    /** The sink is gone: what the source still sends is read (for its close frame) and dropped. */
    void sinkGone()
    {
        move(Event.SINK_GONE);
    }

    private boolean sinkAtBoundary(State now)
    {
        return switch (now)
        {
            case STOPPED, STOPPED_CLOSE_WANTED -> true;
            case SINK_GONE -> false;
            default -> tracker.atBoundary();
        };
    }

    /** The gateway's next frame for the sink, if one waits: a close before a ping, and after a close nothing. */
    private synchronized ByteBuffer ownFrame()
    {
        State was = move(Event.OWN_FRAME_TAKEN);
        if (was.closeWanted())
            return closeFrame;
        return was == State.PING_WANTED ? FrameTracker.keepalivePing(maskOwnFrames) : null;
    }

    private void onReadable()
    {
        read = Read.READY;
        iterate();
    }

    private void onUnreadable(Throwable cause)
    {
        // An idle timeout leaves the connection open: the gateway closes both sides properly.
        if (cause instanceof TimeoutException)
        {
            read = Read.READY;
            tunnel.closeBoth(Tunnel.GOING_AWAY, Tunnel.GOING_AWAY, "idle timeout");
        }
        else
        {
            LOG.debug("{} leg of sandbox {} failed", from.label(), tunnel.sandboxId(), cause);
            read = Read.FAILED;
        }
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
        if (state == State.ENDING)
            return Action.SUCCEEDED;
        while (true)
        {
            State now = state;
            if (now.ownFrameWanted() && sinkAtBoundary(now))
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
                if (read == Read.AWAITED)
                    return Action.IDLE;
                int filled = fill();
                if (filled == 0)
                    return Action.IDLE;
                if (filled < 0)
                    return sourceEnded();
                in = buffer.getByteBuffer();
            }
            int passing = tracker.pass(in, state.ownFrameWanted());
            if (passing > 0)
            {
                if (state.dropping())
                {
                    in.position(in.position() + passing);
                    continue;
                }
                restoreLimit = in.limit();
                in.limit(in.position() + passing);
                traffic.carried();
                sink.write(this, in);
                return Action.SCHEDULED;
            }
            switch (tracker.take(in))
            {
                case MORE:
                    break;
                case HEADER:
                    if (state.dropping())
                    {
                        tracker.drop();
                        break;
                    }
                    traffic.carried();
                    sink.write(this, tracker.held());
                    return Action.SCHEDULED;
                case CONTROL:
                    if (tracker.controlOpcode() == FrameTracker.CLOSE)
                        return sourceClosing();
                    if (state.dropping() || tracker.isKeepalivePong())
                    {
                        tracker.drop();
                        break;
                    }
                    sink.write(this, tracker.held());
                    return Action.SCHEDULED;
                case TOO_BIG:
                    move(Event.STOP);
                    tunnel.closeBoth(MESSAGE_TOO_BIG, MESSAGE_TOO_BIG, "message too big");
                    break;
                default:
                    // Broken: the tracker skips the rest of the source unread.
                    tracker.drop();
                    move(Event.STOP);
                    tunnel.closeBoth(PROTOCOL_ERROR, PROTOCOL_ERROR, "protocol error");
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
        if (read == Read.FAILED)
            return -1;
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
            LOG.debug("{} leg of sandbox {} failed", from.label(), tunnel.sandboxId(), x);
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
        read = Read.AWAITED;
        source.fillInterested(readable);
        return 0;
    }

    /** The source's close frame: passed on (unless the gateway closed the sink already), and the pump ends. */
    private Action sourceClosing()
    {
        if (move(Event.END).dropping())
        {
            tracker.drop();
            return Action.SUCCEEDED;
        }
        tunnel.closeFramePassing(from, tracker.closeCode());
        sink.write(this, tracker.held());
        return Action.SCHEDULED;
    }

    /** The source ended or failed without a close frame: the gateway's close still to go is written, if the sink can take it. */
    private Action sourceEnded()
    {
        boolean atBoundary = sinkAtBoundary(state);
        tunnel.lost(from);
        ByteBuffer close;
        synchronized (this)
        {
            close = move(Event.END).closeWanted() ? closeFrame : null;
        }
        if (close == null)
            return Action.SUCCEEDED;
        if (!atBoundary)
        {
            // The sink is in the middle of a frame: no close frame can follow it.
            sink.close();
            return Action.SUCCEEDED;
        }
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
        tunnel.pumpDone();
    }

    @Override
    protected void onCompleteFailure(Throwable cause)
    {
        // A write failed: the sink is gone.
        LOG.debug("Writing to the {} of sandbox {} failed", from == Side.BROWSER ? "sandbox" : "browser", tunnel.sandboxId(), cause);
        release();
        tunnel.lost(from == Side.BROWSER ? Side.SANDBOX : Side.BROWSER);
        tunnel.pumpDone();
    }
}
