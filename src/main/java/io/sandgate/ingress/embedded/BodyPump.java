package io.sandgate.ingress.embedded;

import java.nio.ByteBuffer;

import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.IteratingCallback;

/**
 * Streams the browser's body of one exchange to the sandbox on a {@link SandboxLink}, as it came or
 * chunked, one chunk in flight, each released once written: the browser sends no faster than the
 * sandbox reads.
 */
final class BodyPump extends IteratingCallback
{
    private static final ByteBuffer LAST_CHUNK = BufferUtil.toBuffer("0\r\n\r\n");
    private static final ByteBuffer CRLF = BufferUtil.toBuffer("\r\n");

    private final SandboxLink link;
    private final EndPoint sandbox;
    private final SandboxLink.Exchange owner;
    private final boolean chunked;
    private Content.Chunk chunk;
    /** Set, under the pump's monitor, when the exchange ends; the pump reads only under it, so a read in progress finishes first. */
    private boolean stopped;

    BodyPump(SandboxLink link, EndPoint sandbox, SandboxLink.Exchange owner, boolean chunked)
    {
        this.link = link;
        this.sandbox = sandbox;
        this.owner = owner;
        this.chunked = chunked;
    }

    SandboxLink.Exchange owner()
    {
        return owner;
    }

    @Override
    protected Action process()
    {
        if (chunk != null)
        {
            boolean last = chunk.isLast();
            chunk.release();
            chunk = null;
            if (last)
            {
                link.requestSent(owner);
                return Action.SUCCEEDED;
            }
        }
        Content.Chunk next;
        synchronized (this)
        {
            if (stopped)
                return Action.SUCCEEDED;
            next = owner.request().read();
            if (next == null)
            {
                owner.request().demand(this::iterate);
                return Action.IDLE;
            }
        }
        if (Content.Chunk.isFailure(next))
        {
            link.fail(owner, next.getFailure());
            return Action.SUCCEEDED;
        }
        chunk = next;
        link.bodyStarted(owner);
        if (next.isLast())
            link.watchBrowser(owner);
        ByteBuffer data = next.getByteBuffer();
        if (!chunked)
        {
            sandbox.write(this, data);
        }
        else if (!data.hasRemaining())
        {
            sandbox.write(this, next.isLast() ? LAST_CHUNK.slice() : BufferUtil.EMPTY_BUFFER);
        }
        else
        {
            ByteBuffer size = BufferUtil.toBuffer(Integer.toHexString(data.remaining()) + "\r\n");
            if (next.isLast())
                sandbox.write(this, size, data, CRLF.slice(), LAST_CHUNK.slice());
            else
                sandbox.write(this, size, data, CRLF.slice());
        }
        return Action.SCHEDULED;
    }

    /**
     * Called once the exchange is no longer carried, before the server hears that it ended: the
     * server then reads what is left of the request's body itself, and a pump reading at the same
     * moment, on another thread, would race it for the connection's buffer (one of them taken and
     * never given back, or the next request's bytes read as this one's).
     */
    synchronized void stop()
    {
        stopped = true;
    }

    @Override
    protected void onCompleteFailure(Throwable cause)
    {
        if (chunk != null)
            chunk.release();
        link.fail(owner, cause);
    }
}
