package io.sandgate.web;

import java.io.IOException;

import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.client.EarlyHintsProtocolHandler;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.ProcessingProtocolHandler;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.ee10.proxy.AsyncProxyServlet;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Jetty's asynchronous proxy servlet, changed in the two ways both of Sandgate's proxying faces
 * need: every chunk from upstream is flushed to the client as it arrives, and an interim answer
 * (102 Processing, 103 Early Hints) is not taken for the answer.
 */
public abstract class StreamingProxyServlet extends AsyncProxyServlet
{
    private static final RequestAttribute<FlushingWriter> WRITER = RequestAttribute.of("proxy.writer", FlushingWriter.class);

    /**
     * Jetty's proxy logs every request's headers at DEBUG under the servlet's own logger, which
     * would put Authorization values and injected keys in the log the moment someone turns on DEBUG
     * for {@code io.sandgate}. Its logger lives under Jetty's name instead, with Jetty's level.
     */
    @Override
    protected Logger createLogger()
    {
        return LoggerFactory.getLogger("org.eclipse.jetty.ee10.proxy." + getClass().getSimpleName());
    }

    /**
     * Jetty's proxy servlet clears its client's protocol handlers but the one for 100 Continue, and
     * its client then takes any other 1xx for the final answer: it ends the browser's response with
     * the hint's head and drops the real answer, so the browser waits for ever. Sandboxes and
     * upstreams send Early Hints (Node's {@code writeEarlyHints}, Go, CDNs); they are read and
     * passed over here, as the core front-end does.
     */
    @Override
    protected HttpClient createHttpClient() throws ServletException
    {
        HttpClient client = super.createHttpClient();
        passOverInterimAnswers(client);
        return client;
    }

    /** How this proxy's client reaches its upstreams; null for the proxy servlet's default client. */
    protected UpstreamClient upstreamClient()
    {
        return null;
    }

    @Override
    protected HttpClient newHttpClient(ClientConnector connector)
    {
        UpstreamClient upstream = upstreamClient();
        return upstream == null ? super.newHttpClient(connector) : upstream.newClient(connector);
    }

    /** Has a client whose protocol handlers were cleared read interim answers (102, 103) and wait for the final one. */
    public static void passOverInterimAnswers(HttpClient client)
    {
        client.getProtocolHandlers().put(new ProcessingProtocolHandler());
        client.getProtocolHandlers().put(new EarlyHintsProtocolHandler());
    }

    /**
     * Writes each chunk and flushes it. Servlet containers aggregate small writes (Jetty up to a
     * quarter of the buffer), which would hold back SSE events and chunked streams (a sandbox's, an LLM's tokens)
     * until the buffer fills; a gateway must pass them on as they arrive.
     */
    @Override
    protected void onResponseContent(HttpServletRequest request, HttpServletResponse response, Response proxyResponse,
                                     byte[] buffer, int offset, int length, Callback callback)
    {
        try
        {
            FlushingWriter writer = WRITER.get(request);
            if (writer == null)
            {
                ServletOutputStream output = response.getOutputStream();
                writer = new FlushingWriter(output, proxyResponse::abort);
                WRITER.set(request, writer);
                // Data first: setWriteListener() may call onWritePossible() at once on another thread.
                writer.data(buffer, offset, length, callback);
                output.setWriteListener(writer);
            }
            else
            {
                writer.data(buffer, offset, length, callback);
                writer.onWritePossible();
            }
        }
        catch (Throwable x)
        {
            callback.failed(x);
            proxyResponse.abort(x);
        }
    }
}
