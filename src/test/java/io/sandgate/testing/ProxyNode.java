package io.sandgate.testing;

/**
 * A forward proxy on loopback that a test lists as an egress node: the in-process
 * {@link ForwardProxy} or the real {@link Tinyproxy}, interchangeable in a pool.
 */
public interface ProxyNode
{
    /** The node's name, which also goes into the Via header it adds. */
    String name();

    /** The port, which stays the same while the proxy is stopped and started again. */
    int port();

    /** {@code 127.0.0.1:<port>}, as an egress node's address. */
    default String address()
    {
        return "127.0.0.1:" + port();
    }
}
