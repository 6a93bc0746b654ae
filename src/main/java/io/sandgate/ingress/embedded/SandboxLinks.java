package io.sandgate.ingress.embedded;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import io.sandgate.ingress.Route;
import io.sandgate.net.IpLiteral;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Connections to sandboxes, kept per sandbox address ({@link Destination}) for the ingress face's
 * core front-end ({@link IngressHandler}): an idle one is taken when there is one (one on the
 * browser connection's selector first, see {@link IngressConnector}; the last returned first, whose
 * buffers and caches are warm), a new one opened, on that selector, while the sandbox has fewer
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
    private final IngressConnector connector;
    private final int lanes;
    private final int maxConnections;
    private final long idleTimeout;
    private final Executor executor;
    private final ByteBufferPool pool;
    private final Scheduler scheduler;
    private final long poolIdleTimeout;
    private volatile Scheduler.Task sweep;

    /**
     * @param idleTimeout how long an exchange may go without a byte either way
     * @param poolIdleTimeout how long a connection may wait for an exchange before it closes
     */
    SandboxLinks(IngressConnector connector, Executor executor, Scheduler scheduler, ByteBufferPool pool, Duration connectTimeout,
                 Duration idleTimeout, Duration poolIdleTimeout, int maxConnections)
    {
        this.connector = connector;
        this.lanes = connector.lanes();
        this.executor = executor;
        this.scheduler = scheduler;
        this.poolIdleTimeout = poolIdleTimeout.toMillis();
        this.idleTimeout = idleTimeout.toMillis();
        this.pool = pool;
        this.maxConnections = maxConnections;
        connector.setConnectTimeout(connectTimeout.toMillis());
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
        // The links are the connector's endpoints, closed when it stops; a handler stopped on its own closes its idle ones.
        long now = System.nanoTime();
        for (Destination destination : destinations.values())
        {
            for (SandboxLink link : destination.expired(now))
                link.close();
        }
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
        /** Idle links per lane (the connector's selector they are on), the last returned first. */
        private final ArrayDeque<SandboxLink>[] idle;
        private int idleCount;
        private final ArrayDeque<SandboxLink.Exchange> waiting = new ArrayDeque<>();
        /** Links opening, busy or idle. */
        private int links;
        private boolean retired;

        Destination(String authority, Route route)
        {
            this.authority = authority;
            this.route = route;
            @SuppressWarnings("unchecked")
            ArrayDeque<SandboxLink>[] perLane = new ArrayDeque[lanes];
            for (int i = 0; i < lanes; i++)
                perLane[i] = new ArrayDeque<>();
            this.idle = perLane;
        }

        /**
         * Takes an idle link on the browser connection's lane first, then another lane's rather than
         * open one more connection to the sandbox.
         *
         * @return false if this destination is gone from the map and takes nothing more
         */
        boolean send(SandboxLink.Exchange exchange, boolean fresh)
        {
            int lane = IngressConnector.lane(exchange.request());
            SandboxLink link;
            boolean open = false;
            synchronized (this)
            {
                if (retired)
                    return false;
                link = fresh ? null : pollIdle(lane);
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
                    idle[link.lane()].addFirst(link);
                    idleCount++;
                    return;
                }
            }
            link.send(next);
        }

        private SandboxLink pollIdle(int lane)
        {
            if (idleCount == 0)
                return null;
            SandboxLink link = lane >= 0 ? idle[lane].pollFirst() : null;
            for (int i = 0; link == null && i < lanes; i++)
                link = idle[i].pollFirst();
            if (link != null)
                idleCount--;
            return link;
        }

        /** Takes out the links idle since before {@code cutoff}: the oldest, at the end of each lane's deque. */
        private synchronized List<SandboxLink> expired(long cutoff)
        {
            List<SandboxLink> expired = null;
            for (ArrayDeque<SandboxLink> lane : idle)
            {
                while (!lane.isEmpty() && lane.peekLast().idleSince - cutoff <= 0)
                {
                    if (expired == null)
                        expired = new ArrayList<>();
                    expired.add(lane.pollLast());
                    idleCount--;
                }
            }
            return expired == null ? List.of() : expired;
        }

        private synchronized int count(State state)
        {
            return switch (state)
            {
                case BUSY -> links - idleCount;
                case IDLE -> idleCount;
                case WAITING -> waiting.size();
            };
        }

        /** @return whether the link was idle here, and now is not */
        synchronized boolean takeBack(SandboxLink link)
        {
            if (!idle[link.lane()].remove(link))
                return false;
            idleCount--;
            return true;
        }

        /** A link closed: its place goes to a waiting request, or the destination goes with its last link. */
        void closed(SandboxLink link)
        {
            SandboxLink.Exchange next = null;
            synchronized (this)
            {
                if (link != null && idle[link.lane()].remove(link))
                    idleCount--;
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

        /** On the lane of the browser connection the exchange came on. */
        private void open(SandboxLink.Exchange exchange)
        {
            int lane = IngressConnector.lane(exchange.request());
            // Pod addresses are IP literals, which need no lookup; a host name is looked up off the selector.
            Optional<InetAddress> literal = IpLiteral.parse(route.host());
            if (literal.isPresent())
                connect(new InetSocketAddress(literal.get(), route.port()), exchange, lane);
            else
                executor.execute(() -> connect(new InetSocketAddress(route.host(), route.port()), exchange, lane));
        }

        /** @param address resolved, or unresolved when the name has no address, which the connect then fails with */
        private void connect(InetSocketAddress address, SandboxLink.Exchange exchange, int lane)
        {
            SandboxLink[] opened = new SandboxLink[1];
            connector.dial(lane, address, endPoint ->
            {
                endPoint.setIdleTimeout(idleTimeout);
                opened[0] = new SandboxLink(endPoint, executor, this, pool);
                return opened[0];
            }, Promise.<Connection>from(link -> ((SandboxLink)link).send(exchange), failure ->
            {
                // A link that was made closes, and gives its place back then.
                if (opened[0] == null)
                    closed(null);
                exchange.failed(failure, false);
            }));
        }
    }
}
