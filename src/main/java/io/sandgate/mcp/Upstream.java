package io.sandgate.mcp;

import java.io.InputStream;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.sandgate.web.GatewayException;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Requests to upstream MCP servers. Answers stream: the caller gets the status and headers as soon
 * as they arrive and reads the body (JSON, or an event stream that may last) as it comes.
 */
final class Upstream
{
    private static final long HEADERS_TIMEOUT_SECONDS = 30;

    private final HttpClient client;

    Upstream(HttpClient client)
    {
        this.client = client;
    }

    /** A response whose body is still arriving. */
    record Exchange(Response response, InputStream body)
    {
        int status()
        {
            return response.getStatus();
        }

        String header(String name)
        {
            return response.getHeaders().get(name);
        }

        boolean isEventStream()
        {
            String type = header(HttpHeader.CONTENT_TYPE.asString());
            return type != null && type.toLowerCase(java.util.Locale.ROOT).startsWith("text/event-stream");
        }

        String readBody() throws java.io.IOException
        {
            try (InputStream in = body)
            {
                return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            }
        }
    }

    Exchange send(HttpMethod method, URI uri, Map<String, String> headers, String body)
    {
        Request request = client.newRequest(uri).method(method).idleTimeout(0, TimeUnit.MILLISECONDS);
        request.headers(h -> headers.forEach((name, value) ->
        {
            if (value != null)
                h.put(name, value);
        }));
        if (body != null)
            request.body(new StringRequestContent("application/json", body));
        InputStreamResponseListener listener = new InputStreamResponseListener();
        request.send(listener);
        try
        {
            Response response = listener.get(HEADERS_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            return new Exchange(response, listener.getInputStream());
        }
        catch (TimeoutException x)
        {
            request.abort(x);
            throw new GatewayException(HttpStatus.GATEWAY_TIMEOUT_504, "upstream_timeout", "the MCP server did not answer in time");
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            throw GatewayException.unavailable("interrupted");
        }
        catch (ExecutionException x)
        {
            throw new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_unreachable", "the MCP server could not be reached");
        }
    }
}
