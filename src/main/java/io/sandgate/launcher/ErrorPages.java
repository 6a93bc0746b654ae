package io.sandgate.launcher;

import java.nio.ByteBuffer;

import io.sandgate.web.NoScript;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty's own error pages, with {@link NoScript}'s headers as the gateway's own errors carry them:
 * the server's (a request it cannot parse, a head too large, a path no handler takes, a server
 * draining) and a servlet context's (a servlet's {@code sendError}, a path no servlet is mapped on).
 * A page of the gateway's origin with no policy is one a sandbox's page could open in a window and
 * run its script in; the pages stay Jetty's, without stack traces.
 */
final class ErrorPages
{
    private ErrorPages()
    {
    }

    /** For {@code Server.setErrorHandler}. */
    static Request.Handler forServer()
    {
        return new ServerPages();
    }

    /** For a servlet context's {@code setErrorHandler}. */
    static Request.Handler forServlets()
    {
        return new ServletPages();
    }

    private static final class ServerPages extends org.eclipse.jetty.server.handler.ErrorHandler
    {
        ServerPages()
        {
            setShowStacks(false);
            setShowCauses(false);
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            NoScript.set(response.getHeaders());
            return super.handle(request, response, callback);
        }

        /** A request the parser refused, answered before there is any request to hand {@link #handle}. */
        @Override
        public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields)
        {
            NoScript.set(fields);
            return super.badMessageError(status, reason, fields);
        }
    }

    private static final class ServletPages extends org.eclipse.jetty.ee10.servlet.ErrorHandler
    {
        ServletPages()
        {
            setShowStacks(false);
            setShowCauses(false);
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            NoScript.set(response.getHeaders());
            return super.handle(request, response, callback);
        }
    }
}
