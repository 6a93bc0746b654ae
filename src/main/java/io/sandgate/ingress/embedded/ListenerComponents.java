package io.sandgate.ingress.embedded;

import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.server.Components;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.util.Attributes;
import org.eclipse.jetty.util.thread.Scheduler;
import org.eclipse.jetty.util.thread.ThreadPool;

/**
 * The server's parts as a request on {@link BrowserConnection} offers them, which Jetty's error
 * pages take their buffers from.
 *
 * @param cache the connection's own attributes
 */
record ListenerComponents(Connector connector, Attributes cache) implements Components
{
    @Override
    public ByteBufferPool getByteBufferPool()
    {
        return connector.getByteBufferPool();
    }

    @Override
    public Scheduler getScheduler()
    {
        return connector.getScheduler();
    }

    @Override
    public ThreadPool getThreadPool()
    {
        return connector.getServer().getThreadPool();
    }

    @Override
    public Attributes getCache()
    {
        return cache;
    }
}
