package io.sandgate.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Reads a small request body without holding a thread while it trickles in: a client that sends
 * its body slowly (or never) must not pin a request thread.
 */
public final class RequestBodies
{
    private RequestBodies()
    {
    }

    /**
     * Reads the whole body of a request whose async processing has started.
     *
     * @param limit the largest body accepted; a larger one fails the future with a 413
     */
    public static CompletableFuture<byte[]> read(HttpServletRequest request, int limit) throws IOException
    {
        CompletableFuture<byte[]> body = new CompletableFuture<>();
        if (request.getContentLengthLong() > limit)
        {
            body.completeExceptionally(tooLarge(limit));
            return body;
        }
        ServletInputStream input = request.getInputStream();
        input.setReadListener(new ReadListener()
        {
            private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            private final byte[] buffer = new byte[4096];

            @Override
            public void onDataAvailable() throws IOException
            {
                while (!body.isDone() && input.isReady())
                {
                    int read = input.read(buffer);
                    if (read < 0)
                        return;
                    bytes.write(buffer, 0, read);
                    if (bytes.size() > limit)
                        body.completeExceptionally(tooLarge(limit));
                }
            }

            @Override
            public void onAllDataRead()
            {
                body.complete(bytes.toByteArray());
            }

            @Override
            public void onError(Throwable failure)
            {
                body.completeExceptionally(failure);
            }
        });
        return body;
    }

    private static GatewayException tooLarge(int limit)
    {
        return new GatewayException(HttpStatus.PAYLOAD_TOO_LARGE_413, "too_large", "body larger than " + limit + " bytes");
    }
}
