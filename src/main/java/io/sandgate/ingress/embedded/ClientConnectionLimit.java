package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.web.ClientCounts;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.ClientLimitFilter;

/**
 * Caps the connections one client holds open at once on the embedded runner's listeners
 * ({@code server.max-connections-per-client}). {@link ClientLimitFilter} caps requests in
 * progress, but an idle keep-alive connection, or an established WebSocket, is no request: without
 * this a client could hold a file descriptor and a connection's buffers per connection until the
 * process runs out, one idle timeout at a time. The client is the peer's address ({@link
 * ClientInfo#limitKey}: an IPv6 one by its network, a /64 by default), known at accept before any byte is read; a trusted proxy ({@code ingress.trusted-proxies}) is not counted, since
 * the connections of everyone behind it arrive from its address.
 *
 * <p>A connection counts from its accept until Jetty closes its channel, whatever protocol it
 * speaks by then: an upgraded WebSocket keeps counting. {@link ListenerConnector} asks
 * {@link #admit}; Jetty reports the end through this listener.</p>
 */
public final class ClientConnectionLimit implements ConnectionPlaces
{
    private final ClientCounts counts;
    private final ClientInfo clients;
    /** Each counted connection's client, to give its place back when the channel closes. */
    private final Map<SelectableChannel, String> admitted;
    private final Counter refused;

    /**
     * @param limit connections one client may hold open at once
     * @param clients which peers are trusted proxies
     */
    public ClientConnectionLimit(int limit, ClientInfo clients, MeterRegistry registry)
    {
        this.counts = new ClientCounts(limit);
        this.clients = clients;
        this.admitted = new ConcurrentHashMap<>();
        this.refused = Counter.builder("sandgate.connections.refused")
            .description("Connections closed as accepted because their client held server.max-connections-per-client open already")
            .register(registry);
        Gauge.builder("sandgate.connections.counted", admitted, Map::size)
            .description("Connections open that count against their client's server.max-connections-per-client")
            .register(registry);
    }

    private ClientConnectionLimit(ClientConnectionLimit counts, ClientInfo clients)
    {
        this.counts = counts.counts;
        this.clients = clients;
        this.admitted = counts.admitted;
        this.refused = counts.refused;
    }

    /**
     * This limit, with its counts, for a listener whose clients are known otherwise (the internal
     * listener's, an IPv6 one by its own prefix).
     */
    public ClientConnectionLimit counting(ClientInfo clients)
    {
        return new ClientConnectionLimit(this, clients);
    }

    /**
     * Whether a connection just accepted may be served: false, with nothing counted, when its
     * client holds the limit already (the caller closes it). A connection that is admitted counts
     * until {@link #onClosed} or {@link #onAcceptFailed}.
     */
    public boolean admit(SocketChannel channel)
    {
        InetSocketAddress peer = peer(channel);
        return peer == null || peer.getAddress() == null || admit(channel, peer.getAddress());
    }

    /** As {@link #admit(SocketChannel)}, for a channel whose peer is {@code address}. */
    boolean admit(SelectableChannel channel, InetAddress address)
    {
        if (clients.isTrusted(address))
            return true;
        String client = clients.limitKey(address);
        if (!counts.tryAcquire(client))
        {
            refused.increment();
            return false;
        }
        admitted.put(channel, client);
        return true;
    }

    /** The peer of a channel just accepted; null if it is gone already (Jetty will find it closed). */
    private static InetSocketAddress peer(SocketChannel channel)
    {
        try
        {
            SocketAddress address = channel.getRemoteAddress();
            return address instanceof InetSocketAddress inet ? inet : null;
        }
        catch (IOException x)
        {
            return null;
        }
    }

    /** Gives a counted connection's place back; harmless for one never counted or given back already. */
    @Override
    public void release(SelectableChannel channel)
    {
        String client = admitted.remove(channel);
        if (client != null)
            counts.release(client);
    }

    /** How many connections the client at {@code address} holds open and counted (an IPv6 one with its network). */
    public int count(String address)
    {
        return counts.count(clients.limitKey(address));
    }
}
