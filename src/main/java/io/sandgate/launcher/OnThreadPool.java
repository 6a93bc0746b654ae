package io.sandgate.launcher;

import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Runs handlers that may block (the servlet contexts, and the CONNECT handling in front of them) on
 * the server's thread pool, so that the handler tree as a whole can tell Jetty that it never blocks.
 * Jetty then runs the ingress handler in front of it on the thread that parsed the request, with no
 * hand-off, and this makes the hand-off that Jetty would otherwise make for every request only for
 * the requests that need it.
 */
final class OnThreadPool extends Handler.Wrapper
{
    OnThreadPool(Handler blocking)
    {
        super(blocking);
    }

    @Override
    public InvocationType getInvocationType()
    {
        return InvocationType.NON_BLOCKING;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback)
    {
        getServer().getThreadPool().execute(() -> handleOnPool(request, response, callback));
        return true;
    }

    /** As the server would: what no handler takes is a 404, and what a handler throws fails the exchange. */
    private void handleOnPool(Request request, Response response, Callback callback)
    {
        try
        {
            if (!super.handle(request, response, callback))
                Response.writeError(request, response, callback, HttpStatus.NOT_FOUND_404);
        }
        catch (Throwable x)
        {
            callback.failed(x);
        }
    }
}
