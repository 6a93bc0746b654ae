package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.Executor;
import java.util.function.Function;

import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.IO;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The public listener, whose selectors also carry the core front-end's connections to sandboxes
 * ({@link SandboxLinks}), each opened on the selector of the browser connection that asked for it.
 * Both legs of an exchange are then served by one thread, as one nginx worker serves both: the
 * answer read on the sandbox's connection is written to the browser's, and the browser's
 * connection is set to read again, from the thread that selects for both, which needs no wake-up
 * of another selector. With a client connector of their own, the sandbox connections' selector set
 * each browser connection's read interest on the server's selector and woke it to do so, and the
 * gateway switched threads more often than nginx per request (docs/performance-notes.md, "Both
 * legs on one selector").
 *
 * <p>The links' endpoints are not the server's: they count neither as accepted connections, nor
 * against the connector's graceful stop, which only waits for browsers, nor against the
 * sandbox address's connections ({@link ClientConnectionLimit}), nor against all of the listeners'
 * ({@link ServerConnectionLimit}).</p>
 */
public final class IngressConnector extends ListenerConnector
{
    /** What the selector manager is asked to open: a connection to a sandbox, made by {@code factory}, reported to {@code promise}. */
    private record Dial(Function<EndPoint, Connection> factory, Promise<Connection> promise)
    {
    }

    /** Set by the super constructor, through {@link #newSelectorManager}: not final. */
    private Manager manager;

    public IngressConnector(Server server, int selectors, ClientConnectionLimit limit, ServerConnectionLimit serverLimit, ConnectionFactory factory)
    {
        super(server, selectors, limit, serverLimit, factory);
    }

    @Override
    protected SelectorManager newSelectorManager(Executor executor, Scheduler scheduler, int selectors)
    {
        manager = new Manager(executor, scheduler, selectors);
        return manager;
    }

    @Override
    protected SocketChannelEndPoint newEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key)
    {
        LaneEndPoint endPoint = new LaneEndPoint(channel, selector, key, getScheduler(), manager.lane(selector));
        endPoint.setIdleTimeout(getIdleTimeout());
        return endPoint;
    }

    /** How many selectors, and so lanes, there are. */
    int lanes()
    {
        return getSelectorManager().getSelectorCount();
    }

    /** The lane (selector) of the browser connection a request came on; -1 if it is not one of this connector's. */
    static int lane(Request request)
    {
        return request.getConnectionMetaData().getConnection().getEndPoint() instanceof LaneEndPoint endPoint ? endPoint.lane : -1;
    }

    /** The lane of a connection opened by {@link #dial}. */
    static int lane(EndPoint endPoint)
    {
        return endPoint instanceof LaneEndPoint lane ? lane.lane : -1;
    }

    /**
     * Opens a connection to {@code address} on the selector of lane {@code lane} (any, if -1); the
     * connection {@code factory} makes is opened, then handed to {@code promise}. A failure to
     * connect, or a connect that outlasts the connector's connect timeout, fails the promise.
     */
    void dial(int lane, InetSocketAddress address, Function<EndPoint, Connection> factory, Promise<Connection> promise)
    {
        manager.dial(lane, address, new Dial(factory, promise));
    }

    void setConnectTimeout(long millis)
    {
        getSelectorManager().setConnectTimeout(millis);
    }

    /** An endpoint that knows which of the connector's selectors it is on. */
    private static final class LaneEndPoint extends KeptReadEndPoint
    {
        private final int lane;
        /** Opened by {@link #dial}, not accepted: none of the server's. */
        private boolean dialed;

        LaneEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler, int lane)
        {
            super(channel, selector, key, scheduler);
            this.lane = lane;
        }
    }

    private final class Manager extends ServerConnectorManager
    {
        private final ManagedSelector[] selectors;
        /**
         * The selector a dial on this thread asked for. {@link SelectorManager#connect} takes its
         * selector from {@link #chooseSelector()}, on the calling thread, and Jetty offers no other
         * way to register a connecting channel with a chosen selector.
         */
        private final ThreadLocal<ManagedSelector> dialing = new ThreadLocal<>();

        Manager(Executor executor, Scheduler scheduler, int selectors)
        {
            super(executor, scheduler, selectors);
            this.selectors = new ManagedSelector[selectors];
        }

        @Override
        protected ManagedSelector newSelector(int id)
        {
            ManagedSelector selector = super.newSelector(id);
            selectors[id] = selector;
            return selector;
        }

        int lane(ManagedSelector selector)
        {
            for (int i = 0; i < selectors.length; i++)
            {
                if (selectors[i] == selector)
                    return i;
            }
            return -1;
        }

        @Override
        protected ManagedSelector chooseSelector()
        {
            ManagedSelector chosen = dialing.get();
            return chosen != null ? chosen : super.chooseSelector();
        }

        void dial(int lane, InetSocketAddress address, Dial dial)
        {
            SocketChannel channel = null;
            try
            {
                channel = SocketChannel.open();
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                channel.configureBlocking(false);
                boolean connected = channel.connect(address);
                if (lane >= 0 && lane < selectors.length && selectors[lane] != null)
                    dialing.set(selectors[lane]);
                try
                {
                    if (connected)
                        accept(channel, dial);
                    else
                        connect(channel, dial);
                }
                finally
                {
                    dialing.remove();
                }
            }
            catch (IOException | RuntimeException x)
            {
                // An address that did not resolve, a refused loopback connect, no file descriptor left.
                IO.close(channel);
                dial.promise().failed(x);
            }
        }

        @Override
        public Connection newConnection(SelectableChannel channel, EndPoint endPoint, Object attachment) throws IOException
        {
            if (attachment instanceof Dial dial)
            {
                ((LaneEndPoint)endPoint).dialed = true;
                return dial.factory().apply(endPoint);
            }
            return super.newConnection(channel, endPoint, attachment);
        }

        @Override
        public void connectionOpened(Connection connection, Object context)
        {
            super.connectionOpened(connection, context);
            if (context instanceof Dial dial)
                dial.promise().succeeded(connection);
        }

        @Override
        protected void connectionFailed(SelectableChannel channel, Throwable failure, Object attachment)
        {
            if (!failed(attachment, failure))
                super.connectionFailed(channel, failure, attachment);
        }

        /**
         * A dial whose connect completed within the call goes the way of an accepted channel, and
         * Jetty reports its failures (registering it, making its connection) here, not to
         * {@link #connectionFailed}: unreported, its exchange would wait for ever and hold a place
         * in the sandbox's pool.
         */
        @Override
        protected void onAcceptFailed(SelectableChannel channel, Throwable failure, Object attachment)
        {
            if (!failed(attachment, failure))
                super.onAcceptFailed(channel, failure, attachment);
        }

        /** @return whether the attachment was a dial, now failed */
        private static boolean failed(Object attachment, Throwable failure)
        {
            if (!(attachment instanceof Dial dial))
                return false;
            dial.promise().failed(failure);
            return true;
        }

        @Override
        protected void endPointOpened(EndPoint endPoint)
        {
            if (!isDialed(endPoint))
                super.endPointOpened(endPoint);
        }

        @Override
        protected void endPointClosed(EndPoint endPoint)
        {
            if (!isDialed(endPoint))
                super.endPointClosed(endPoint);
        }

        private static boolean isDialed(EndPoint endPoint)
        {
            return endPoint instanceof LaneEndPoint lane && lane.dialed;
        }
    }
}
