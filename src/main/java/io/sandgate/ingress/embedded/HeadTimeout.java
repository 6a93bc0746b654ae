package io.sandgate.ingress.embedded;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Closes a connection whose request head has not arrived whole within {@code server.head-timeout}
 * of its first byte, on every listener of the server it is a bean of: the gateway's own browser
 * connection and Jetty's alike ({@link RequestPhase}). The idle timeout does not: it counts from the
 * last byte, and a head trickled a byte at a time within it holds its connection, and a place under
 * every connection limit, for as long as its sender likes. nginx's {@code client_header_timeout} is
 * the same bound.
 *
 * <p>One sweep of the listeners' connections runs every quarter of the timeout (at most every
 * second), so a head is closed within that much after its deadline; nothing is done per request.
 * The connection is closed without an answer, as the idle timeout closes one: its request is not
 * whole, and the client may not be reading.</p>
 *
 * <p>Blank lines before a request line are a head's first bytes too. The parser ignores them, as
 * RFC 9112 has it, staying at its start and restarting its clock with each: a line every minute
 * kept a connection for days (8 KB of them), a waiting one that the connection limit closes last,
 * as it seems to have just begun to wait. The sweep remembers when it first saw a connection with
 * nothing but blank lines since its last request; one more line after the deadline closes it. A
 * single burst of them, as some clients send after a request's body, is left to the idle
 * timeout.</p>
 */
public final class HeadTimeout extends AbstractLifeCycle implements Runnable
{
    private final Server server;
    private final long timeoutNanos;
    private final long periodMillis;
    private final Counter closed;
    private volatile Scheduler.Task next;
    /** Connections seen with only blank lines since their last request, as the last sweep saw them; the sweeps' own, one at a time. */
    private Map<Connection, Padded> padded = new HashMap<>();

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
        Map<Connection, Padded> stillPadded = new HashMap<>();
        for (Connector connector : server.getConnectors())
        {
            if (!(connector instanceof AbstractConnector listener))
                continue;
            for (EndPoint endPoint : listener.getConnectedEndPoints())
            {
                // One closed already stays in the set until its selector has seen to it.
                if (!endPoint.isOpen())
                    continue;
                Connection connection = endPoint.getConnection();
                long head = RequestPhase.headNanos(connection, now);
                if (head < 0)
                    head = paddedFor(connection, now, stillPadded);
                if (head > timeoutNanos)
                {
                    // Counted first: whoever sees the close sees it counted.
                    closed.increment();
                    endPoint.close(new TimeoutException("request head not whole within server.head-timeout"));
                }
            }
        }
        padded = stillPadded;
    }

    /**
     * How long a connection has been sending blank lines instead of a request line, from when a
     * sweep first saw them; -1 while it sends none, or only the one burst a sweep first saw.
     */
    private long paddedFor(Connection connection, long now, Map<Connection, Padded> stillPadded)
    {
        long last = RequestPhase.paddedNanos(connection);
        if (last == 0)
            return -1;
        long requests = connection.getMessagesIn();
        Padded seen = padded.get(connection);
        // Blank lines after another request are a new wait. (Jetty's connection counts its requests;
        // the gateway's own counts none, but serves only GETs, after which no client sends blank lines.)
        if (seen == null || seen.requests() != requests)
            seen = new Padded(requests, last);
        stillPadded.put(connection, seen);
        return last == seen.first() ? -1 : now - seen.first();
    }

    /** A connection's requests so far, and the time of the blank lines a sweep first saw after them. */
    private record Padded(long requests, long first)
    {
    }
}
