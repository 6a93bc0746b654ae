package io.sandgate.web;

import java.io.IOException;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.ee10.proxy.AsyncProxyServlet;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Jetty's asynchronous proxy servlet, changed in the one way both of Sandgate's proxying faces
 * need: every chunk from upstream is flushed to the client as it arrives.
 */
public abstract class StreamingProxyServlet extends AsyncProxyServlet
{
    private static final RequestAttribute<FlushingWriter> WRITER = RequestAttribute.of("proxy.writer", FlushingWriter.class);

    /**
     * Jetty's proxy logs every request's headers at DEBUG under the servlet's own logger, which
     * would put Authorization values and injected keys in the log the moment someone turns on DEBUG
     * for {@code io.sandgate}. Its logger lives under Jetty's name instead, with Jetty's level.
     */
    @Override
    protected Logger createLogger()
    {
        return LoggerFactory.getLogger("org.eclipse.jetty.ee10.proxy." + getClass().getSimpleName());
    }

    /**
     * Writes each chunk and flushes it. Servlet containers aggregate small writes (Jetty up to a
     * quarter of the buffer), which would hold back SSE events and chunked streams (a sandbox's, an LLM's tokens)
     * until the buffer fills; a gateway must pass them on as they arrive.
     */
    @Override
    protected void onResponseContent(HttpServletRequest request, HttpServletResponse response, Response proxyResponse,
                                     byte[] buffer, int offset, int length, Callback callback)
    {
        try
        {
            FlushingWriter writer = WRITER.get(request);
            if (writer == null)
            {
                writer = new FlushingWriter(request, proxyResponse);
                WRITER.set(request, writer);
                // Data first: setWriteListener() may call onWritePossible() at once on another thread.
                writer.data(buffer, offset, length, callback);
                response.getOutputStream().setWriteListener(writer);
            }
            else
            {
                writer.data(buffer, offset, length, callback);
                writer.onWritePossible();
            }
        }
        catch (Throwable x)
        {
            callback.failed(x);
            proxyResponse.abort(x);
        }
    }

    /**
     * Non-blocking write-then-flush of one chunk at a time; the proxy demands the next chunk from the
     * upstream only when this one has been flushed, which is the back-pressure.
     */
    private static final class FlushingWriter implements WriteListener
    {
        private enum State
        {
            IDLE, WRITE, FLUSH, DONE
        }

        private final HttpServletRequest request;
        private final Response proxyResponse;
        private State state = State.IDLE;
        private byte[] buffer;
        private int offset;
        private int length;
        private Callback callback;

        FlushingWriter(HttpServletRequest request, Response proxyResponse)
        {
            this.request = request;
            this.proxyResponse = proxyResponse;
        }

        void data(byte[] bytes, int offset, int length, Callback callback)
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
            ServletOutputStream output = request.getAsyncContext().getResponse().getOutputStream();
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
            proxyResponse.abort(failure);
        }
    }
}
