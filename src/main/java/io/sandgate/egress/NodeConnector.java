package io.sandgate.egress;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongConsumer;

import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The {@link ClientConnector} of the clients that talk to egress nodes: its connections take their
 * writes one after another, where Jetty's endpoint refuses a write that arrives before the previous
 * one has finished.
 *
 * <p>Why: Jetty's {@code HttpProxy} opens the tunnel of a {@code CONNECT} as soon as the node's
 * {@code 200} headers arrive, and at once sends the request that waited for the tunnel, on the
 * thread that read the {@code 200}. The thread that wrote the {@code CONNECT} may not yet have
 * returned from that write: its bytes are on the wire (the node has answered them) but the
 * endpoint still counts the write as in progress, so the tunnelled request failed with a
 * {@link java.nio.channels.WritePendingException}. On loopback, with the node in the same process,
 * plain http through a node failed that way about one request in twenty to one in ten. (Over TLS
 * the first write on the tunnel goes through the TLS layer, which flushes the socket directly, so
 * only plain http showed it.) Here such a write waits until the one before it has completed, then
 * goes out in order.
 */
public class NodeConnector extends ClientConnector
{
    private final Runnable answered;
    private final LongConsumer connected;
    /** When each connection still connecting began to. */
    private final Map<SelectableChannel, Long> connecting = new ConcurrentHashMap<>();

    public NodeConnector()
    {
        this(() -> { }, nanos -> { });
    }

    /**
     * @param answered told whenever bytes arrive from the node: whatever they say, the node is alive
     *                 and answering, which is how {@link FailurePolicy} tells a node's failure from
     *                 its target's
     * @param connected told how long each connection to the node took to connect, in nanoseconds
     */
    public NodeConnector(Runnable answered, LongConsumer connected)
    {
        this.answered = answered;
        this.connected = connected;
    }

    @Override
    protected void configure(SelectableChannel channel) throws IOException
    {
        super.configure(channel);
        // Called just before the channel connects.
        connecting.put(channel, System.nanoTime());
    }

    @Override
    protected void connectFailed(SelectableChannel channel, SocketAddress address, Throwable failure, Map<String, Object> context)
    {
        connecting.remove(channel);
        super.connectFailed(channel, address, failure, context);
    }

    @Override
    protected EndPoint newEndPoint(SelectableChannel channel, ManagedSelector selector, SelectionKey key)
    {
        Long began = connecting.remove(channel);
        if (began != null)
            connected.accept(System.nanoTime() - began);
        if (channel instanceof SocketChannel socket)
            return newEndPoint(socket, selector, key, getScheduler());
        return super.newEndPoint(channel, selector, key);
    }

    /** The endpoint of one connection to a node; tests override it to slow a write down. */
    protected SerialWriteEndPoint newEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler)
    {
        return new SerialWriteEndPoint(channel, selector, key, scheduler, answered);
    }

    /**
     * A socket endpoint whose writes wait for each other instead of failing with
     * WritePendingException, and which reports each read that brought bytes from the node.
     */
    public static class SerialWriteEndPoint extends SocketChannelEndPoint
    {
        private record Write(Callback callback, ByteBuffer[] buffers)
        {
        }

        private final Queue<Write> waiting = new ArrayDeque<>();
        private final Runnable answered;
        private boolean writing;

        public SerialWriteEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler, Runnable answered)
        {
            super(channel, selector, key, scheduler);
            this.answered = answered;
        }

        @Override
        public int fill(ByteBuffer buffer) throws IOException
        {
            int filled = super.fill(buffer);
            if (filled > 0)
                answered.run();
            return filled;
        }

        @Override
        public void write(Callback callback, ByteBuffer... buffers)
        {
            synchronized (waiting)
            {
                if (writing)
                {
                    waiting.add(new Write(callback, buffers));
                    return;
                }
                writing = true;
            }
            start(new Write(callback, buffers));
        }

        private void start(Write write)
        {
            // Nested keeps the caller's invocation type, which decides on which thread Jetty may
            // complete a write that had to wait for the socket.
            super.write(new Callback.Nested(write.callback())
            {
                @Override
                public void succeeded()
                {
                    next();
                    super.succeeded();
                }

                @Override
                public void failed(Throwable x)
                {
                    next();
                    super.failed(x);
                }
            }, write.buffers());
        }

        /** The previous write has completed: the endpoint is free for the next one, if any waits. */
        private void next()
        {
            Write next;
            synchronized (waiting)
            {
                next = waiting.poll();
                if (next == null)
                    writing = false;
            }
            if (next != null)
                start(next);
        }
    }
}
