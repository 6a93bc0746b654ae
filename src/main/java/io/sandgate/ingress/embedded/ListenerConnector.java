package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.IO;

/**
 * A listener of the embedded runner: each connection it accepts is admitted by a
 * {@link ClientConnectionLimit}, then by the {@link ServerConnectionLimit} of all the listeners,
 * before Jetty sees it, so that one refused costs no selector registration, buffer or thread. Its
 * connections stay in the selector's epoll set while they wait for an answer
 * ({@link KeptReadEndPoint}).
 */
public class ListenerConnector extends ServerConnector
{
    private final ClientConnectionLimit limit;
    private final ServerConnectionLimit serverLimit;

    public ListenerConnector(Server server, int selectors, ClientConnectionLimit limit, ServerConnectionLimit serverLimit, ConnectionFactory factory)
    {
        // One acceptor thread, which runs accept(int) below; with none, Jetty would accept on its
        // selectors, through a path that bypasses the admission.
        super(server, 1, selectors, factory);
        this.limit = limit;
        this.serverLimit = serverLimit;
        // Jetty reports each accepted channel's failure or close to its accept listeners.
        getSelectorManager().addEventListener(limit);
        getSelectorManager().addEventListener(serverLimit);
    }

    /**
     * ServerConnector's accept (its own hand-over to the selectors is private), with the admission
     * between the accept and the selector. Jetty's accept listeners cannot refuse a connection: they
     * are told of sandbox connections the ingress connector dials too.
     */
    @Override
    public void accept(int acceptorID) throws IOException
    {
        if (!(getTransport() instanceof ServerSocketChannel server) || !server.isOpen())
            return;
        SocketChannel channel = server.accept();
        if (channel == null)
            return;
        if (!limit.admit(channel))
        {
            IO.close(channel);
            return;
        }
        // After the client's own cap: a connection it refuses makes no other close.
        if (!serverLimit.admit(channel, getServer()))
        {
            IO.close(channel);
            limit.release(channel);
            return;
        }
        try
        {
            channel.configureBlocking(false);
            configure(channel.socket());
            getSelectorManager().accept(channel);
        }
        catch (IOException | RuntimeException x)
        {
            IO.close(channel);
            limit.release(channel);
            serverLimit.release(channel);
            throw x;
        }
    }

    @Override
    protected SocketChannelEndPoint newEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key)
    {
        KeptReadEndPoint endPoint = new KeptReadEndPoint(channel, selector, key, getScheduler());
        endPoint.setIdleTimeout(getIdleTimeout());
        return endPoint;
    }
}
