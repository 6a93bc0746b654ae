package io.sandgate.ingress.embedded;

import org.eclipse.jetty.server.Request;

/**
 * The browser of the exchange a {@link SandboxLink} carries, watched while its answer is awaited. A
 * browser that leaves then ends the exchange at once, rather than when the sandbox answers or the
 * idle timeout passes: a sandbox that never answers would hold the browser's place in the
 * per-client limit, and the sandbox's connection, for an hour. Watched only once the request has
 * all arrived: while its body comes the server reads the browser's connection itself, and a report
 * of bytes it has just read would look like the browser gone.
 */
final class BrowserWatch
{
    /** The browser's connection, which tells if the browser leaves; null where it cannot, or when none is watched. */
    private KeptReadEndPoint browser;
    /** What the browser's connection runs if the browser leaves. */
    private Runnable left;

    /**
     * Runs {@code gone} if the browser of {@code request} leaves, until {@link #forget}.
     *
     * @return the browser's connection, or null where it cannot tell
     */
    KeptReadEndPoint watch(Request request, Runnable gone)
    {
        if (!(request.getConnectionMetaData().getConnection().getEndPoint() instanceof KeptReadEndPoint endPoint))
            return null;
        browser = endPoint;
        left = gone;
        endPoint.onPeerGone(gone);
        return endPoint;
    }

    /** The answer is whole, or the exchange ended: the browser may close at once, and that is no departure. */
    void forget()
    {
        KeptReadEndPoint endPoint = browser;
        if (endPoint != null)
        {
            endPoint.clearPeerGone(left);
            browser = null;
            left = null;
        }
    }
}
