package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * A socket endpoint that stays in its selector's epoll set between a read and the next wish to read.
 *
 * <p>Jetty takes the read interest off a key when the key is selected for reading, and the JDK's
 * epoll selector takes a channel whose interest is empty out of the epoll set ({@code EPOLL_CTL_DEL})
 * and puts it back when an interest returns ({@code EPOLL_CTL_ADD}, which allocates and polls the
 * socket). On a keep-alive connection that is two system calls per request, the selector having
 * looped while the answer was awaited (docs/performance-notes.md, "Keep-alive connections stay in
 * the epoll set"). nginx registers a connection once.
 *
 * <p>Here the key keeps its read interest when Jetty drops it. That costs nothing while the peer
 * sends nothing, which is the rule for HTTP/1 between a request and its answer; when Jetty asks to
 * read again, the key already has the interest and the JDK changes nothing. Should the peer send
 * while no one reads (a pipelined request, a close), the level-triggered selector reports it once:
 * the kept interest is then dropped until Jetty next asks to read (or a watch is set, below), so
 * that the selector does not report the same bytes again and again.
 *
 * <p>Jetty changes a key only through the endpoint's {@code SelectionKey}, on the selector's thread;
 * the endpoint is given a view of the key that adds the read interest to what Jetty sets.
 *
 * <p>That report also tells when the peer has gone while it waits for an answer: readable with
 * nothing to read is its side closed (or reset). Jetty does not read then, so it would only learn of
 * it when it writes the answer; a proxy waiting on a slow upstream would hold the exchange, and the
 * client's place in its limits, until the upstream answers or times out. An exchange that waits
 * registers what to do then ({@link #onPeerGone}); pipelined bytes are left for Jetty, unread.
 * Readable with nothing to read is believed only when the selector says it twice in a row: the
 * selector reports what the socket held when it selected, and a thread may have read those bytes
 * since, directly, as Jetty reads a request's body. A socket whose peer has gone stays readable, so
 * the second report follows at once; one whose bytes were read gives none.</p>
 */
public class KeptReadEndPoint extends ClientEndPoint
{
    private static final VarHandle PEER_GONE;

    static
    {
        try
        {
            PEER_GONE = MethodHandles.lookup().findVarHandle(KeptReadEndPoint.class, "peerGone", Runnable.class);
        }
        catch (ReflectiveOperationException x)
        {
            throw new ExceptionInInitializerError(x);
        }
    }

    private final KeptReadKey key;
    private final ManagedSelector selector;
    /** What to run if the peer is found gone while no one reads; null for nothing. */
    @SuppressWarnings("unused")
    private volatile Runnable peerGone;
    /** The action whose peer a first report found gone; the selector's thread alone reads and writes it. */
    private Runnable suspected;

    public KeptReadEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler)
    {
        this(channel, selector, new KeptReadKey(key), scheduler);
    }

    private KeptReadEndPoint(SocketChannel channel, ManagedSelector selector, KeptReadKey key, Scheduler scheduler)
    {
        super(channel, selector, key, scheduler);
        this.key = key;
        this.selector = selector;
    }

    @Override
    protected void needsFillInterest()
    {
        key.keep = true;
        super.needsFillInterest();
    }

    /**
     * Runs {@code action}, on a thread of the pool, if the peer closes its side (or resets the
     * connection) before {@link #clearPeerGone} with the same action: for an exchange whose request
     * has all arrived and whose answer is awaited. One action at a time; the last one set counts.
     */
    public void onPeerGone(Runnable action)
    {
        peerGone = action;
        // A report of bytes no one was reading (a request body's, read directly since) may have
        // taken the kept interest off, and reading them directly did not put it back: without it
        // the peer's going would never be reported. Put back on the selector's thread, which alone
        // changes the key; not needed on the common path, where Jetty last asked to read. Both
        // fields are volatile, and the selector writes keep before it reads peerGone: either it sees
        // this action, or this thread sees keep cleared.
        if (!key.keep)
            selector.submit(ignored ->
            {
                if (peerGone == action)
                    key.listenAgain();
            });
    }

    /** Forgets {@code action}, if it is still the one set. */
    public void clearPeerGone(Runnable action)
    {
        PEER_GONE.compareAndSet(this, action, null);
    }

    @Override
    public Runnable onSelected()
    {
        boolean unasked = key.selected();
        Runnable task = super.onSelected();
        Runnable gone = peerGone;
        if (!unasked || gone == null || !peerClosed())
        {
            // Jetty reads, no one watches, or the peer sent bytes: a suspicion is moot, and must not keep an old exchange's action.
            suspected = null;
            return task;
        }
        if (suspected != gone)
        {
            // Asked again: the second report comes at once if the peer has gone.
            suspected = gone;
            key.listenAgain();
            return task;
        }
        suspected = null;
        if (!PEER_GONE.compareAndSet(this, gone, null))
            return task;
        return task == null ? gone : () ->
        {
            task.run();
            gone.run();
        };
    }

    /** Readable with nothing to read: the peer's side is closed, or the connection reset (or the bytes were read since the select). */
    boolean peerClosed()
    {
        try
        {
            // FIONREAD: bytes waiting are a pipelined request, left for Jetty to read.
            return getChannel().socket().getInputStream().available() == 0;
        }
        catch (IOException x)
        {
            return true;
        }
    }

    @Override
    public void replaceKey(SelectionKey newKey)
    {
        // Jetty moved the channel to a new JDK selector, registered with the old key's interest.
        key.key = newKey;
    }

    /** The endpoint's view of its key; every method runs on the selector's thread, but {@link #keep}. */
    private static final class KeptReadKey extends SelectionKey
    {
        private SelectionKey key;
        /** The interest Jetty set. */
        private int ops;
        /** Whether the read interest stays when Jetty drops it; set again whenever Jetty asks to read. */
        private volatile boolean keep = true;

        KeptReadKey(SelectionKey key)
        {
            this.key = key;
            this.ops = key.interestOps();
        }

        @Override
        public SelectionKey interestOps(int ops)
        {
            this.ops = ops;
            key.interestOps(keep ? ops | OP_READ : ops);
            return this;
        }

        /**
         * Readable while Jetty does not read: only the kept interest was listening.
         *
         * @return whether that is why the key was selected
         */
        boolean selected()
        {
            try
            {
                if ((ops & OP_READ) == 0 && (key.readyOps() & OP_READ) != 0)
                {
                    keep = false;
                    key.interestOps(ops);
                    return true;
                }
            }
            catch (CancelledKeyException x)
            {
                // Closed meanwhile: Jetty finds the key cancelled too and closes the endpoint.
            }
            return false;
        }

        /** Listens for reading again after {@link #selected}, though Jetty does not read. */
        void listenAgain()
        {
            keep = true;
            try
            {
                key.interestOps(ops | OP_READ);
            }
            catch (CancelledKeyException x)
            {
                // Closed meanwhile, as in selected().
            }
        }

        @Override
        public int interestOps()
        {
            return key.interestOps();
        }

        @Override
        public int readyOps()
        {
            return key.readyOps();
        }

        @Override
        public SelectableChannel channel()
        {
            return key.channel();
        }

        @Override
        public Selector selector()
        {
            return key.selector();
        }

        @Override
        public boolean isValid()
        {
            return key.isValid();
        }

        @Override
        public void cancel()
        {
            key.cancel();
        }
    }
}
