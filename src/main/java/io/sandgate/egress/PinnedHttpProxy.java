package io.sandgate.egress;

import org.eclipse.jetty.client.HttpProxy;
import org.eclipse.jetty.client.Origin;

/**
 * An egress node as the HTTP proxy of a {@link PinnedHttpClient}: requests for a
 * {@link PinnedTarget} always go through a {@code CONNECT <address>:<port>} tunnel, plain http ones
 * too.
 *
 * <p>Plain http through a proxy would otherwise use the absolute form,
 * {@code GET http://<address>:<port>/path}, and RFC 9112 section 3.2.2 tells the proxy to ignore
 * the {@code Host} header of such a request and derive a new one from the address (Jetty's proxy
 * even answers 400 when the two differ). The target would then never learn the name it is called
 * by. Inside a tunnel the request is in origin form and its {@code Host} reaches the target as sent.
 * Nodes must therefore allow CONNECT to the http ports of the targets, not only to 443.
 */
public class PinnedHttpProxy extends HttpProxy
{
    public PinnedHttpProxy(String host, int port)
    {
        super(host, port);
    }

    @Override
    public boolean requiresTunnel(Origin serverOrigin)
    {
        return serverOrigin.getTag() instanceof PinnedTarget || super.requiresTunnel(serverOrigin);
    }
}
