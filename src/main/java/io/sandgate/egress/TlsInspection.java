package io.sandgate.egress;

import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import javax.crypto.spec.PBEParameterSpec;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.EgressConfig;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.eclipse.jetty.server.ConnectionMetaData;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;

/**
 * Selective TLS interception of CONNECT tunnels. For a tunnel whose route says {@code inspect:
 * true} (and whose host is not in {@code egress.inspect.passthrough}) the gateway answers 200 and
 * puts, on the agent's connection, a TLS server connection with a leaf for the requested name
 * signed by the {@link InspectionCa}, and above it an ordinary Jetty HTTP/1.1 connection of the
 * listener the CONNECT came in on.
 *
 * <p>Why this shape: the decrypted requests then are requests of the server like any other; they
 * go through the same handlers, filters and servlet as base-URL requests (client limits, access
 * log, spans, the {@link EgressServlet} with its planner, SSRF guard, credentials, leak scan, node
 * selection and retries), the {@link EgressConnectHandler} having only rewritten their target to
 * {@code /egress/{tunnel host}/...}. Nothing of the pipeline is repeated here, and no second server
 * or loopback hop is needed: Jetty's own SslConnection and HttpConnection are stacked on the
 * tunnel's end point as Jetty stacks them on an https connector.</p>
 *
 * <p>Leaves are cached per host in a small LRU map (bounded, not Caffeine: a miss costs one EC
 * signature and a TLS context, the map needs no eviction thread, and two tunnels missing at once
 * only sign twice).
 * All leaves share one key pair, made at start: a leaf's key protects nothing the CA's does not.</p>
 */
public final class TlsInspection
{
    /** The connection attribute that marks an inspected tunnel's HTTP connection, holding its {@link Tunnel}. */
    static final String TUNNEL = TlsInspection.class.getName() + ".tunnel";
    /** How long a leaf is valid; it is replaced after half of it. */
    static final Duration LEAF_VALIDITY = Duration.ofHours(24);
    static final int LEAF_CACHE_SIZE = 1024;
    /** What ALPN offers inside a tunnel: only what the gateway then serves. */
    private static final String[] ALPN = {"http/1.1"};
    /** The PKCS12 key protection of the JDK's default, with the round count of our choosing. */
    private static final String ONE_ROUND = "PBEWithHmacSHA256AndAES_256";

    private final InspectionCa ca;
    private final EgressConfig.Inspect config;
    private final KeyPair leafKeys = InspectionCa.ecKeyPair();
    private final Map<String, Leaf> leaves = new LinkedHashMap<>(64, 0.75f, true)
    {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Leaf> eldest)
        {
            return size() > LEAF_CACHE_SIZE;
        }
    };
    private final Counter succeeded;
    private final Counter failed;

    /**
     * The target of an inspected tunnel, as the CONNECT named it, with the routing headers the CONNECT
     * carried (tools that speak {@code HTTPS_PROXY} often set headers on the CONNECT only) and the
     * agent it named (the proxy URL's password), which every request inside counts as.
     */
    record Tunnel(String host, int port, String taskType, String session, Optional<Credentials.ProxyAgent> agent)
    {
        /** {@code host} or {@code host:port}, as a base-URL path names a target. */
        String authority()
        {
            return port == 443 ? host : host + ":" + port;
        }
    }

    private record Leaf(SSLContext context, long renewAt)
    {
    }

    TlsInspection(EgressConfig.Inspect config, InspectionCa ca, MeterRegistry registry)
    {
        this.config = config;
        this.ca = ca;
        String name = "sandgate.egress.inspect.handshakes";
        String description = "TLS handshakes of inspected CONNECT tunnels (failed: mostly agents that do not trust the gateway's CA)";
        this.succeeded = Counter.builder(name).description(description).tag("outcome", "ok").register(registry);
        this.failed = Counter.builder(name).description(description).tag("outcome", "failed").register(registry);
    }

    /** Whether a tunnel to the host on this route is opened here rather than relayed blind. */
    boolean inspects(EgressConfig.Route route, String host)
    {
        return route.inspect() && !config.passesThrough(host);
    }

    /** The CA whose certificate sandboxes trust. */
    public InspectionCa ca()
    {
        return ca;
    }

    /**
     * The connection that takes over the CONNECT's end point once the 200 is written: TLS towards
     * the agent, HTTP/1.1 inside, marked with its tunnel.
     */
    Connection open(Request connect, Tunnel tunnel)
    {
        EndPoint endPoint = connect.getTunnelSupport().getEndPoint();
        ConnectionMetaData meta = connect.getConnectionMetaData();
        Connector connector = meta.getConnector();
        SSLEngine engine = leaf(tunnel.host()).createSSLEngine();
        engine.setUseClientMode(false);
        SSLParameters parameters = engine.getSSLParameters();
        parameters.setApplicationProtocols(ALPN);
        engine.setSSLParameters(parameters);
        SslConnection tls = new SslConnection(connector.getByteBufferPool(), connector.getExecutor(), endPoint, engine, false, false);
        tls.setRenegotiationAllowed(false);
        tls.addHandshakeListener(new SslHandshakeListener()
        {
            @Override
            public void handshakeSucceeded(Event event)
            {
                succeeded.increment();
            }

            @Override
            public void handshakeFailed(Event event, Throwable failure)
            {
                failed.increment();
            }
        });
        SslConnection.SslEndPoint decrypted = tls.getSslEndPoint();
        Connection http = new HttpConnectionFactory(meta.getHttpConfiguration()).newConnection(connector, decrypted);
        ((ConnectionMetaData)http).setAttribute(TUNNEL, tunnel);
        decrypted.setConnection(http);
        return tls;
    }

    /** The leaf's TLS context for the host, from the cache while it is fresh. */
    private SSLContext leaf(String host)
    {
        long now = System.nanoTime();
        synchronized (leaves)
        {
            Leaf leaf = leaves.get(host);
            if (leaf != null && now - leaf.renewAt() < 0)
                return leaf.context();
        }
        Leaf fresh = new Leaf(context(ca.leaf(host, leafKeys.getPublic(), LEAF_VALIDITY)), now + LEAF_VALIDITY.dividedBy(2).toNanos());
        synchronized (leaves)
        {
            leaves.put(host, fresh);
        }
        return fresh.context();
    }

    private SSLContext context(X509Certificate leaf)
    {
        return context(leafKeys.getPrivate(), new Certificate[] {leaf, ca.certificate()});
    }

    /**
     * A server TLS context of one key and its chain. The key store it goes through never leaves
     * memory, so its key is protected with one round of the key derivation: the JDK's default,
     * 10 000 rounds to store it and as many to read it back, cost a new host far more than the
     * leaf's signature (LeafContextBenchmark).
     */
    static SSLContext context(PrivateKey key, Certificate[] chain)
    {
        try
        {
            char[] password = new char[0];
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setEntry("leaf", new KeyStore.PrivateKeyEntry(key, chain),
                new KeyStore.PasswordProtection(password, ONE_ROUND, new PBEParameterSpec(new byte[16], 1)));
            KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, password);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys.getKeyManagers(), null, null);
            return context;
        }
        catch (GeneralSecurityException | java.io.IOException x)
        {
            throw new IllegalStateException("cannot make the TLS context of a leaf", x);
        }
    }
}
