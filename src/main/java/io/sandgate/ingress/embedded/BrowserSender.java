package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritePendingException;

import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpGenerator;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IteratingCallback;
import org.eclipse.jetty.util.thread.Invocable;

/**
 * Generates and writes {@link BrowserConnection}'s answers, as Jetty's connection does, with its
 * generator: one write at a time, the head in a buffer of the configured response header size,
 * and one of the largest size allowed ({@link HttpConfiguration#getMaxResponseHeaderSize}) when
 * the head does not fit. A sandbox's head may take nearly all of the first with the gateway's own
 * fields beside it; written from the first buffer alone, the browser got the end of the connection
 * where Jetty's connection answers.
 *
 * <p>A head too large even for the second is refused as Jetty refuses it, with nothing written and
 * the generator as it was before: the write fails, but this callback completes, so that the
 * connection can send an error page in its place at once.</p>
 */
final class BrowserSender extends IteratingCallback
{
    private final HttpGenerator generator;
    private final ByteBufferPool pool;
    private final HttpConfiguration config;
    private final EndPoint endPoint;
    private MetaData.Response info;
    private boolean head;
    private ByteBuffer content;
    private boolean last;
    private Callback callback;
    private RetainableByteBuffer header;
    private RetainableByteBuffer chunk;
    private boolean shutdownOut;
    /** Why the answer's head was refused, to fail the callback with; null while it was not. */
    private Throwable refused;

    BrowserSender(HttpGenerator generator, ByteBufferPool pool, HttpConfiguration config, EndPoint endPoint)
    {
        this.generator = generator;
        this.pool = pool;
        this.config = config;
        this.endPoint = endPoint;
    }

    void send(MetaData.Response info, boolean head, ByteBuffer content, boolean last, Callback callback)
    {
        if (!reset())
        {
            callback.failed(new WritePendingException());
            return;
        }
        this.info = info;
        this.head = head;
        this.content = content;
        this.last = last;
        this.callback = callback;
        iterate();
    }

    boolean isPending()
    {
        return callback != null;
    }

    @Override
    protected Action process() throws Exception
    {
        if (callback == null)
            throw new IllegalStateException();
        while (true)
        {
            ByteBuffer headerBytes = header == null ? null : header.getByteBuffer();
            ByteBuffer chunkBytes = chunk == null ? null : chunk.getByteBuffer();
            HttpGenerator.Result result = generator.generateResponse(info, head, headerBytes, chunkBytes, content, last);
            switch (result)
            {
                case NEED_INFO -> throw new IOException("an answer without its head");
                case NEED_HEADER ->
                {
                    generator.setMaxHeaderBytes(maxHeaderSize());
                    header = pool.acquire(config.getResponseHeaderSize(), config.isUseOutputDirectByteBuffers());
                }
                case HEADER_OVERFLOW ->
                {
                    if (!growHeader())
                    {
                        // Completed rather than failed: the callback may then send an error page at once.
                        refused = new HttpException.RuntimeException(HttpStatus.INTERNAL_SERVER_ERROR_500, "Response Header Fields Too Large");
                        return Action.SUCCEEDED;
                    }
                }
                case NEED_CHUNK -> chunk = pool.acquire(HttpGenerator.CHUNK_SIZE, config.isUseOutputDirectByteBuffers());
                case NEED_CHUNK_TRAILER ->
                {
                    releaseChunk();
                    chunk = pool.acquire(config.getResponseHeaderSize(), config.isUseOutputDirectByteBuffers());
                }
                case FLUSH ->
                {
                    if (head || generator.isNoContent())
                    {
                        if (chunk != null)
                            chunk.clear();
                        BufferUtil.clear(content);
                    }
                    ByteBuffer[] out = gather(headerBytes, chunk == null ? null : chunk.getByteBuffer(), content);
                    if (out.length == 0)
                        succeeded();
                    else
                        endPoint.write(this, out);
                    return Action.SCHEDULED;
                }
                case SHUTDOWN_OUT -> shutdownOut = true;
                case DONE ->
                {
                    return Action.SUCCEEDED;
                }
                case CONTINUE ->
                {
                }
                default -> throw new IllegalStateException("generateResponse=" + result);
            }
        }
    }

    /** The most a head may take, as Jetty's connection bounds it; the first buffer's size when no larger one is allowed. */
    private int maxHeaderSize()
    {
        int max = config.getMaxResponseHeaderSize();
        return max < 0 ? config.getResponseHeaderSize() : max;
    }

    /**
     * After a head that did not fit: the generator has started over, and gets the largest buffer
     * allowed.
     *
     * @return false if it had that already: the answer is then refused as Jetty's connection
     *         refuses it (a 500, which the connection may still send, nothing having been written)
     */
    private boolean growHeader()
    {
        int max = maxHeaderSize();
        if (header.capacity() >= max)
            return false;
        header.release();
        header = pool.acquire(max, config.isUseOutputDirectByteBuffers());
        return true;
    }

    private static ByteBuffer[] gather(ByteBuffer header, ByteBuffer chunk, ByteBuffer content)
    {
        boolean h = BufferUtil.hasContent(header);
        boolean c = BufferUtil.hasContent(chunk);
        boolean b = BufferUtil.hasContent(content);
        int n = (h ? 1 : 0) + (c ? 1 : 0) + (b ? 1 : 0);
        ByteBuffer[] out = new ByteBuffer[n];
        int i = 0;
        if (h)
            out[i++] = header;
        if (c)
            out[i++] = chunk;
        if (b)
            out[i] = content;
        return out;
    }

    private Callback release()
    {
        Callback done = callback;
        callback = null;
        info = null;
        content = null;
        if (header != null)
            header.release();
        header = null;
        releaseChunk();
        return done;
    }

    private void releaseChunk()
    {
        if (chunk != null)
            chunk.release();
        chunk = null;
    }

    @Override
    protected void onCompleteSuccess()
    {
        Throwable refusal = refused;
        refused = null;
        if (refusal != null)
        {
            release().failed(refusal);
            return;
        }
        if (shutdownOut)
            endPoint.shutdownOutput();
        release().succeeded();
    }

    @Override
    protected void onCompleteFailure(Throwable cause)
    {
        generator.setPersistent(false);
        Callback done = release();
        if (done != null)
            done.failed(cause);
    }

    @Override
    public Invocable.InvocationType getInvocationType()
    {
        return Invocable.InvocationType.NON_BLOCKING;
    }
}
