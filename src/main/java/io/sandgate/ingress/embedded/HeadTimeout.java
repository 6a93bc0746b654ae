package io.sandgate.ingress.embedded;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Closes a connection whose request head has not arrived whole within {@code server.head-timeout}
 * of its first byte, on every listener of the server it is a bean of ({@link ClientEndPoint}). The
 * idle timeout does not: it counts from the last byte, and a head trickled a byte at a time within it holds its connection, and a place under
 * every connection limit, for as long as its sender likes. nginx's {@code client_header_timeout} is
 * the same bound.
 *
 * <p>One sweep of the listeners' connections runs every quarter of the timeout (at most every
 * second), so a head is closed within that much after its deadline; nothing is done per request.
 * The connection is closed without an answer, as the idle timeout closes one: its request is not
 * whole, and the client may not be reading.</p>
 *
 * <p>Blank lines before a request line are a head's first bytes too (RFC 9112, section 2.2, has a
 * server ignore them): trickled, they would hold the connection as long as they came within the
 * idle timeout. Those that come with a request, as some clients send after a body, end with it.</p>
 */
public final class HeadTimeout extends AbstractLifeCycle implements Runnable
{
    private final Server server;
    private final long timeoutNanos;
    private final long periodMillis;
    private final Counter closed;
    private volatile Scheduler.Task next;

    public HeadTimeout(Server server, Duration timeout, MeterRegistry registry)
    {
        if (timeout.isNegative() || timeout.isZero())
            throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
        this.server = server;
        this.timeoutNanos = timeout.toNanos();
        this.periodMillis = Math.max(10, Math.min(1000, timeout.toMillis() / 4));
        this.closed = Counter.builder("sandgate.requests.head-timeouts")
            .description("Connections closed because a request head was not whole within server.head-timeout of its first byte")
            .register(registry);
    }

    @Override
    protected void doStart() throws Exception
    {
        super.doStart();
        schedule();
    }

    @Override
    protected void doStop() throws Exception
    {
        Scheduler.Task task = next;
        if (task != null)
            task.cancel();
        super.doStop();
    }

    private void schedule()
    {
        next = server.getScheduler().schedule(this, periodMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void run()
    {
        try
        {
            sweep(System.nanoTime());
        }
        finally
        {
            if (isRunning())
                schedule();
        }
    }

    /** Closes the connections whose head has taken longer than the timeout by {@code now}. */
    void sweep(long now)
    {
        for (Connector connector : server.getConnectors())
        {
            if (!(connector instanceof AbstractConnector listener))
                continue;
            for (EndPoint endPoint : listener.getConnectedEndPoints())
            {
                // One closed already stays in the set until its selector has seen to it.
                if (endPoint.isOpen() && endPoint instanceof ClientEndPoint client && client.headNanos(now) > timeoutNanos)
                {
                    // Counted first: whoever sees the close sees it counted.
                    closed.increment();
                    endPoint.close(new TimeoutException("request head not whole within server.head-timeout"));
                }
            }
        }
    }
}
