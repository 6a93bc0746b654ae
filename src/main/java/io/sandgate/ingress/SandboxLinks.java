package io.sandgate.ingress;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import io.sandgate.net.IpLiteral;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.ClientConnectionFactory;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Transport;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Connections to sandboxes, kept per sandbox address ({@link Destination}) for the ingress face's
 * core front-end ({@link IngressHandler}): an idle one is taken when there is one (the last
 * returned first, whose buffers and caches are warm), a new one opened while the sandbox has fewer
 * than {@code ingress.max-connections-per-sandbox}, and beyond that the request waits for one, up to
 * {@value #MAX_WAITING} requests per sandbox, as Jetty's client queues them.
 *
 * <p>A connection waiting for an exchange closes after {@code ingress.destination-idle-timeout} (a
 * sweep finds it within half that again), and a destination goes with its last connection: pod
 * addresses come and go all day. An exchange may be silent for {@code ingress.idle-timeout} (a
 * noVNC page's SSE stream, a long download).</p>
 */
final class SandboxLinks extends ContainerLifeCycle
{
    /** What {@link #count} counts. */
    enum State
    {
        BUSY("busy"), IDLE("idle"), WAITING("waiting");

        private final String label;

        State(String label)
        {
            this.label = label;
        }

        String label()
        {
            return label;
        }
    }

    /** Requests that may wait for a connection to one sandbox; beyond, 503 at once. */
    static final int MAX_WAITING = 1024;

    private final ConcurrentMap<String, Destination> destinations = new ConcurrentHashMap<>();
    private final ClientConnector connector = new ClientConnector();
    private final int maxConnections;
    private final Executor executor;
    private final ByteBufferPool pool;
    private final Scheduler scheduler;
    private final long poolIdleTimeout;
    private volatile Scheduler.Task sweep;

    /**
     * @param idleTimeout how long an exchange may go without a byte either way
     * @param poolIdleTimeout how long a connection may wait for an exchange before it closes
     */
    SandboxLinks(Executor executor, Scheduler scheduler, ByteBufferPool pool, Duration connectTimeout, Duration idleTimeout,
                 Duration poolIdleTimeout, int maxConnections)
    {
        this.executor = executor;
        this.scheduler = scheduler;
        this.poolIdleTimeout = poolIdleTimeout.toMillis();
        this.pool = pool;
        this.maxConnections = maxConnections;
        connector.setExecutor(executor);
        connector.setScheduler(scheduler);
        connector.setByteBufferPool(pool);
        connector.setConnectTimeout(connectTimeout);
        connector.setIdleTimeout(idleTimeout);
        // One per core, as on the server side: each selector reads and forwards the answers itself.
        connector.setSelectors(Runtime.getRuntime().availableProcessors());
        addBean(connector);
    }

    @Override
    protected void doStart() throws Exception
    {
        super.doStart();
        scheduleSweep();
    }

    @Override
    protected void doStop() throws Exception
    {
        Scheduler.Task task = sweep;
        if (task != null)
            task.cancel();
        super.doStop();
    }

    /**
     * Links wait in their pools for at most {@code ingress.destination-idle-timeout} and half of it
     * again: one timer for all of them, rather than one per link reset on every exchange.
     */
    private void scheduleSweep()
    {
        if (isStarting() || isStarted())
            sweep = scheduler.schedule(this::sweep, Math.max(1, poolIdleTimeout / 2), TimeUnit.MILLISECONDS);
    }

    private void sweep()
    {
        try
        {
            long cutoff = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(poolIdleTimeout);
            for (Destination destination : destinations.values())
            {
                // A closed link leaves its destination, and takes the destination along if it was the last.
                for (SandboxLink link : destination.expired(cutoff))
                    link.close();
            }
        }
        finally
        {
            // Whatever one link's close threw, the next sweep still comes.
            scheduleSweep();
        }
    }

    /** Connections busy or idle, or requests waiting for one, over all sandboxes: for the metrics, read when scraped. */
    int count(State state)
    {
        int count = 0;
        for (Destination destination : destinations.values())
            count += destination.count(state);
        return count;
    }

    /**
     * Sends an exchange to the sandbox at a route's address, on an idle connection, a new one, or the next one free.
     *
     * @param fresh whether to skip idle connections: the exchange is tried again after the sandbox closed one as it was taken, and the others are as old
     */
    void send(Route route, SandboxLink.Exchange exchange, boolean fresh)
    {
        while (!destinations.computeIfAbsent(route.authority(), authority -> new Destination(authority, route)).send(exchange, fresh))
        {
            // The destination lost its last connection meanwhile and is gone from the map: take its successor.
        }
    }

    /** The connections to one sandbox address. */
    final class Destination
    {
        private final String authority;
        private final Route route;
        /** Idle links, the last returned first. */
        private final ArrayDeque<SandboxLink> idle = new ArrayDeque<>();
        private final ArrayDeque<SandboxLink.Exchange> waiting = new ArrayDeque<>();
        /** Links opening, busy or idle. */
        private int links;
        private boolean retired;

        Destination(String authority, Route route)
        {
            this.authority = authority;
            this.route = route;
        }

        /** @return false if this destination is gone from the map and takes nothing more */
        boolean send(SandboxLink.Exchange exchange, boolean fresh)
        {
            SandboxLink link;
            boolean open = false;
            synchronized (this)
            {
                if (retired)
                    return false;
                link = fresh ? null : idle.pollFirst();
                if (link == null && links < maxConnections)
                {
                    links++;
                    open = true;
                }
                else if (link == null && waiting.size() < MAX_WAITING)
                {
                    waiting.addLast(exchange);
                    return true;
                }
            }
            if (link != null)
                link.send(exchange);
            else if (open)
                open(exchange);
            else
                exchange.failed(new GatewayException(HttpStatus.SERVICE_UNAVAILABLE_503, "sandbox_busy",
                    "the sandbox has too many requests waiting for a connection"), false);
            return true;
        }

        /** A link that finished an exchange and can carry another: to the next waiting request, or idle. */
        void release(SandboxLink link)
        {
            SandboxLink.Exchange next;
            synchronized (this)
            {
                next = waiting.pollFirst();
                if (next == null)
                {
                    link.idleSince = System.nanoTime();
                    idle.addFirst(link);
                    return;
                }
            }
            link.send(next);
        }

        /** Takes out the links idle since before {@code cutoff}: the oldest, at the end of the deque. */
        private synchronized List<SandboxLink> expired(long cutoff)
        {
            List<SandboxLink> expired = null;
            while (!idle.isEmpty() && idle.peekLast().idleSince - cutoff <= 0)
            {
                if (expired == null)
                    expired = new ArrayList<>();
                expired.add(idle.pollLast());
            }
            return expired == null ? List.of() : expired;
        }

        private synchronized int count(State state)
        {
            return switch (state)
            {
                case BUSY -> links - idle.size();
                case IDLE -> idle.size();
                case WAITING -> waiting.size();
            };
        }

        /** @return whether the link was idle here, and now is not */
        synchronized boolean takeBack(SandboxLink link)
        {
            return idle.remove(link);
        }

        /** A link closed: its place goes to a waiting request, or the destination goes with its last link. */
        void closed(SandboxLink link)
        {
            SandboxLink.Exchange next = null;
            synchronized (this)
            {
                idle.remove(link);
                links--;
                if (!waiting.isEmpty())
                {
                    links++;
                    next = waiting.pollFirst();
                }
                else if (links == 0)
                {
                    retired = true;
                    destinations.remove(authority, this);
                }
            }
            if (next != null)
                open(next);
        }

        private void open(SandboxLink.Exchange exchange)
        {
            // Pod addresses are IP literals, which need no lookup; a host name is looked up off the selector.
            Optional<InetAddress> literal = IpLiteral.parse(route.host());
            if (literal.isPresent())
                connect(new InetSocketAddress(literal.get(), route.port()), exchange);
            else
                executor.execute(() -> connect(new InetSocketAddress(route.host(), route.port()), exchange));
        }

        /** @param address resolved, or unresolved when the name has no address, which the connect then fails with */
        private void connect(InetSocketAddress address, SandboxLink.Exchange exchange)
        {
            SandboxLink[] opened = new SandboxLink[1];
            Map<String, Object> context = new HashMap<>();
            context.put(Transport.CONTEXT_KEY, Transport.TCP_IP);
            context.put(ClientConnectionFactory.CONTEXT_KEY, (ClientConnectionFactory)(endPoint, ignored) ->
                opened[0] = new SandboxLink(endPoint, executor, this, pool));
            context.put(ClientConnector.CONNECTION_PROMISE_CONTEXT_KEY, Promise.<SandboxLink>from(link -> link.send(exchange), failure ->
            {
                // A link that was made closes, and gives its place back then.
                if (opened[0] == null)
                    closed(null);
                exchange.failed(failure, false);
            }));
            connector.connect(address, context);
        }
    }
}
