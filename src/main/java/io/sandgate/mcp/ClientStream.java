package io.sandgate.mcp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Queue;

import io.sandgate.config.McpConfig;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;

/**
 * An SSE stream to an MCP client. Every write is flushed at once; {@code X-Accel-Buffering: no}
 * asks nginx-style proxies in front of the gateway not to buffer either.
 *
 * <p>Writes never wait for the client: the stream uses the servlet's non-blocking output, and what
 * the client has not taken yet is queued. Events are delivered only while less than
 * {@link #HIGH_WATER} bytes are queued ({@link #ready}); past it, delivery stops without holding a
 * thread, the session's log keeping what follows, and resumes once the client has read half of
 * it. A client that stops reading holds that much memory, no thread, until the server's idle
 * timeout ends its connection.</p>
 */
final class ClientStream extends Lifetime
{
    /** Bytes queued for a client past which it gets no more events until it reads. */
    static final int HIGH_WATER = 256 * 1024;
    private static final byte[] KEEPALIVE = ": keepalive\n\n".getBytes(StandardCharsets.US_ASCII);

    private final AsyncContext async;
    private final ServletOutputStream output;
    // Guarded by this.
    private final Queue<byte[]> queued = new ArrayDeque<>();
    private long queuedBytes;
    /** Whether bytes were written since the last flush; true at first, for the headers. */
    private boolean unflushed = true;
    /** Whether the stream ends once what is queued is out. */
    private boolean closing;
    /** What runs once the client has read enough of the queue, when delivery was told to wait. */
    private Runnable whenReady;

