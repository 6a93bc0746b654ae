package io.sandgate.web;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Caps the requests one client has in progress at once ({@code server.max-concurrent-requests-per-client}),
 * so that one client cannot hold every exchange the gateway can carry; above the cap it is answered
 * 429 with {@code Retry-After}. The client is who the gateway can trust it is: an egress agent by its
 * internal token ({@link ClientIdentity}), otherwise its address ({@link ClientInfo#clientAddress},
 * an IPv6 one by its network, a /64 by default: {@link ClientInfo#limitKey}), which a peer can only name through
 * {@code X-Forwarded-For} when it is a trusted proxy.
 *
 * <p>A request counts from the moment it arrives until its exchange ends, asynchronous ones
 * included. Long-lived streams stop counting once they are established, so that they never lock a
 * client out of ordinary requests: a WebSocket counts only while its upgrade is in progress (its
 * exchange ends with the 101), and an MCP event stream is handed over by {@link #streamOpened} to the
 * MCP face's own cap on streams per client.
 */
public final class ClientLimitFilter implements Filter
{
    /** Seconds a refused client is told to wait. */
    private static final RequestAttribute<Slot> SLOT = RequestAttribute.of("client-slot", Slot.class);

    private final ClientCounts counts;
    private final ClientInfo clients;
    private final ClientIdentity identity;
    private final Counter refusedAddresses;
    private final Counter refusedAgents;

    /**
     * @param limit requests one client may have in progress at once
     * @param clients who the client is by address
     * @param identity who the client is when a face knows better than its address
     */
    public ClientLimitFilter(int limit, ClientInfo clients, ClientIdentity identity, MeterRegistry registry)
    {
        this.counts = new ClientCounts(limit);
        this.clients = clients;
        this.identity = identity;
        Gauge.builder("sandgate.clients.active", counts, ClientCounts::clients)
            .description("Clients with requests in progress").register(registry);
        this.refusedAddresses = refused(registry, "address");
        this.refusedAgents = refused(registry, "agent");
    }

    private ClientLimitFilter(ClientLimitFilter counts, ClientInfo clients)
    {
        this.counts = counts.counts;
        this.clients = clients;
        this.identity = counts.identity;
        this.refusedAddresses = counts.refusedAddresses;
        this.refusedAgents = counts.refusedAgents;
    }

    /**
     * This limit, with its counts, for a listener whose clients are known otherwise (the internal
     * listener's, an IPv6 one by its own prefix).
     */
    public ClientLimitFilter counting(ClientInfo clients)
    {
        return new ClientLimitFilter(this, clients);
    }

    private static Counter refused(MeterRegistry registry, String identity)
    {
        return Counter.builder("sandgate.clients.refused").tag("identity", identity)
            .description("Requests refused with 429 because their client had too many in progress").register(registry);
    }

    /**
     * The request has become a long-lived stream that its face limits on its own: it stops counting
     * against its client's requests. Harmless when the request was never counted or already stopped.
     */
    public static void streamOpened(HttpServletRequest request)
    {
        Slot slot = SLOT.get(request);
        if (slot != null)
            slot.release();
    }

    @Override
    public void doFilter(ServletRequest servletRequest, ServletResponse servletResponse, FilterChain chain) throws IOException, ServletException
    {
        HttpServletRequest request = (HttpServletRequest)servletRequest;
        HttpServletResponse response = (HttpServletResponse)servletResponse;
        String agent = identity.of(request).orElse(null);
        Slot slot = acquire(agent != null ? "agent " + agent : clients.limitKey(clients.clientAddress(request)), agent != null);
        if (slot == null)
        {
            Errors.write(request, response, tooMany());
            return;
        }
        SLOT.set(request, slot);
        try
        {
            chain.doFilter(request, response);
        }
        finally
        {
            Exchanges.whenDone(request, slot::release);
        }
    }

    /**
     * Takes a place for a request of a client known by its address, for a front-end outside the
     * servlet API (the embedded runner's ingress handler), which answers a refusal with
     * {@link #tooMany()}.
     *
     * @return what gives the place back (once, however often it runs) when the exchange ends, or
     *         null when the client holds the limit already
     */
    public Runnable tryAcquire(String clientAddress)
    {
        Slot slot = acquire(clients.limitKey(clientAddress), false);
        return slot == null ? null : slot::release;
    }

    /** The refusal of a request above the limit: 429, {@code Retry-After: 1}. */
    public GatewayException tooMany()
    {
        return GatewayException.tooMany("too_many_requests",
            "too many requests in progress from this client (at most " + counts.limit() + ", server.max-concurrent-requests-per-client)", 1);
    }

    private Slot acquire(String client, boolean agent)
    {
        if (counts.tryAcquire(client))
            return new Slot(client);
        (agent ? refusedAgents : refusedAddresses).increment();
        return null;
    }

    /** One request's place in its client's count, given back once: when its exchange ends, or when it becomes a stream. */
    private final class Slot
    {
        private final String client;
        private final AtomicBoolean released = new AtomicBoolean();

        Slot(String client)
        {
            this.client = client;
        }

        void release()
        {
            if (released.compareAndSet(false, true))
                counts.release(client);
        }
    }
}
