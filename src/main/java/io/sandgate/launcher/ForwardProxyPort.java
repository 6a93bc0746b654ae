package io.sandgate.launcher;

import io.sandgate.egress.EgressServlet;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The forward-proxy port of the embedded runner: a request arriving there in absolute form
 * ({@code GET http://api.example/v1/x}, as {@code HTTP_PROXY} clients send it) is served as the
 * base-URL request {@code /egress/api.example/v1/x} towards plain http. A dedicated port is what
 * tells the two apart: on the wire an absolute-form request and an ordinary one look alike once
 * parsed.
 */
final class ForwardProxyPort extends Handler.Wrapper
{
    private final Connector connector;

    ForwardProxyPort(Connector connector, Handler next)
    {
        super(next);
        this.connector = connector;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception
    {
        // A request from inside an inspected tunnel on this port has its target already.
        if (request.getConnectionMetaData().getConnector() != connector || request.getAttribute(EgressServlet.INSPECTED.name()) != null)
            return super.handle(request, response, callback);
        HttpURI uri = request.getHttpURI();
        String authority = uri.getHost() + (uri.getPort() > 0 ? ":" + uri.getPort() : "");
        HttpURI rewritten = HttpURI.build(uri).path("/egress/" + authority + (uri.getPath() == null || uri.getPath().isEmpty() ? "/" : uri.getPath()));
        request.setAttribute(EgressServlet.FORWARD_PROXY.name(), Boolean.TRUE);
        return super.handle(new Request.Wrapper(request)
        {
            @Override
            public HttpURI getHttpURI()
            {
                return rewritten;
            }
        }, response, callback);
    }
}
