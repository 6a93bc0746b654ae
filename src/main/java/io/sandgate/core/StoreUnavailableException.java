package io.sandgate.core;

/**
 * The backing store could not answer (Redis down, timed out). Callers answer 503: the sandbox may
 * well exist, the gateway just cannot tell right now.
 */
public class StoreUnavailableException extends RuntimeException
{
    public StoreUnavailableException(String message, Throwable cause)
    {
        super(message, cause);
    }
}
