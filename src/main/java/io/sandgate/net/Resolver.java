package io.sandgate.net;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * Turns a host name into the addresses it stands for. One interface so that the SSRF check can be
 * fed answers in tests (rebinding, split answers) without a DNS server.
 */
@FunctionalInterface
public interface Resolver
{
    /** The JVM's resolver (and its cache, see {@code networkaddress.cache.ttl}). */
    Resolver SYSTEM = host -> List.of(InetAddress.getAllByName(host));

    /**
     * All addresses of {@code host}, in the order a client would try them.
     *
     * @throws UnknownHostException when the name does not resolve
     */
    List<InetAddress> resolve(String host) throws UnknownHostException;
}
