package io.sandgate.egress;

import java.util.Map;
import javax.net.ssl.SSLEngine;

import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.io.ssl.SslClientConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * TLS to a {@link PinnedTarget}: the connection goes to the checked address, but SNI and the
 * certificate's host name check use the target's name, as they would had the client connected by
 * name. Without this Jetty would verify the certificate against the IP address, which a public
 * server's certificate does not name (and which would prove nothing about the name).
 *
 * <p>Jetty asks an {@link SslClientConnectionFactory.SslEngineFactory} for each engine with the
 * connection context, whose destination carries the request tag. The peer it passes is the
 * address from the request URI, also for a tunnel through an HTTP proxy; only when that is the
 * pinned address and port is it replaced, so TLS to anything else (a TLS proxy) is unchanged.
 * Everything else, trust store included, is configured as on any {@link SslContextFactory.Client};
 * endpoint identification stays {@code HTTPS}.
 */
public class PinnedSslContextFactory extends SslContextFactory.Client implements SslClientConnectionFactory.SslEngineFactory
{
    @Override
    public SSLEngine newSslEngine(String host, int port, Map<String, Object> context)
    {
        if (context.get(Destination.CONTEXT_KEY) instanceof Destination destination
            && destination.getOrigin().getTag() instanceof PinnedTarget target
            && target.isAddressOf(host, port))
            return newSSLEngine(target.name(), port);
        return newSSLEngine(host, port);
    }
}
