package io.sandgate.testing;

import java.net.URI;

import io.sandgate.Sandgate;

/** A gateway a test talks to: its addresses on loopback and the running {@link Sandgate}. */
public interface Gateway
{
    /** The HTTP port (ingress, and every other face unless an internal port is set). */
    int port();

    /** The internal port (MCP, egress, admin, metrics) when {@code server.internal-port} is set, else {@link #port()}. */
    int internalPort();

    /** @param path absolute, on the internal port: {@code /admin/routes} */
    default URI internalUri(String path)
    {
        return URI.create("http://127.0.0.1:" + internalPort()).resolve(path);
    }

    /** The forward-proxy port, or -1 when {@code egress.forward-proxy-port} is not set. */
    int forwardProxyPort();

    Sandgate sandgate();

    /** The connections open on all of the gateway's listeners now: what a leak of connections would grow. */
    int connectedEndPoints();

    /** {@code http://127.0.0.1:<port>}, without a trailing slash. */
    default URI uri()
    {
        return URI.create("http://127.0.0.1:" + port());
    }

    /** @param path absolute, with its query if any: {@code /vnc/1/?autoconnect=1} */
    default URI uri(String path)
    {
        return uri().resolve(path);
    }

    /** @param path absolute: {@code /vnc/1/websockify} */
    default URI wsUri(String path)
    {
        return URI.create("ws://127.0.0.1:" + port()).resolve(path);
    }
}
