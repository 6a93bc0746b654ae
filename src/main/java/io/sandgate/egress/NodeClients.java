package io.sandgate.egress;

import java.util.LinkedHashMap;
import java.util.Map;

import io.sandgate.config.EgressConfig;
import org.eclipse.jetty.client.DuplexConnectionPool;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One HttpClient per egress node, with its own connection pool and the node as its HTTP forward
 * proxy (CONNECT for https targets, absolute form for plain http), a second one per node for the
 * HTTP probes, so that a probe does not queue behind the traffic it judges, and a third whose
 * connections each carry one request (see {@link #oneShot}).
 */
final class NodeClients implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(NodeClients.class);
    /** Destinations (one per target address) idle this long are dropped, so changing target addresses do not pile up. */
    private static final long DESTINATION_IDLE_MILLIS = 60_000;

    private final EgressConfig config;
    private final NodePools pools;
    private final Map<String, HttpClient> traffic = new LinkedHashMap<>();
    private final Map<String, HttpClient> probes = new LinkedHashMap<>();
    private final Map<String, HttpClient> oneShot = new LinkedHashMap<>();

    /** @param pools whose node states learn when a node sends bytes (see {@link NodeState#answered}) */
    NodeClients(EgressConfig config, NodePools pools) throws Exception
    {
        this.config = config;
        this.pools = pools;
        for (EgressConfig.Pool pool : config.pools().values())
        {
            for (EgressConfig.Node node : pool.nodes())
            {
                traffic.put(node.id(), start(node, false));
                probes.put(node.id(), start(node, false));
                oneShot.put(node.id(), start(node, true));
            }
        }
    }

    /** The client that carries agents' exchanges through the node. */
    HttpClient traffic(String nodeId)
    {
        return traffic.get(nodeId);
    }

    /** The client of the node's HTTP probes. */
    HttpClient probe(String nodeId)
    {
        return probes.get(nodeId);
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
    HttpClient oneShot(String nodeId)
    {
        return oneShot.get(nodeId);
    }

    private HttpClient start(EgressConfig.Node node, boolean singleUse) throws Exception
    {
        // Targets are pinned to the address the SSRF guard checked; TLS still verifies the name.
        SslContextFactory.Client tls = new PinnedSslContextFactory();
        config.trustStore().ifPresent(path ->
        {
            tls.setTrustStorePath(path);
            tls.setTrustStoreType("PKCS12");
            config.trustStorePassword().ifPresent(p -> tls.setTrustStorePassword(p.reveal()));
        });
        NodeState state = pools.node(node.id());
        ClientConnector connector = new NodeConnector(() -> state.answered(System.nanoTime()));
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
        client.getProxyConfiguration().addProxy(new PinnedHttpProxy(node.host(), node.port()));
        // A gateway relays: no redirects followed, no cookies kept across agents, content untouched.
        client.setFollowRedirects(false);
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.setConnectTimeout(config.connectTimeout().toMillis());
        client.setIdleTimeout(config.firstByteTimeout().toMillis());
        client.setDestinationIdleTimeout(DESTINATION_IDLE_MILLIS);
        client.setMaxConnectionsPerDestination(config.maxConnectionsPerNode());
        client.start();
        client.getContentDecoderFactories().clear();
        client.getProtocolHandlers().clear();
        return client;
    }

    @Override
    public void close() throws Exception
    {
        for (HttpClient client : traffic.values())
            client.stop();
        for (HttpClient client : probes.values())
            client.stop();
        for (HttpClient client : oneShot.values())
            client.stop();
        LOG.debug("Egress node clients stopped");
    }
}
