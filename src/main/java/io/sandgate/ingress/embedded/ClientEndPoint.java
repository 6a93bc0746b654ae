package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * A client's connection to a listener, which knows its {@link RequestPhase} for the connection
 * limit ({@link ServerConnectionLimit}) and the head deadline ({@link HeadTimeout}), both of which
 * read it from another thread. The endpoint sees a head's first bytes arrive; the server's outermost
 * handler ({@link Exchanges}) sees each request begin and end. Jetty's own parser state would say as
 * much, but its HTTP/1 connection is internal to Jetty.
 */
public class ClientEndPoint extends SocketChannelEndPoint
{
    /** {@link #headBegin} when no head has begun since the last exchange. */
    private static final long NONE = Long.MIN_VALUE;

    /** By {@link System#nanoTime()}, when the first byte came since the last exchange ended; {@link #NONE} if none has. */
    private volatile long headBegin = NONE;
    private volatile boolean serving;
    /** The connection Jetty opened on it, HTTP/1; another since is a WebSocket or a tunnel. */
    private volatile Connection http;
    /** Reads find nothing until the connection next asks the selector: set as it is resumed after an answer. */
    private volatile boolean readsLeftToSelector;

    public ClientEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler)
    {
        super(channel, selector, key, scheduler);
    }

    @Override
    public void setConnection(Connection connection)
    {
        if (http == null)
            http = connection;
        super.setConnection(connection);
    }

    /**
     * Called as {@code job} is resumed by the pool: if it is this endpoint's HTTP/1 connection
     * resuming after an answer, its reads find nothing until it asks the selector to say when the
     * next request comes. Right after an answer that request is seldom there yet, and Jetty's resume
     * reads the socket twice (a retry meant for TLS) before asking: two system calls per keep-alive
     * request that find nothing. A next request already in the socket is reported by the selector at
     * once; one already in the connection's buffer is parsed before any read.
     */
    public static void resuming(Runnable job)
    {
        if (job instanceof Connection connection && connection.getEndPoint() instanceof ClientEndPoint client && client.http == connection)
            client.readsLeftToSelector = true;
    }

    @Override
    protected void needsFillInterest()
    {
        readsLeftToSelector = false;
        super.needsFillInterest();
    }

    @Override
    public int fill(ByteBuffer buffer) throws IOException
    {
        if (readsLeftToSelector)
            return 0;
        int filled = readSocket(buffer);
        // Blank lines before a request line count as its head too: trickled, they would hold the
        // connection as long as they came within the idle timeout.
        if (filled > 0 && headBegin == NONE && !serving)
            headBegin = System.nanoTime();
        return filled;
    }

    /** A read of the socket itself. */
    int readSocket(ByteBuffer buffer) throws IOException
    {
        return super.fill(buffer);
    }

    /** Where the connection is now. */
    public RequestPhase phase()
    {
        if (serving || getConnection() != http)
            return RequestPhase.BUSY;
        return headBegin == NONE ? RequestPhase.AWAITING : RequestPhase.HEAD;
    }

    /** How long the head being read has taken by {@code now} ({@link System#nanoTime()}); -1 if none is. */
    public long headNanos(long now)
    {
        long begin = headBegin;
        if (begin == NONE || phase() != RequestPhase.HEAD)
            return -1;
        return Math.max(0, now - begin);
    }

    /**
     * How long the connection has waited on its client, in milliseconds: since a head's first byte
     * while it arrives, since the last byte while a request is awaited; -1 while it is busy.
     */
    public long waitedMillis(long now)
    {
        return switch (phase())
        {
            case AWAITING -> getIdleFor();
            case HEAD -> TimeUnit.NANOSECONDS.toMillis(Math.max(0, headNanos(now)));
            case BUSY -> -1;
        };
    }

    private void begin()
    {
        serving = true;
        headBegin = NONE;
    }

    private void end()
    {
        serving = false;
    }

    /**
     * The server's outermost handler: marks each request's connection busy from its head to its end.
     * Not dynamic: a dynamic container says its handlers may block, and the server would then hand
     * every request and every resumed connection to another thread.
     */
    public static final class Exchanges extends Handler.Wrapper
    {
        public Exchanges(Handler handler)
        {
            super(handler);
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            EndPoint endPoint = request.getConnectionMetaData().getConnection().getEndPoint();
            if (!(endPoint instanceof ClientEndPoint client))
                return super.handle(request, response, callback);
            client.begin();
            boolean handled;
            try
            {
                handled = super.handle(request, response, new Ended(callback, client));
            }
            catch (Throwable x)
            {
                // Jetty fails its own callback, not this one.
                client.end();
                throw x;
            }
            if (!handled)
                client.end();
            return handled;
        }
    }

    /** The exchange's callback, which frees the connection before Jetty reads its next request. */
    private static final class Ended extends Callback.Nested
    {
        private final ClientEndPoint client;

        Ended(Callback callback, ClientEndPoint client)
        {
            super(callback);
            this.client = client;
        }

        @Override
        public void succeeded()
        {
            client.end();
            super.succeeded();
        }

        @Override
        public void failed(Throwable x)
        {
            client.end();
            super.failed(x);
        }
    }
}
