package io.sandgate.mcp;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.locks.ReentrantLock;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;

/**
 * An SSE stream to an MCP client. Every write is flushed at once; {@code X-Accel-Buffering: no}
 * asks nginx-style proxies in front of the gateway not to buffer either.
 */
final class ClientStream extends Lifetime
{
    private final AsyncContext async;
    private final OutputStream output;
    /** Held for each write, which blocks as long as the client does not read. */
    private final ReentrantLock writing = new ReentrantLock();

    private ClientStream(AsyncContext async, OutputStream output)
    {
        this.async = async;
        this.output = output;
    }

    static ClientStream start(HttpServletRequest request, HttpServletResponse response) throws IOException
    {
        AsyncContext async = request.startAsync();
        async.setTimeout(0);
        return start(async);
    }

    /** Starts the stream on an exchange already asynchronous. */
    static ClientStream start(AsyncContext async) throws IOException
    {
        HttpServletResponse response = (HttpServletResponse)async.getResponse();
        response.setStatus(HttpStatus.OK_200);
        response.setContentType("text/event-stream");
        response.setCharacterEncoding("UTF-8");
        response.setHeader(HttpHeader.CACHE_CONTROL.asString(), "no-cache, no-transform");
        response.setHeader(McpHeaders.X_ACCEL_BUFFERING, "no");
        ClientStream stream = new ClientStream(async, response.getOutputStream());
        async.addListener(new AsyncListener()
        {
            @Override
            public void onComplete(AsyncEvent event)
            {
                stream.closed();
            }

            @Override
            public void onTimeout(AsyncEvent event)
            {
                stream.close();
            }

            @Override
            public void onError(AsyncEvent event)
            {
                stream.close();
            }

            @Override
            public void onStartAsync(AsyncEvent event)
            {
            }
        });
        response.flushBuffer();
        return stream;
    }

    /** Writes one event; multi-line data becomes several data lines. */
    void event(String id, String name, String data) throws IOException
    {
        StringBuilder frame = new StringBuilder(data.length() + 64);
        if (id != null)
            frame.append("id: ").append(id).append('\n');
        if (name != null)
            frame.append("event: ").append(name).append('\n');
        for (String line : data.split("\n", -1))
            frame.append("data: ").append(line).append('\n');
        frame.append('\n');
        writing.lock();
        try
        {
            write(frame.toString());
        }
        finally
        {
            writing.unlock();
        }
    }

    /**
     * An SSE comment: ignored by clients, but keeps idle proxies from cutting the stream. Skipped
     * while an event is being written: the stream is not idle, and waiting for the write to end
     * would hold a worker for nothing. Still blocks when the client stopped reading and events or
     * keepalives filled its socket, until the idle timeout ends the connection: each stream's
     * keepalives have a schedule of their own ({@code McpGateway.opened}).
     */
    void keepalive()
    {
        if (!writing.tryLock())
            return;
        try
        {
            write(": keepalive\n\n");
        }
        catch (IOException x)
        {
            close();
        }
        finally
        {
            writing.unlock();
        }
    }

    /** Writes and flushes, blocking until the client has room; the caller holds {@link #writing}. */
    private void write(String text) throws IOException
    {
        if (!isOpen())
            throw new IOException("client stream closed");
        try
        {
            output.write(text.getBytes(StandardCharsets.UTF_8));
            output.flush();
        }
        catch (IOException | IllegalStateException x)
        {
            close();
            throw x instanceof IOException io ? io : new IOException(x);
        }
    }

    @Override
    void close()
    {
        if (!isOpen())
            return;
        try
        {
            async.complete();
        }
        catch (IllegalStateException x)
        {
            // Already completed by the container.
        }
        closed();
    }

    private void closed()
    {
        ended();
    }
}
