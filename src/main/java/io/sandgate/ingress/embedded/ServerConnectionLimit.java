package io.sandgate.ingress.embedded;

import java.lang.management.ManagementFactory;
import java.nio.channels.SelectableChannel;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import com.sun.management.UnixOperatingSystemMXBean;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;

/**
 * Caps the connections the embedded runner's listeners hold open at once, all clients together
 * ({@code server.max-connections}), below the process's file descriptor limit: past that limit the
 * accept itself fails, and every client, health checks included, is shut out until connections
 * close. The per-client cap ({@link ClientConnectionLimit}) does not prevent it: many addresses
 * under their caps make up the rest.
 *
 * <p>At the cap, a new connection is not refused while others only wait on their clients: the
 * ones that have waited longest (idle between requests, nothing received yet, or a head not yet
 * whole, {@link RequestPhase}) are closed to admit it, as nginx drains its reusable connections
 * when it has no free one, a few at a time (up to 32, or an eighth of those waiting). A connection
 * that is served, or carries a WebSocket or a tunnel, is never closed for this. A new connection is
 * closed as it is accepted only when none waits.</p>
 *
 * <p>Jetty's {@code NetworkConnectionLimit} counts through the selector manager's accept events,
 * which the public listener also raises for the connections it dials to sandboxes, and only stops
 * accepting at its limit: the idle connections that fill it stay until their idle timeout. This
 * counts what {@link ListenerConnector} admits, as the per-client cap does, and reads which
 * connections wait from the connectors' own endpoint sets.</p>
 */
public final class ServerConnectionLimit implements ConnectionPlaces
{
    /** At most this many are closed for one admission, as nginx drains at most 32. */
    private static final int MOST_EVICTED = 32;
    /** Of the process's descriptors, what is left for its own files (jars, logs, Redis, the selectors) before connections. */
    private static final int MIN_RESERVED_DESCRIPTORS = 256;
    /** The cap where the descriptor limit cannot be read. */
    private static final int UNKNOWN_DESCRIPTORS_CAP = 10_000;

    private final int max;
    /** The channels admitted and open, of every listener; one closed here leaves at once. */
    private final Set<SelectableChannel> open = ConcurrentHashMap.newKeySet();
    private final Counter evicted;
    private final Counter rejected;

    /** @param max connections the listeners may hold open at once */
    public ServerConnectionLimit(int max, MeterRegistry registry)
    {
        if (max < 1)
            throw new IllegalArgumentException("max: " + max + " (expected: > 0)");
        this.max = max;
        this.evicted = Counter.builder("sandgate.connections.evicted")
            .description("Connections waiting on their client, closed to admit a new one at server.max-connections")
            .register(registry);
        this.rejected = Counter.builder("sandgate.connections.rejected")
            .description("Connections closed as accepted at server.max-connections, no open one waiting on its client")
            .register(registry);
        Gauge.builder("sandgate.connections.open", open, Set::size)
            .description("Connections the listeners hold open, against server.max-connections")
            .register(registry);
    }

    public int max()
    {
        return max;
    }

    /**
     * The default cap for a process allowed {@code descriptors} file descriptors: half of what is
     * left after a tenth of them (at least 256) for the process's own files, since each connection
     * may hold one to its upstream (a sandbox, an egress target or node, an MCP server).
     */
    public static int forDescriptors(long descriptors)
    {
        long reserved = Math.max(MIN_RESERVED_DESCRIPTORS, descriptors / 10);
        return (int)Math.max(16, Math.min(Integer.MAX_VALUE, (descriptors - reserved) / 2));
    }

    /** The process's file descriptor limit, as the JVM reports it; -1 where it cannot. */
    public static long descriptorLimit()
    {
        return ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean unix ? unix.getMaxFileDescriptorCount() : -1;
    }

    /** The default cap for this process: {@link #forDescriptors} of its limit, or a fixed one where the limit cannot be read. */
    public static int forThisProcess()
    {
        long descriptors = descriptorLimit();
        return descriptors > 0 ? forDescriptors(descriptors) : UNKNOWN_DESCRIPTORS_CAP;
    }

    /**
     * Whether a connection just accepted by one of {@code server}'s listeners may be served: at the
     * cap, the connections that have waited longest on their clients are closed first; false, with
     * nothing counted, when none waits (the caller closes it). One admitted counts until
     * {@link #onClosed} or {@link #onAcceptFailed}.
     */
    public boolean admit(SelectableChannel channel, Server server)
    {
        if (open.size() >= max && !makeRoom(server))
        {
            rejected.increment();
            return false;
        }
        open.add(channel);
        return true;
    }

    /**
     * Closes the connections that have waited longest on their clients, a few of them.
     *
     * @return whether there is room now
     */
    private synchronized boolean makeRoom(Server server)
    {
        // Another listener's admission may have made room meanwhile.
        if (open.size() < max)
            return true;
        long now = System.nanoTime();
        PriorityQueue<Waiting> longest = new PriorityQueue<>(MOST_EVICTED + 1, Comparator.comparingLong(Waiting::millis));
        int waiting = 0;
        for (Connector connector : server.getConnectors())
        {
            if (!(connector instanceof AbstractConnector listener))
                continue;
            for (EndPoint endPoint : listener.getConnectedEndPoints())
            {
                // One closed already stays in the set until its selector has seen to it.
                long millis = endPoint.isOpen() && endPoint instanceof ClientEndPoint client ? client.waitedMillis(now) : -1;
                if (millis < 0)
                    continue;
                waiting++;
                longest.add(new Waiting(endPoint, millis));
                if (longest.size() > MOST_EVICTED)
                    longest.poll();
            }
        }
        int evict = Math.min(longest.size(), Math.max(1, waiting / 8));
        // The queue holds the longest waits, shortest first.
        while (longest.size() > evict)
            longest.poll();
        for (Waiting victim : longest)
        {
            if (victim.endPoint().getTransport() instanceof SelectableChannel channel)
                open.remove(channel);
            evicted.increment();
            victim.endPoint().close(new EvictedException());
        }
        return evict > 0;
    }

    /** Gives an admitted connection's place back; harmless for one never admitted or given back already. */
    @Override
    public void release(SelectableChannel channel)
    {
        open.remove(channel);
    }

    /** How many connections are admitted and open. */
    public int open()
    {
        return open.size();
    }

    private record Waiting(EndPoint endPoint, long millis)
    {
    }

    /** Why a connection waiting on its client was closed: another needed its place. */
    static final class EvictedException extends Exception
    {
        EvictedException()
        {
            super("closed to admit a new connection at server.max-connections", null, false, false);
        }
    }
}
