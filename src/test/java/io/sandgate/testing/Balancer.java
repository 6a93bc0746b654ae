package io.sandgate.testing;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.ee10.proxy.ProxyServlet;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * A load balancer in front of gateway replicas, as a client meets them in production: a function
 * picks the replica of each request (e.g. the SSE GET to one, the POSTs to another), and the
 * balancer streams answers through, flushing each chunk so event streams stay live.
 */
public final class Balancer implements AutoCloseable
{
    private final Server server;
    private final ServerConnector connector;
    /** "METHOD path -> replica" for every request, in order. */
    public final List<String> routed = new CopyOnWriteArrayList<>();

    private Balancer(Function<HttpServletRequest, URI> chooser) throws Exception
    {
        server = new Server();
        connector = LoopbackServers.connector(server);
        ServletContextHandler context = new ServletContextHandler("/");
        ServletHolder holder = new ServletHolder(new ProxyServlet()
        {
            @Override
            protected String rewriteTarget(HttpServletRequest request)
            {
                URI replica = chooser.apply(request);
                routed.add(request.getMethod() + " " + request.getRequestURI() + " -> " + replica.getPort());
                String query = request.getQueryString();
                return replica.resolve(request.getRequestURI()) + (query == null ? "" : "?" + query);
            }

            @Override
            protected void onServerResponseHeaders(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse)
            {
                super.onServerResponseHeaders(clientRequest, proxyResponse, serverResponse);
                // Jetty's proxy joins a header's values again without their quotes; a challenge's
                // parameters (resource_metadata="...") reach the client as the replica wrote them.
                List<String> challenges = serverResponse.getHeaders().getValuesList(HttpHeader.WWW_AUTHENTICATE);
                for (int i = 0; i < challenges.size(); i++)
                {
                    if (i == 0)
                        proxyResponse.setHeader(HttpHeader.WWW_AUTHENTICATE.asString(), challenges.get(i));
                    else
                        proxyResponse.addHeader(HttpHeader.WWW_AUTHENTICATE.asString(), challenges.get(i));
                }
            }

            @Override
            protected void onResponseContent(HttpServletRequest request, HttpServletResponse response, Response proxyResponse,
                                             byte[] buffer, int offset, int length, Callback callback)
            {
                try
                {
                    response.getOutputStream().write(buffer, offset, length);
                    response.getOutputStream().flush();
                    callback.succeeded();
                }
                catch (IOException x)
                {
                    callback.failed(x);
                }
            }
        });
        holder.setInitParameter("maxThreads", "64");
        holder.setInitParameter("timeout", "0");
        holder.setInitParameter("idleTimeout", "120000");
        holder.setInitParameter("preserveHost", "true");
        holder.setAsyncSupported(true);
        context.addServlet(holder, "/*");
        server.setHandler(context);
        server.start();
    }

    public static Balancer start(Function<HttpServletRequest, URI> chooser) throws Exception
    {
        return new Balancer(chooser);
    }

    public String baseUrl()
    {
        return "http://127.0.0.1:" + connector.getLocalPort();
    }

    @Override
    public void close() throws Exception
    {
        server.stop();
    }
}
