package io.sandgate.egress;

import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.HttpClientTransport;
import org.eclipse.jetty.client.HttpProxy;
import org.eclipse.jetty.client.ProxyConfiguration;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * An HttpClient that sends requests for a {@link PinnedTarget} to its checked address. Through an
 * egress node, which must be a {@link PinnedHttpProxy}, that means {@code CONNECT <address>:<port>}
 * for https and the absolute form {@code http://<address>:<port>/...} for plain http: the node
 * never sees a name it could resolve.
 *
 * <ul>
 *   <li>{@link #newRequest(PinnedTarget, String)} addresses the request to the checked address and
 *       tags it with the target.</li>
 *   <li>{@code Host} is set when the request begins on its connection, after any header copying
 *       (a proxy servlet clears the headers it copies into): the target's name, except on plain
 *       http through a node, where it must be the absolute URI's authority (see
 *       {@link PinnedHttpProxy}). Not when it is queued: a connection released on another thread
 *       may take the request from the queue before the queued listeners run, and two threads
 *       then write its headers at once (seen as two {@code Host} headers, about 1 request in
 *       1 000 under load).</li>
 *   <li>TLS uses the name for SNI and verification: the client's {@link SslContextFactory} must be
 *       a {@link PinnedSslContextFactory}; one is installed if none was set.</li>
 * </ul>
 * Both requirements are checked when the client starts, since either one missing would quietly
 * send the name to the wrong place or verify TLS against the address.
 * Requests without a {@link PinnedTarget} tag are sent as by any HttpClient.
 */
public class PinnedHttpClient extends HttpClient
{
    public PinnedHttpClient(HttpClientTransport transport)
    {
        super(transport);
        getRequestListeners().addQueuedListener(this::onQueued);
        getRequestListeners().addBeginListener(this::onBegin);
    }

    /** A request to {@code pathAndQuery} on the target, sent to the checked address. */
    public Request newRequest(PinnedTarget target, String pathAndQuery)
    {
        return newRequest(target.uri(pathAndQuery)).tag(target);
    }

    /** Refuses a mismatched tag before anything, a tunnel included, is sent: aborting is safe from any thread. */
    private void onQueued(Request request)
    {
        // A tag that does not match the URI would send TLS and Host for one target to the address
        // of another: refuse rather than guess which one was meant.
        if (request.getTag() instanceof PinnedTarget target
            && (!target.isAddressOf(request.getHost(), request.getPort()) || !target.scheme().equalsIgnoreCase(request.getScheme())))
            request.abort(new IllegalStateException("request URI does not match its pinned target"));
    }

    /** On the thread that sends the request, before its headers are generated. */
    private void onBegin(Request request)
    {
        if (!(request.getTag() instanceof PinnedTarget target))
            return;
        if (target.scheme().equals("http") && !getProxyConfiguration().getProxies().isEmpty())
            request.headers(headers -> headers.put(HttpHeader.HOST, uriAuthority(request))); // the absolute URI's: the address
        else
            request.headers(headers -> headers.put(HttpHeader.HOST, target.hostHeader()));
    }

    /** The authority of the request's URI as the request line writes it, the port left out when it is the default. */
    private static String uriAuthority(Request request)
    {
        String host = request.getHost().contains(":") && !request.getHost().startsWith("[") ? "[" + request.getHost() + "]" : request.getHost();
        return request.getPort() == 80 || request.getPort() < 0 ? host : host + ":" + request.getPort();
    }

    @Override
    protected void doStart() throws Exception
    {
        SslContextFactory.Client tls = getSslContextFactory();
        if (tls == null)
            setSslContextFactory(new PinnedSslContextFactory());
        else if (!(tls instanceof PinnedSslContextFactory))
            throw new IllegalStateException("TLS to pinned targets needs a " + PinnedSslContextFactory.class.getSimpleName()
                + ", not a " + tls.getClass().getSimpleName());
        for (ProxyConfiguration.Proxy proxy : getProxyConfiguration().getProxies())
        {
            if (proxy instanceof HttpProxy && !(proxy instanceof PinnedHttpProxy))
                throw new IllegalStateException("HTTP proxies of pinned targets must be " + PinnedHttpProxy.class.getSimpleName()
                    + "s, not " + proxy.getClass().getSimpleName() + "s");
        }
        super.doStart();
    }
}
