package io.sandgate.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** What the gateway's futures complete with, taken where a caller must have it now. */
public final class Futures
{
    private Futures()
    {
    }

    /**
     * The future's value, waiting for it if need be; a failure is thrown as it was raised (a
     * {@code GatewayException}, a {@code StoreUnavailableException}), not wrapped, so that it maps to
     * the same answer as when it is thrown directly.
     */
    public static <T> T join(CompletableFuture<T> future)
    {
        try
        {
            return future.join();
        }
        catch (CompletionException x)
        {
            if (x.getCause() instanceof RuntimeException cause)
                throw cause;
            throw x;
        }
    }
}
