package io.sandgate.ingress;

import org.eclipse.jetty.http.HttpField;

/**
 * The request head the embedded runner sends a sandbox, as {@link ForwardPolicy#requestHead} fills
 * it field by field after its request line. Which fields go in is the policy's to say; the bytes
 * and the buffer they go out in are the runner's, so that the shared policy stays off Jetty's I/O
 * classes.
 */
public interface SandboxHead
{
    /** How the browser's body goes on: not at all, as it came (Content-Length), or chunked. */
    enum Body
    {
        NONE, AS_IS, CHUNKED
    }

    void field(HttpField field);

    void field(String name, String value);
}
