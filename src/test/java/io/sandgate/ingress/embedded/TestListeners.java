package io.sandgate.ingress.embedded;

import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.List;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.web.ClientInfo;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.thread.Scheduler;

/** Listeners of the embedded runner's kind for tests of its endpoints, on real sockets. */
final class TestListeners
{
    /** Makes a listener's endpoints. */
    @FunctionalInterface
    interface EndPoints
    {
        SocketChannelEndPoint make(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler);
    }

    private TestListeners()
    {
    }

    /** A listener on 127.0.0.1 with one selector (every connection's events through one select loop), added to {@code server}. */
    static ListenerConnector oneSelector(Server server, EndPoints endPoints)
    {
        ClientConnectionLimit limit = new ClientConnectionLimit(1024, new ClientInfo(List.of()), new SimpleMeterRegistry());
        ListenerConnector connector = new ListenerConnector(server, 1, limit, new ServerConnectionLimit(1024, new SimpleMeterRegistry()), new HttpConnectionFactory())
        {
            @Override
            protected SocketChannelEndPoint newEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key)
            {
                SocketChannelEndPoint endPoint = endPoints.make(channel, selector, key, getScheduler());
                endPoint.setIdleTimeout(getIdleTimeout());
                return endPoint;
            }
        };
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        return connector;
    }
}
