package io.sandgate.egress;

import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.sandgate.config.EgressConfig;
import io.sandgate.core.Secret;
import io.sandgate.core.Schedulers;
import io.sandgate.web.ClientThreads;
import io.sandgate.web.StreamingProxyServlet;
import org.eclipse.jetty.client.AbstractConnectionPool;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.DuplexConnectionPool;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.client.transport.HttpDestination;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.eclipse.jetty.util.resource.Resource;
import org.eclipse.jetty.util.resource.ResourceFactory;
import org.eclipse.jetty.util.security.CertificateUtils;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One HttpClient per egress node, with its own connection pool and the node as its HTTP forward
 * proxy (CONNECT for https targets, absolute form for plain http), a second one per node for the
 * HTTP probes, so that a probe does not queue behind the traffic it judges, and a third whose
 * connections each carry one request (see {@link #oneShot}). A node a reload keeps keeps its
 * clients and their pooled connections; a node it adds gets new ones, and a node it removes has
 * them stopped once they carry nothing (see {@link #retire}).
 */
final class NodeClients implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(NodeClients.class);
    /** Destinations (one per target address) idle this long are dropped, so changing target addresses do not pile up. */
    private static final long DESTINATION_IDLE_MILLIS = 60_000;
    /** How often the clients of a node a reload removed are looked at, until they carry no exchange. */
    private static final long DRAIN_CHECK_MILLIS = 250;

    /** The three clients of one node. */
    private record Clients(HttpClient traffic, HttpClient probe, HttpClient oneShot)
    {
        List<HttpClient> all()
        {
            return List.of(traffic, probe, oneShot);
        }

        /** Whether no exchange is under way or waiting on any of them: none would be cut by stopping them. */
        boolean idle()
        {
            for (HttpClient client : all())
            {
                for (Destination destination : client.getDestinations())
                {
                    if (destination instanceof HttpDestination queue && queue.getQueuedRequestCount() > 0)
                        return false;
                    if (destination.getConnectionPool() instanceof AbstractConnectionPool pool
                        && (pool.getActiveConnectionCount() > 0 || pool.getPendingConnectionCount() > 0))
                        return false;
                }
            }
            return true;
        }
    }

    private final EgressConfig config;
    private final Schedulers schedulers;
    private final EgressMetrics metrics;
    /** By node state, not by id: a node that moved to another address under its old id has new clients while the old ones drain. */
    private final Map<NodeState, Clients> clients = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param config the client settings (timeouts, trust store, connections per node) of every node,
     *        those a reload adds too
     * @param schedulers where a removed node's clients wait to be idle
     * @param metrics where each node's connect and TLS handshake times go
     */
    NodeClients(EgressConfig config, Schedulers schedulers, EgressMetrics metrics)
    {
        this.config = config;
        this.schedulers = schedulers;
        this.metrics = metrics;
    }

    /**
     * Starts the clients of these nodes; when one cannot be started, stops those it started and
     * throws, so that a reload that fails here leaves nothing behind.
     */
    void start(List<NodeState> nodes) throws Exception
    {
        List<HttpClient> started = new ArrayList<>();
        Map<NodeState, Clients> made = new LinkedHashMap<>();
        try
        {
            KeyStore trust = nodes.isEmpty() ? null : trustStore();
            for (NodeState node : nodes)
            {
                made.put(node, new Clients(start(node, "traffic", false, trust, started), start(node, "probe", false, trust, started),
                    start(node, "one-shot", true, trust, started)));
            }
        }
        catch (Exception x)
        {
            started.forEach(NodeClients::stop);
            throw x;
        }
        clients.putAll(made);
    }

    /** The client that carries agents' exchanges through the node. */
    HttpClient traffic(NodeState node)
    {
        return of(node).traffic();
    }

    /** The client of the node's HTTP probes. */
    HttpClient probe(NodeState node)
    {
        return of(node).probe();
    }

    /**
     * The client for plain-http requests (absolute form, no tunnel): each request opens a connection
     * of its own, closed after it, never pooled. A request that is not idempotent is sent again
     * through another node only if it failed before it began (see {@link FailurePolicy}), which on
     * a fresh connection means the node refused or dropped the connect: not a byte of it was
     * written, so it cannot reach the target twice. On a pooled connection it could also fail
     * because the node had closed the connection meanwhile (tinyproxy closes its side after each
     * request, with no {@code Connection: close}), after the request had begun: a request lost, and
     * a GET through a single node failed, for nothing. The cost is a TCP connect to the node per
     * plain-http request; the leg to the node carries no TLS.
     */
    HttpClient oneShot(NodeState node)
    {
        return of(node).oneShot();
    }

    private Clients of(NodeState node)
    {
        Clients found = clients.get(node);
        if (found == null)
            throw new IllegalStateException("egress node " + node.node().id() + " left its pool longer ago than any exchange may run");
        return found;
    }

    /**
     * Stops the clients of a node a reload removed, once they carry no exchange, or after the grace
     * whatever they carry. The node is out of its pool already, so nothing new starts on them; the
     * exchanges under way (which hold its clients) finish, and the first look waits a moment for one
     * that chose the node just before the reload and has not sent its request yet.
     *
     * @param grace as long as an exchange under way may still run
     */
    void retire(NodeState node, Duration grace)
    {
        long deadline = System.nanoTime() + grace.toNanos();
        schedulers.timer().schedule(() -> drain(node, deadline), DRAIN_CHECK_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void drain(NodeState node, long deadline)
    {
        Clients draining = clients.get(node);
        if (closed || draining == null)
            return;
        long left = deadline - System.nanoTime();
        boolean idle = draining.idle();
        if (!idle && left > 0)
        {
            schedulers.timer().schedule(() -> drain(node, deadline), DRAIN_CHECK_MILLIS, TimeUnit.MILLISECONDS);
            return;
        }
        LOG.info("Egress node {} left its pool: its clients are stopped{}", node.node().id(), idle ? "" : ", cutting what they still carried");
        // Stopping a client may wait for its threads: not on the timer.
        schedulers.workers().execute(() -> stop(draining));
        // An exchange that chose the node just before the reload and then waited out a retry
        // back-off may still ask for its clients: until the grace is over it gets the stopped ones,
        // whose requests fail at once as any failed attempt (and may be retried elsewhere).
        schedulers.timer().schedule(() -> clients.remove(node, draining), Math.max(0, left), TimeUnit.NANOSECONDS);
    }

    /**
     * The configured trust store, read once for all the clients one start makes (three per node)
     * rather than by each: a PKCS12 file's integrity check is thousands of HMAC rounds per read. A
     * reload reads it again, so a node it adds trusts the file as it is then.
     *
     * @return null for the JVM's CAs
     */
    private KeyStore trustStore() throws Exception
    {
        if (config.trustStore().isEmpty())
            return null;
        Resource file = ResourceFactory.root().newResource(config.trustStore().get());
        if (file == null || !file.exists())
            throw new IllegalStateException("egress.tls.trust-store " + config.trustStore().get() + " was not found");
        try
        {
            return CertificateUtils.getKeyStore(file, "PKCS12", null, config.trustStorePassword().map(Secret::reveal).orElse(null));
        }
        catch (Exception x)
        {
            // The JDK's words ("keystore password was incorrect") never hold the password.
            throw new IllegalStateException("egress.tls.trust-store " + config.trustStore().get() + " cannot be read: " + x.getMessage(), x);
        }
    }

    /**
     * @param role what the client is for, in its threads' names
     * @param trust the trust store of TLS to targets, null for the JVM's CAs
     * @param started where the client goes before it starts, so that it is stopped if this or a later one fails
     */
    private HttpClient start(NodeState state, String role, boolean singleUse, KeyStore trust, List<HttpClient> started) throws Exception
    {
        EgressConfig.Node node = state.node();
        // Targets are pinned to the address the SSRF guard checked; TLS still verifies the name.
        SslContextFactory.Client tls = new PinnedSslContextFactory();
        if (trust != null)
            tls.setTrustStore(trust);
        ClientConnector connector = new NodeConnector(() -> state.answered(System.nanoTime()),
            nanos -> metrics.timed(state, EgressMetrics.Phase.CONNECT, nanos));
        connector.setSslContextFactory(tls);
        connector.setConnectTimeout(config.connectTimeout());
        connector.setSelectors(1);
        HttpClientTransportOverHTTP transport = new HttpClientTransportOverHTTP(connector);
        if (singleUse)
        {
            transport.setConnectionPoolFactory(destination ->
            {
                DuplexConnectionPool pool = new DuplexConnectionPool(destination, config.maxConnectionsPerNode());
                pool.setMaxUsage(1);
                return pool;
            });
        }
        HttpClient client = new PinnedHttpClient(transport);
        // A pool of the client's own, so that a node's traffic cannot starve its probes or another
        // node's exchanges of threads; with Jetty's default, four nodes kept 108 idle threads.
        ClientThreads.install(client, "sandgate-egress-" + node.id() + "-" + role);
        client.getProxyConfiguration().addProxy(new PinnedHttpProxy(node.host(), node.port()));
        // A gateway relays: no redirects followed, no cookies kept across agents, content untouched.
        client.setFollowRedirects(false);
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.setConnectTimeout(config.connectTimeout().toMillis());
        client.setIdleTimeout(config.firstByteTimeout().toMillis());
        client.setDestinationIdleTimeout(DESTINATION_IDLE_MILLIS);
        client.setMaxConnectionsPerDestination(config.maxConnectionsPerNode());
        // TLS runs end to end with the target, through the node's tunnel; its endpoint is made when
        // the tunnel has opened, so its age when the handshake ends is the handshake's time.
        client.addBean(new SslHandshakeListener()
        {
            @Override
            public void handshakeSucceeded(Event event)
            {
                long millis = System.currentTimeMillis() - event.getEndPoint().getCreatedTimeStamp();
                metrics.timed(state, EgressMetrics.Phase.TLS, TimeUnit.MILLISECONDS.toNanos(millis));
            }
        });
        started.add(client);
        client.start();
        client.getContentDecoderFactories().clear();
        client.getProtocolHandlers().clear();
        // Interim answers (102, 103 Early Hints, which CDNs send) are read and passed over; without
        // their handlers the client takes one for the final answer and the agent waits for ever.
        StreamingProxyServlet.passOverInterimAnswers(client);
        return client;
    }

    private static void stop(Clients clients)
    {
        clients.all().forEach(NodeClients::stop);
    }

    private static void stop(HttpClient client)
    {
        try
        {
            client.stop();
        }
        catch (Exception x)
        {
            LOG.warn("Stopping an egress node client failed: {}", x.toString());
        }
    }

    /** Stops every node's clients, those of removed nodes still draining too. */
    @Override
    public void close()
    {
        closed = true;
        clients.values().forEach(NodeClients::stop);
        clients.clear();
        LOG.debug("Egress node clients stopped");
    }
}
