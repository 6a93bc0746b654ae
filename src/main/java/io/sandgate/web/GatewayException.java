package io.sandgate.web;

import org.eclipse.jetty.http.HttpStatus;

/**
 * A request the gateway refuses or cannot serve, with the status and a message safe to show the
 * client: it never carries an internal address or a secret.
 */
public class GatewayException extends RuntimeException
{
    private final int status;
    private final String code;
    private final long retryAfterSeconds;
    private final String challenge;

    public GatewayException(int status, String code, String message)
    {
        this(status, code, message, 0, null);
    }

    private GatewayException(int status, String code, String message, long retryAfterSeconds, String challenge)
    {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
        this.challenge = challenge;
    }

    /**
     * A refusal of a caller's credentials, 401 or 403, answered with this {@code WWW-Authenticate}
     * challenge (RFC 6750) instead of the gateway's plain {@code Bearer}.
     */
    public static GatewayException challenged(int status, String code, String message, String challenge)
    {
        return new GatewayException(status, code, message, 0, challenge);
    }

    /**
     * A refusal of a client over one of its limits, 429, answered with {@code Retry-After}.
     *
     * @param retryAfterSeconds when the client may try again, at least 1
     */
    public static GatewayException tooMany(String code, String message, long retryAfterSeconds)
    {
        return new GatewayException(HttpStatus.TOO_MANY_REQUESTS_429, code, message, Math.max(1, retryAfterSeconds), null);
    }

    public static GatewayException badRequest(String message)
    {
        return new GatewayException(HttpStatus.BAD_REQUEST_400, "bad_request", message);
    }

    public static GatewayException forbidden(String message)
    {
        return new GatewayException(HttpStatus.FORBIDDEN_403, "forbidden", message);
    }

    public static GatewayException notFound(String message)
    {
        return new GatewayException(HttpStatus.NOT_FOUND_404, "not_found", message);
    }

    public static GatewayException unavailable(String message)
    {
        return new GatewayException(HttpStatus.SERVICE_UNAVAILABLE_503, "unavailable", message);
    }

    /**
     * A sandbox that is not running yet, 503 with {@code Retry-After}: a browser's navigation gets a
     * page that reloads itself then ({@link Errors#reply}).
     */
    public static GatewayException starting(String message, long retryAfterSeconds)
    {
        return new GatewayException(HttpStatus.SERVICE_UNAVAILABLE_503, "starting", message, Math.max(1, retryAfterSeconds), null);
    }

    public int status()
    {
        return status;
    }

    /** The {@code WWW-Authenticate} value the refusal carries, or null for the gateway's default. */
    public String challenge()
    {
        return challenge;
    }

    /** Seconds the client should wait before trying again, or 0 when waiting is not what it takes. */
    public long retryAfterSeconds()
    {
        return retryAfterSeconds;
    }

    /** A stable machine-readable word for the error body. */
    public String code()
    {
        return code;
    }
}
