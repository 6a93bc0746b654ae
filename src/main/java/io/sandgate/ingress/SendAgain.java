package io.sandgate.ingress;

import java.util.concurrent.TimeoutException;

import org.eclipse.jetty.http.HttpMethod;

/**
 * Whether a request whose sandbox connection failed goes once more, on a new connection: the rule
 * both front-ends follow. Sandboxes close idle connections when they like, and one that closes a
 * kept connection just as it is taken must not cost the browser its request. As with nginx's
 * {@code proxy_next_upstream}, a request the sandbox may have acted on (a method that is not
 * idempotent, a body already going) is never sent twice, nor one whose answer had begun; nor one
 * that timed out, which would only double the browser's wait.
 */
public final class SendAgain
{
    private SendAgain()
    {
    }

    /**
     * @param method the request's method
     * @param sentAgain whether the request is already the second
     * @param untouched whether the failed connection took the request and nothing came of it: no
     *                  answer began and no body went (each front-end knows this its own way)
     * @param failure what failed
     */
    public static boolean mayGoAgain(String method, boolean sentAgain, boolean untouched, Throwable failure)
    {
        if (sentAgain || !untouched || failure instanceof TimeoutException)
            return false;
        HttpMethod known = HttpMethod.fromString(method);
        return known != null && known.isIdempotent();
    }
}
