package io.sandgate.secrets;

/**
 * A secret cannot be had. The message is safe to log (it names the secret and the reason, never a
 * value); the gateway answers 503 for {@link Reason#SOURCE_DOWN} and {@link Reason#EXPIRED}, and
 * treats {@link Reason#UNKNOWN} as a configuration error.
 */
public final class SecretUnavailableException extends RuntimeException
{
    public enum Reason
    {
        /** No such secret in the source. */
        UNKNOWN,
        /** The source cannot be reached, is sealed, or refuses us, and nothing is cached. */
        SOURCE_DOWN,
        /** The source is down and the cached value outlived its lifetime. */
        EXPIRED
    }

    private final Reason reason;

    public SecretUnavailableException(Reason reason, String message)
    {
        this(reason, message, null);
    }

    public SecretUnavailableException(Reason reason, String message, Throwable cause)
    {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason()
    {
        return reason;
    }
}
