package io.sandgate.mcp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

import org.eclipse.jetty.io.Content;

/**
 * An upstream's whole answer read without blocking, up to a number of bytes: what the gateway
 * reads whole from a server it does not control (a federation member's list), which could
 * otherwise send without end. Over the limit, or when the reader gives up (a timeout on the
 * returned future), the exchange is aborted, so that the server's connection is not read on.
 */
final class BoundedText implements Runnable
{
    /** An answer over the limit. */
    static final class TooLarge extends IOException
    {
        TooLarge(int maxBytes)
        {
            super("its answer is larger than " + maxBytes + " bytes (mcp.max-body-size)");
        }
    }

    private final Upstream.Exchange exchange;
    private final int maxBytes;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final CompletableFuture<String> text = new CompletableFuture<>();

    private BoundedText(Upstream.Exchange exchange, int maxBytes)
    {
        this.exchange = exchange;
        this.maxBytes = maxBytes;
    }

    static CompletableFuture<String> read(Upstream.Exchange exchange, int maxBytes)
    {
        BoundedText read = new BoundedText(exchange, maxBytes);
        read.text.whenComplete((text, failure) ->
        {
            if (failure != null)
                exchange.abort(failure);
        });
        read.run();
        return read.text;
    }

    @Override
    public void run()
    {
        while (!text.isDone())
        {
            Content.Chunk chunk = exchange.content().read();
            if (chunk == null)
            {
                exchange.content().demand(this);
                return;
            }
            if (Content.Chunk.isFailure(chunk))
            {
                text.completeExceptionally(chunk.getFailure());
                return;
            }
            try
            {
                int size = chunk.remaining();
                if (bytes.size() + size > maxBytes)
                {
                    text.completeExceptionally(new TooLarge(maxBytes));
                    return;
                }
                byte[] read = new byte[size];
                chunk.get(read, 0, size);
                bytes.write(read, 0, size);
                if (chunk.isLast())
                    text.complete(bytes.toString(StandardCharsets.UTF_8));
            }
            finally
            {
                chunk.release();
            }
        }
    }
}
