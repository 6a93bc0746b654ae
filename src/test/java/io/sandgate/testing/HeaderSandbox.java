package io.sandgate.testing;

import java.util.List;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * A sandbox that tries its luck with response headers: every answer carries the headers it was
 * started with (a {@code Set-Cookie} for the gateway's cookie, a {@code Service-Worker-Allowed: /},
 * a policy of its own), and is a small HTML page naming the path it was asked for.
 * {@code /redirect} answers 302 to its own absolute address ({@code http://127.0.0.1:PORT/landing}),
 * as a web UI that knows nothing of the gateway would.
 */
public final class HeaderSandbox implements AutoCloseable
{
    private final Server server;
    private final ServerConnector connector;

    private HeaderSandbox(List<String> headers)
    {
        if (headers.size() % 2 != 0)
            throw new IllegalArgumentException("headers: " + headers + " (expected: name, value pairs)");
        server = LoopbackServers.server("header-sandbox");
        connector = LoopbackServers.connector(server);
        server.setHandler(new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                for (int i = 0; i < headers.size(); i += 2)
                    response.getHeaders().add(headers.get(i), headers.get(i + 1));
                String path = Request.getPathInContext(request);
                if (path.equals("/redirect"))
                {
                    response.setStatus(HttpStatus.FOUND_302);
                    response.getHeaders().put(HttpHeader.LOCATION, "http://" + hostPort() + "/landing");
                }
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/html;charset=utf-8");
                Content.Sink.write(response, true, "<!doctype html><title>page</title><p id=path>" + path + "</p>", callback);
                return true;
            }
        });
    }

    /** @param headers response header name, value pairs sent with every answer */
    public static HeaderSandbox start(String... headers) throws Exception
    {
        HeaderSandbox sandbox = new HeaderSandbox(List.of(headers));
        sandbox.server.start();
        return sandbox;
    }

    public String hostPort()
    {
        return "127.0.0.1:" + connector.getLocalPort();
    }

    @Override
    public void close() throws Exception
    {
        server.stop();
    }
}
