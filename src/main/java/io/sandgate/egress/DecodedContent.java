package io.sandgate.egress;

import java.nio.ByteBuffer;
import java.util.function.BiConsumer;

import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IteratingCallback;

/**
 * One compressed chunk of a read answer, decoded a slice at a time: each slice is scanned and
 * written before the next is made, so that however much the chunk expands, the exchange holds
 * one slice of it. The chunk's callback completes when the last slice has been written.
 */
final class DecodedContent extends IteratingCallback
{
    /** The attempt's own: a retry starts the exchange's anew. */
    private final BodyDecoder decoder;
    private final BodyScan scan;
    private final Response proxyResponse;
    private final Callback chunkRead;
    /** Writes a scanned slice to the agent and completes the callback it is given once written. */
    private final BiConsumer<ByteBuffer, Callback> write;

    DecodedContent(BodyDecoder decoder, BodyScan scan, Response proxyResponse, Callback chunkRead, BiConsumer<ByteBuffer, Callback> write)
    {
        this.decoder = decoder;
        this.scan = scan;
        this.proxyResponse = proxyResponse;
        this.chunkRead = chunkRead;
        this.write = write;
    }

    @Override
    protected Action process()
    {
        // A malformed or too expansive body, or a secret on a blocking route, fails this callback.
        ByteBuffer decoded = decoder.next();
        if (!decoded.hasRemaining())
            return Action.SUCCEEDED;
        BodyScan.Step step = scan.feed(decoded);
        if (step.blocked() != null)
            throw step.blocked();
        write.accept(step.output(), this);
        return Action.SCHEDULED;
    }

    @Override
    protected void onCompleteSuccess()
    {
        chunkRead.succeeded();
    }

    @Override
    protected void onCompleteFailure(Throwable failure)
    {
        chunkRead.failed(failure);
        proxyResponse.abort(failure);
    }
}
