package io.sandgate.ingress.embedded;

import org.eclipse.jetty.http.HttpStatus;

/**
 * Whether what a response has written breaks the {@code Content-Length} it says, judged as Jetty's
 * own response judges it before it writes, so that {@link BrowserConnection} and Jetty's connection
 * give a browser the same answer to the same sandbox answer.
 *
 * <p>A body longer than the length is refused, and so is a last write that leaves it short, but for
 * an answer that carries no body whatever its length says: a HEAD's, and a 304's, whose length is
 * that of the body a GET would have had (RFC 9110, 8.6). A 204 may not say a length at all (RFC
 * 9110, 15.3.5): one that says one and writes none is refused, and answered as a bad answer.</p>
 */
final class WrittenLength
{
    private WrittenLength()
    {
    }

    /**
     * @param written all the bytes written, this write's included
     * @param contentLength the length the response says; negative when it says none
     * @param last whether this is the last write
     * @return why the write breaks the length; null when it does not
     */
    static String mismatch(long written, long contentLength, boolean last, boolean head, int status)
    {
        if (contentLength < 0 || written == contentLength || written == 0 && (head || status == HttpStatus.NOT_MODIFIED_304))
            return null;
        if (written > contentLength)
            return "written " + written + " > " + contentLength + " content-length";
        return last ? "written " + written + " < " + contentLength + " content-length" : null;
    }
}
