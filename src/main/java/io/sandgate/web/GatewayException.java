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

    public GatewayException(int status, String code, String message)
    {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
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

    public int status()
    {
        return status;
    }

    /** A stable machine-readable word for the error body. */
    public String code()
    {
        return code;
    }
}
