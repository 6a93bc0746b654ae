package io.sandgate.egress;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.eclipse.jetty.client.AsyncRequestContent;
import org.eclipse.jetty.util.Callback;

/**
 * An agent's request body as the proxy reads it, held (up to {@link #LIMIT}) so that a retry on
 * another node can send it again. The servlet's reader writes into this object; each attempt's
 * request reads {@link #content()}, which {@link #fresh()} replaces with a copy of everything read
 * so far for the next attempt.
 *
 * <p>A body larger than the limit streams on as before and is no longer held: such an exchange is
 * not retried. While the body is held, a write into an attempt's content that has failed (its
 * request failed) still counts as done: the bytes are held, and the agent's upload goes on for the
 * next attempt instead of failing with the first one.
 *
 * <p>It is an {@link AsyncRequestContent} only because Jetty's proxy reader writes into one; it is
 * never read itself.
 */
final class ReplayableBody extends AsyncRequestContent
{
    /** The most a body may hold for a retry; bounded, since every exchange in flight may hold one. */
    static final int LIMIT = 1024 * 1024;

    private final List<byte[]> held = new ArrayList<>();
    private long size;
    /** Whether the body can no longer be sent again: too large, or the agent's upload failed. */
    private boolean lost;
    private boolean closed;
    private AsyncRequestContent current = new AsyncRequestContent();

    /** The content the current attempt's request reads. */
    synchronized AsyncRequestContent content()
    {
        return current;
    }

    /** Whether the whole body read so far is held, so that it can be sent again. */
    synchronized boolean replayable()
    {
        return !lost;
    }

    /**
     * The content for the next attempt: everything read so far, then whatever the agent still
     * sends. The previous attempt's content is failed, so that no write waits on it.
     */
    AsyncRequestContent fresh()
    {
        AsyncRequestContent previous;
        AsyncRequestContent next = new AsyncRequestContent();
        synchronized (this)
        {
            previous = current;
            current = next;
            if (lost)
                next.fail(new IOException("request body too large to send again"));
            else
            {
                for (byte[] bytes : held)
                    next.write(ByteBuffer.wrap(bytes), Callback.NOOP);
                if (closed)
                    next.close();
            }
        }
        previous.fail(new IOException("request body moved to another attempt"));
        return next;
    }

    @Override
    public void write(ByteBuffer buffer, Callback callback)
    {
        write(false, buffer, callback);
    }

    @Override
    public void write(boolean last, ByteBuffer buffer, Callback callback)
    {
        AsyncRequestContent target;
        boolean holding;
        synchronized (this)
        {
            hold(buffer);
            closed |= last;
            target = current;
            holding = !lost;
        }
        target.write(last, buffer, holding ? Callback.from(callback::succeeded, x -> callback.succeeded()) : callback);
    }

    private void hold(ByteBuffer buffer)
    {
        if (lost)
            return;
        if (size + buffer.remaining() > LIMIT)
        {
            lost = true;
            held.clear();
            return;
        }
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        held.add(bytes);
        size += bytes.length;
    }

    @Override
    public void close()
    {
        AsyncRequestContent target;
        synchronized (this)
        {
            closed = true;
            target = current;
        }
        target.close();
    }

    @Override
    public void fail(Throwable failure, boolean last)
    {
        AsyncRequestContent target;
        synchronized (this)
        {
            lost = true;
            held.clear();
            target = current;
        }
        target.fail(failure, last);
    }

    @Override
    public void fail(Throwable failure)
    {
        fail(failure, true);
    }
}
