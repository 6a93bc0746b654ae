package io.sandgate.web;

import java.time.Duration;

import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.thread.Invocable;

/**
 * The client of a proxy servlet whose upstreams speak HTTP/1.1 alone and come and go all day
 * (sandbox pods), and whose answers nothing waits on ({@link StreamingProxyServlet#upstreamClient}).
 * It keeps Jetty's client and I/O types here, so that the servlet's own package stays on the
 * servlet API.
 *
 * @param connectTimeout how long a connection may take to open
 * @param destinationIdleTimeout how long an address with no connection keeps its pool
 * @param maxAnswerHead the longest answer head read; a longer one fails as a bad answer (502)
 */
public record UpstreamClient(Duration connectTimeout, Duration destinationIdleTimeout, int maxAnswerHead)
{
    /** At most this many selectors: each holds a thread of the pool the container shares with the servlets. */
    private static final int MOST_SELECTORS = 4;

    HttpClient newClient(ClientConnector connector)
    {
        connector.setConnectTimeout(connectTimeout);
        // Answers are handled on the selectors (below): with one, under saturation a single selector
        // thread handling every answer held the path to one core.
        connector.setSelectors(Math.min(MOST_SELECTORS, Runtime.getRuntime().availableProcessors()));
        // HTTP/1.1 alone: the proxy servlet's default transport works out the protocol for every
        // request anew, among the ones it could negotiate.
        HttpClient client = new HttpClient(new HttpClientTransportOverHTTP(connector));
        // Without this every address ever seen keeps a destination (and its pool) for ever.
        client.setDestinationIdleTimeout(destinationIdleTimeout.toMillis());
        client.setConnectTimeout(connectTimeout.toMillis());
        // A head the container could not send on fails here as a bad answer (502), not in the
        // container as it writes the response (its own 500 page).
        client.setMaxResponseHeadersSize(maxAnswerHead);
        // Heap buffers: the proxy servlet hands a body to the container as an array, and from a
        // direct buffer it allocates one and copies every chunk into it.
        client.setUseInputDirectByteBuffers(false);
        // Nothing done with an answer waits (its head is copied, a small body goes into the
        // container's buffer, a larger one through a write listener, the end is an asynchronous
        // complete): answers are handled on the selectors instead of waking a pool thread for each.
        client.getTransport().setInvocationType(Invocable.InvocationType.NON_BLOCKING);
        return client;
    }
}
