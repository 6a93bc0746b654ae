package io.sandgate.web;

import java.io.IOException;
import java.util.function.Consumer;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import org.eclipse.jetty.util.Callback;

/**
 * Non-blocking write-then-flush of one chunk at a time to a servlet response: the caller hands the
 * next chunk over only when the callback of this one has succeeded, which is the back-pressure
 * towards whoever produces the chunks. Flushing each chunk matters: servlet containers aggregate
 * small writes, which would hold back SSE events and token streams until a buffer fills.
 *
 * <p>Register with {@link ServletOutputStream#setWriteListener} after the first {@link #data};
 * then call {@link #onWritePossible()} after each later one.</p>
 */
public final class FlushingWriter implements WriteListener
{
    private enum State
    {
        IDLE, WRITE, FLUSH, DONE
    }

    private final ServletOutputStream output;
    private final Consumer<Throwable> onError;
    private State state = State.IDLE;
    private byte[] buffer;
    private int offset;
    private int length;
    private Callback callback;

    /**
     * @param onError told when the client connection fails, to abort whatever feeds the writer
     */
    public FlushingWriter(ServletOutputStream output, Consumer<Throwable> onError)
    {
        this.output = output;
        this.onError = onError;
    }

    /** The next chunk; only one may be pending. */
    public void data(byte[] bytes, int offset, int length, Callback callback)
    {
        if (state != State.IDLE)
            throw new IllegalStateException("write pending: " + state);
        this.buffer = bytes;
        this.offset = offset;
        this.length = length;
        this.callback = callback;
        this.state = State.WRITE;
    }

    @Override
    public void onWritePossible() throws IOException
    {
        while (true)
        {
            switch (state)
            {
                case WRITE ->
                {
                    state = State.FLUSH;
                    output.write(buffer, offset, length);
                    if (!output.isReady())
                        return;
                }
                case FLUSH ->
                {
                    state = State.DONE;
                    output.flush();
                    if (!output.isReady())
                        return;
                }
                case DONE ->
                {
                    Callback c = callback;
                    buffer = null;
                    callback = null;
                    // Reset before succeeding: the callback may deliver the next chunk at once.
                    state = State.IDLE;
                    c.succeeded();
                    return;
                }
                case IDLE ->
                {
                    return;
                }
            }
        }
    }

    @Override
    public void onError(Throwable failure)
    {
        Callback c = callback;
        callback = null;
        if (c != null)
            c.failed(failure);
        onError.accept(failure);
    }
}
