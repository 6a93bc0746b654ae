package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.net.Cidr;
import io.sandgate.web.ClientInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The accounting behind {@code server.max-connections-per-client}, on real accepted channels: a
 * place is taken at admission and given back once, whether the channel closes or Jetty fails to
 * take it after the accept; what was never counted gives nothing back.
 */
class ClientConnectionLimitTest
{
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<SocketChannel> channels = new ArrayList<>();
    private ServerSocketChannel listener;

    @BeforeEach
    void listen() throws IOException
    {
        listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    }

    @AfterEach
    void close() throws IOException
    {
        for (SocketChannel channel : channels)
            channel.close();
        listener.close();
    }

    @Test
    void aPlaceIsGivenBackOnce_whenTheChannelCloses_orItsAcceptFails() throws IOException
    {
        ClientConnectionLimit limit = new ClientConnectionLimit(2, new ClientInfo(List.of()), registry);
        SocketChannel first = accepted();
        SocketChannel second = accepted();
        SocketChannel third = accepted();
        assertTrue(limit.admit(first));
        assertTrue(limit.admit(second));
        assertFalse(limit.admit(third));
        assertEquals(1, registry.get("sandgate.connections.refused").counter().count());
        // The refused one was never counted: its close gives nothing back.
        limit.onClosed(third);
        assertEquals(2, limit.count("127.0.0.1"));

        limit.onAcceptFailed(first, new IOException("no selector"));
        limit.onClosed(first);
        assertEquals(1, limit.count("127.0.0.1"));
        limit.onClosed(second);
        limit.onClosed(second);
        assertEquals(0, limit.count("127.0.0.1"));
        assertEquals(0, registry.get("sandgate.connections.counted").gauge().value());
    }

    @Test
    void aTrustedProxysConnections_areNotCounted() throws IOException
    {
        ClientConnectionLimit limit = new ClientConnectionLimit(1, new ClientInfo(List.of(Cidr.parse("127.0.0.0/8"))), registry);
        for (int i = 0; i < 3; i++)
            assertTrue(limit.admit(accepted()));
        assertEquals(0, limit.count("127.0.0.1"));
    }

    /** The attack: a host taking a new IPv6 address from its /64 for every connection. */
    @Test
    void ipv6PeersOfOneNetwork_countAsOneClient() throws IOException
    {
        ClientConnectionLimit limit = new ClientConnectionLimit(2, new ClientInfo(List.of()), registry);
        assertTrue(limit.admit(accepted(), InetAddress.getByName("2001:db8:0:7::1")));
        assertTrue(limit.admit(accepted(), InetAddress.getByName("2001:db8:0:7::2")));

        assertFalse(limit.admit(accepted(), InetAddress.getByName("2001:db8:0:7:ffff::3")));
        assertTrue(limit.admit(accepted(), InetAddress.getByName("2001:db8:0:8::1")), "the next /64 is another client");
        assertEquals(2, limit.count("2001:db8:0:7::42"));
    }

    /**
     * The internal listener's clients are pods, each with its own address of a node's /64: counted
     * one by one there, while the public listener still counts a /64 as one client, and both
     * listeners share one count for one key and give a place back wherever the channel closes.
     */
    @Test
    void theInternalListenersView_countsIpv6PeersByItsOwnPrefix_inTheSameCounts() throws IOException
    {
        ClientConnectionLimit limit = new ClientConnectionLimit(2, new ClientInfo(List.of()), registry);
        ClientConnectionLimit internal = limit.counting(new ClientInfo(List.of(), 128));
        for (String pod : List.of("2001:db8:0:7::1", "2001:db8:0:7::2", "2001:db8:0:7::3"))
        {
            assertTrue(internal.admit(accepted(), InetAddress.getByName(pod)), pod);
            assertTrue(internal.admit(accepted(), InetAddress.getByName(pod)), pod);
        }
        SocketChannel third = accepted();
        assertFalse(internal.admit(third, InetAddress.getByName("2001:db8:0:7::1")), "each pod is held to the limit");
        assertTrue(limit.admit(accepted(), InetAddress.getByName("2001:db8:0:7::9")));
        assertTrue(limit.admit(accepted(), InetAddress.getByName("2001:db8:0:7::a")));
        assertFalse(limit.admit(accepted(), InetAddress.getByName("2001:db8:0:7::b")), "the public listener counts the /64");

        SocketChannel v4 = accepted();
        assertTrue(limit.admit(v4, InetAddress.getByName("192.0.2.7")));
        assertTrue(internal.admit(accepted(), InetAddress.getByName("192.0.2.7")));
        assertFalse(internal.admit(accepted(), InetAddress.getByName("192.0.2.7")), "an IPv4 client is one count on both listeners");
        internal.onClosed(v4);
        assertEquals(1, limit.count("192.0.2.7"));
        assertEquals(2, internal.count("2001:db8:0:7::2"));
        assertEquals(3, registry.get("sandgate.connections.refused").counter().count(), 0.0, "one counter for both");
    }

    /** The server side of a new loopback connection. */
    private SocketChannel accepted() throws IOException
    {
        channels.add(SocketChannel.open(listener.getLocalAddress()));
        SocketChannel accepted = listener.accept();
        channels.add(accepted);
        return accepted;
    }
}