    private ClientStream(AsyncContext async, ServletOutputStream output)
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
                stream.ended();
            }

            @Override
            public void onTimeout(AsyncEvent event)
            {
                stream.abort();
            }

            @Override
            public void onError(AsyncEvent event)
            {
                stream.abort();
            }

            @Override
            public void onStartAsync(AsyncEvent event)
            {
            }
        });
        // From here on the output never blocks; the container calls back when it can take more,
        // the first time at once, which sends the headers.
        stream.output.setWriteListener(new WriteListener()
        {
            @Override
            public void onWritePossible()
            {
                stream.write();
            }

            @Override
            public void onError(Throwable failure)
            {
                stream.abort();
            }
        });
        return stream;
    }

    /**
     * Queues one event for the client; multi-line data becomes several data lines. Taken whatever
     * is queued already: delivery asks {@link #ready} first.
     *
     * @throws IOException when the stream has ended, or is ending
     */
    void event(String id, String name, String data) throws IOException
    {
        event(id, name, data, null);
    }

    /**
     * As {@link #event(String, String, String)}, with the reconnection time the client should wait
     * after the stream drops: a relay passes on its server's, so that the client polls as the server asked.
     *
     * @param retry milliseconds, digits only; null for none
     */
    void event(String id, String name, String data, String retry) throws IOException
    {
        StringBuilder frame = new StringBuilder(data.length() + 64);
        if (id != null)
            frame.append("id: ").append(id).append('\n');
        if (retry != null && !retry.isEmpty() && retry.chars().allMatch(c -> c >= '0' && c <= '9'))
            frame.append("retry: ").append(retry).append('\n');
        if (name != null)
            frame.append("event: ").append(name).append('\n');
        for (String line : data.split("\n", -1))
            frame.append("data: ").append(line).append('\n');
        frame.append('\n');
        byte[] bytes = frame.toString().getBytes(StandardCharsets.UTF_8);
        synchronized (this)
        {
            if (closing || !isOpen())
                throw new IOException("client stream closed");
            queue(bytes);
        }
        write();
    }

    /**
     * An SSE comment: ignored by clients, but keeps idle proxies from cutting the stream. Skipped
     * while anything is queued: the stream is not idle, or its client is not reading.
     */
    void keepalive()
    {
        synchronized (this)
        {
            if (closing || !isOpen() || !queued.isEmpty())
                return;
            queue(KEEPALIVE);
        }
        write();
    }

    /**
     * Whether the stream takes another event now: less than {@link #HIGH_WATER} bytes wait for the
     * client. When not, {@code whenReady} runs once the client has read half of them (not if the
     * stream ends first).
     */
    synchronized boolean ready(Runnable whenReady)
    {
        if (queuedBytes < HIGH_WATER)
            return true;
        this.whenReady = whenReady;
        return false;
    }

    private void queue(byte[] bytes)
    {
        queued.add(bytes);
        queuedBytes += bytes.length;
    }

    /**
     * Hands the container what is queued, flushing after it, for as long as the container takes
     * it without waiting; it calls {@link WriteListener#onWritePossible} for the rest. Whoever
     * calls (a delivery, a keepalive, the container) returns at once.
     */
    private void write()
    {
        Runnable ready = null;
        boolean done = false;
        synchronized (this)
        {
            try
            {
                while (output.isReady())
                {
                    byte[] next = queued.poll();
                    if (next != null)
                    {
                        queuedBytes -= next.length;
                        unflushed = true;
                        output.write(next);
                    }
                    else if (unflushed)
                    {
                        unflushed = false;
                        output.flush();
                    }
                    else
                    {
                        done = closing;
                        break;
                    }
                }
            }
            catch (IOException | IllegalStateException x)
            {
                // The client is gone: abort() below, outside the lock, and nothing more delivered.
                done = true;
                queued.clear();
                queuedBytes = 0;
                whenReady = null;
            }
            if (whenReady != null && queuedBytes < HIGH_WATER / 2)
            {
                ready = whenReady;
                whenReady = null;
            }
        }
        if (ready != null)
            ready.run();
        if (done)
            abort();
    }

    /** Whether the stream runs and no end has begun: a drain still has to end it. */
    synchronized boolean running()
    {
        return !closing && isOpen();
    }

    /** Ends the stream once what is queued has reached the client (or the client is gone). */
    @Override
    void close()
    {
        end();
    }

    /** As {@link #close}; returns whether this call began the end, false when it had begun already. */
    boolean end()
    {
        synchronized (this)
        {
            if (closing || !isOpen())
                return false;
            closing = true;
        }
        write();
        return true;
    }

    /** Ends the stream now, whatever is queued. */
    private void abort()
    {
        try
        {
            async.complete();
        }
        catch (IllegalStateException x)
        {
            // Already completed by the container.
        }
        ended();
    }

    /**
     * A session's events delivered to a client stream: taken while the stream has room, the
     * stream closed when the session ends. Every message of a session's log reaches its client
     * through here, on every transport and bridge, so the server's tool policy is applied here,
     * once: its hidden tools are cut from {@code tools/list} results before {@link #deliver} sees them.
     */
    abstract static class Delivery implements SessionBus.Listener
    {
        final ClientStream stream;
        private final ToolAccess tools;

        /**
         * @param tools what the caller may see of the server whose session this is; lists are
         *        judged by the pins here, not checked into them: that happened as they came in
         */
        Delivery(ClientStream stream, ToolAccess tools)
        {
            this.stream = stream;
            this.tools = tools.judging();
        }

        /** Writes the event to {@link #stream}, or skips it; {@code message} is what the client may see of it. */
        abstract void deliver(String eventId, String message) throws IOException;

        @Override
        public final void onEvent(String eventId, String message)
        {
            try
            {
                deliver(eventId, ToolGuard.cut(tools, message));
            }
            catch (IOException x)
            {
                // The client is gone: not delivered, so the drain stops at the one before.
                throw new UncheckedIOException(x);
            }
        }

        @Override
        public boolean ready(Runnable whenReady)
        {
            return stream.ready(whenReady);
        }

        @Override
        public void onEnd()
        {
            stream.close();
        }
    }
}
