package io.sandgate.web;

import java.io.IOException;

import jakarta.servlet.ServletOutputStream;
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
                ServletOutputStream output = response.getOutputStream();
                writer = new FlushingWriter(output, proxyResponse::abort);
                WRITER.set(request, writer);
                // Data first: setWriteListener() may call onWritePossible() at once on another thread.
                writer.data(buffer, offset, length, callback);
                output.setWriteListener(writer);
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
}
