package io.sandgate.egress;

import org.eclipse.jetty.client.HttpProxy;

/**
 * An egress node as the HTTP proxy of a {@link PinnedHttpClient}. Requests for a
 * {@link PinnedTarget} name its checked address, never its name, so the node has nothing to
 * resolve:
 * <ul>
 *   <li>https goes through a {@code CONNECT <address>:<port>} tunnel; inside it, TLS and
 *       {@code Host} carry the name.</li>
 *   <li>plain http goes in absolute form, {@code GET http://<address>:<port>/path}, with a
 *       {@code Host} equal to that authority.</li>
 * </ul>
 *
 * <p>Why plain http is not tunnelled too, which would let {@code Host} carry the name: stock squid
 * and tinyproxy, like most nodes, allow CONNECT to 443 only, and forward plain http only in
 * absolute form. Why {@code Host} is the address and not the name: RFC 9112 section 3.2.2 has the
 * client send a {@code Host} identical to the absolute URI's authority, and the proxy ignore any
 * other and derive one from the URI (squid and tinyproxy rewrite it; Jetty's proxy answers 400 when
 * the two differ). Putting the name in the URI instead would have the node resolve it again, which
 * is exactly what the SSRF guard's pinning forbids (DNS rebinding). So a plain-http target sees its
 * checked address as {@code Host}; a target that needs its name must be reached over https.
 */
public class PinnedHttpProxy extends HttpProxy
{
    public PinnedHttpProxy(String host, int port)
    {
        super(host, port);
    }
}
