package io.sandgate.egress;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

import io.micrometer.core.instrument.Counter;
import io.sandgate.testing.Curl;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Who the requests inside an inspected tunnel count as, and clients that will not be inspected.
 * An agent names itself on the CONNECT as every {@code HTTPS_PROXY} client does, with the proxy
 * URL's password ({@code Proxy-Authorization: Basic}); each request inside then counts as that
 * agent for its domain policy and budgets, whatever it carries itself, and a token that stops
 * being valid stops the tunnel's use. A client that pins the target's key refuses the gateway's
 * leaf on its side (counted), and the same client works through a passthrough domain.
 */
class InspectedTunnelIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final String ALPHA = "sgt_agent_alpha_tunnel_0123456789";
    private static final String BETA = "sgt_agent_beta_tunnel_0123456789";
    private static final String GAMMA = "sgt_agent_gamma_tunnel_0123456789";

    @TempDir
    Path work;
    @AutoClose
    private final TargetServer target = TargetServer.start();
    @AutoClose
    private final ForwardProxy node = ForwardProxy.start("n1");

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    @BeforeEach
    void writeSecrets() throws Exception
    {
        writeSecrets(GAMMA);
    }

    private void writeSecrets(String gammaToken) throws IOException
    {
        Path secrets = work.resolve("secrets.yaml");
        Path next = work.resolve("secrets.next");
        Files.writeString(next, "key: \"vnd_tunnel_key_0123456789\"\nalpha-token: \"" + ALPHA + "\"\nbeta-token: \"" + BETA
            + "\"\ngamma-token: \"" + gammaToken + "\"\n");
        Files.setPosixFilePermissions(next, PosixFilePermissions.fromString("rw-------"));
        Files.move(next, secrets, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    private void configure(GatewayConfig config)
    {
        config.trustStoreOf(target)
            .set("egress.ssrf.allow", "127.0.0.0/8")
            .set("egress.connect-ports", "443," + target.httpsPort())
            .set("egress.secrets.file", work.resolve("secrets.yaml").toString())
            // A rotated-out token stops at once, so that a test can end an agent's token mid-tunnel.
            .set("egress.secrets.overlap", "0s")
            .set("egress.secrets.refresh", "200ms")
            .set("egress.routes", List.of(
                Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "keyed"), "upstream", "main", "credential", "key", "inspect", true),
                Map.of("match", Map.of("domains", List.of("localhost")), "upstream", "main", "inspect", true),
                Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "main", "inspect", true)))
            .set("egress.inspect.passthrough", "127.0.0.1")
            .set("egress.pools", Map.of("main", Map.of("nodes", List.of(Map.of("id", "n1", "address", node.address())))))
            .set("egress.credentials", Map.of("key", Map.of("secret", "key", "hosts", List.of("localhost"))));
        Map<String, Object> alpha = new LinkedHashMap<>(Map.of("id", "alpha", "token", "alpha-token", "credentials", List.of("key")));
        alpha.put("policy", Map.of("domains", List.of("*.example.org")));
        Map<String, Object> beta = new LinkedHashMap<>(Map.of("id", "beta", "token", "beta-token", "credentials", List.of("key")));
        beta.put("policy", Map.of("budgets", Map.of("requests_per_minute", 2)));
        config.set("egress.agents", List.of(alpha, beta, Map.of("id", "gamma", "token", "gamma-token", "credentials", List.of("key"))));
    }

    @Test
    void curlWithTheTokenInTheProxyUrl_eachRequestInsideCountsAsThatAgent_itsDomainPolicyBinds() throws Exception
    {
        Path ca = caPem();
        Curl refused = Curl.viaProxy(work, "http://alpha:" + ALPHA + "@127.0.0.1:" + gateway.internalPort(), ca, url("localhost", "/echo"));
        assertEquals(403, refused.status(), refused.describe());
        assertTrue(refused.body().contains("policy"), refused.describe());
        assertTrue(target.requests().isEmpty(), "nothing reached the target");
        assertEquals(1, policyCount("alpha", "domain", "refused"));
        // Beta has no domain policy: the routes alone bind it, and the target never sees its token.
        Curl allowed = Curl.viaProxy(work, "http://beta:" + BETA + "@127.0.0.1:" + gateway.internalPort(), ca, url("localhost", "/echo"));
        assertEquals(200, allowed.status(), allowed.describe());
        assertTrue(target.requests().stream().noneMatch(r -> r.toString().contains(BETA)), "the agent's token reached the target");
    }

    @Test
    void budgets_countEachRequestInsideOneTunnel_429WithRetryAfter() throws Exception
    {
        try (Tunnel tunnel = Tunnel.open(gateway.internalPort(), "localhost:" + target.httpsPort(), basic("beta", BETA), trusting(caPem())))
        {
            assertEquals(200, tunnel.get("/echo").status());
            assertEquals(200, tunnel.get("/echo").status());
            RawHttp.Response over = tunnel.get("/echo");
            assertEquals(429, over.status(), over.toString());
            assertTrue(over.header("Retry-After") != null, over.toString());
            assertTrue(over.body().contains("requests_per_minute"), over.body());
        }
        assertEquals(2, target.requests().size());
    }

    @Test
    void aForgedProxyPassword_is407WithAChallenge_andNothingIsOpened() throws Exception
    {
        try (Socket socket = new Socket("127.0.0.1", gateway.internalPort()))
        {
            RawHttp.Response refused = Tunnel.connect(socket, "localhost:" + target.httpsPort(), basic("alpha", "sgt_agent_forged_0123456789"));
            assertEquals(407, refused.status(), refused.toString());
            assertEquals("Basic realm=\"sandgate egress\"", refused.header("Proxy-Authenticate"));
            assertTrue(!refused.toString().contains("sgt_agent_forged"), "the token is not echoed: " + refused);
        }
        Curl curl = Curl.viaProxy(work, "http://alpha:wrong@127.0.0.1:" + gateway.internalPort(), caPem(), url("localhost", "/echo"));
        assertTrue(curl.error().contains("407"), curl.describe());
        // In base-URL mode too: a request that names an agent must name a valid one.
        RawHttp.Response baseUrl = plain("/egress/127.0.0.1:" + target.httpsPort() + "/echo", basic("alpha", "wrong"));
        assertEquals(407, baseUrl.status(), baseUrl.toString());
        assertTrue(target.requests().isEmpty());
    }

    @Test
    void anotherAgentsTokenInsideATunnel_isRefused() throws Exception
    {
        try (Tunnel tunnel = Tunnel.open(gateway.internalPort(), "localhost:" + target.httpsPort(), basic("gamma", GAMMA), trusting(caPem()),
            "X-Agent-Task-Type: keyed"))
        {
            assertEquals(200, tunnel.get("/echo", "Authorization: Bearer " + GAMMA).status(), "its own token is replaced by the key");
            RawHttp.Response other = tunnel.get("/echo", "Authorization: Bearer " + BETA);
            assertEquals(403, other.status(), other.toString());
            assertTrue(other.body().contains("another agent"), other.body());
        }
        assertEquals(1, target.requests().size());
    }

    @Test
    void aTokenRotatedOutMidTunnel_endsTheTunnelsUse() throws Exception
    {
        try (Tunnel tunnel = Tunnel.open(gateway.internalPort(), "localhost:" + target.httpsPort(), basic("gamma", GAMMA), trusting(caPem())))
        {
            assertEquals(200, tunnel.get("/echo").status());
            writeSecrets("sgt_agent_gamma_rotated_0123456789");
            await().untilAsserted(() ->
            {
                RawHttp.Response after = tunnel.get("/echo");
                assertEquals(403, after.status(), after.toString());
                assertTrue(after.body().contains("no longer valid"), after.body());
            });
        }
    }

    @Test
    void baseUrlOnARouteWithoutACredential_theProxyAuthorizationNamesTheAgent() throws Exception
    {
        RawHttp.Response refused = plain("/egress/127.0.0.1:" + target.httpsPort() + "/echo", "Bearer " + ALPHA);
        assertEquals(403, refused.status(), refused.toString());
        assertTrue(refused.body().contains("policy"), refused.body());
        assertTrue(target.requests().isEmpty());
    }

    @Test
    void aClientPinningTheTargetsKey_failsOnItsSideCounted_andWorksThroughAPassthroughDomain() throws Exception
    {
        SSLContext pinning = pinning(caPem());
        try (Socket socket = new Socket("127.0.0.1", gateway.internalPort()))
        {
            assertEquals(200, Tunnel.connect(socket, "localhost:" + target.httpsPort(), null).status());
            SSLSocket tls = (SSLSocket)pinning.getSocketFactory().createSocket(socket, "localhost", target.httpsPort(), true);
            SSLHandshakeException refused = assertThrows(SSLHandshakeException.class, tls::startHandshake);
            assertTrue(String.valueOf(refused.getCause()).contains("pin"), String.valueOf(refused.getCause()));
        }
        await().until(() -> handshakes("failed") >= 1);
        assertEquals(0, handshakes("ok"));
        try (Tunnel blind = Tunnel.open(gateway.internalPort(), "127.0.0.1:" + target.httpsPort(), null, pinning))
        {
            assertEquals(200, blind.get("/echo").status());
        }
        assertEquals(1, target.requests().size());
        assertEquals(0, handshakes("ok"), "a passthrough tunnel is never intercepted");
    }

    /** A base-URL request with a {@code Proxy-Authorization}, which java.net.http would drop from a request to no proxy. */
    private RawHttp.Response plain(String path, String proxyAuthorization) throws IOException
    {
        return RawHttp.get(gateway.internalPort(), "127.0.0.1", path, "Proxy-Authorization", proxyAuthorization);
    }

    @Test
    void agentsFallingSilentAfterTheConnect_holdNoThread_andOthersAreServed() throws Exception
    {
        int before = java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount();
        List<Socket> silent = new java.util.ArrayList<>();
        try
        {
            for (int i = 0; i < 100; i++)
            {
                Socket socket = new Socket("127.0.0.1", gateway.internalPort());
                silent.add(socket);
                socket.setSoTimeout(15_000);
                // Answered 200, then not one byte of a TLS handshake.
                assertEquals(200, Tunnel.connect(socket, "localhost:" + target.httpsPort(), basic("beta", BETA)).status());
            }
            int during = java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount();
            assertTrue(during <= before + 16, "threads with 100 silent tunnels: " + during + ", before: " + before);
            try (Tunnel tunnel = Tunnel.open(gateway.internalPort(), "localhost:" + target.httpsPort(), basic("gamma", GAMMA), trusting(caPem())))
            {
                assertEquals(200, tunnel.get("/echo").status());
            }
        }
        finally
        {
            for (Socket socket : silent)
                socket.close();
        }
    }

    private double policyCount(String agent, String reason, String outcome)
    {
        Counter counter = gateway.sandgate().metrics().find("sandgate.egress.agent.policy").tags("agent", agent, "reason", reason, "outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    private double handshakes(String outcome) throws Exception
    {
        String metrics = HTTP.send(HttpRequest.newBuilder(gateway.internalUri("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        Matcher line = Pattern.compile("(?m)^sandgate_egress_inspect_handshakes_total\\{outcome=\"" + outcome + "\"[^}]*} (\\S+)$").matcher(metrics);
        return line.find() ? Double.parseDouble(line.group(1)) : 0;
    }

    private String url(String host, String path)
    {
        return "https://" + host + ":" + target.httpsPort() + path;
    }

    private static String basic(String user, String password)
    {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    private Path caPem() throws Exception
    {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.internalUri("/egress/ca.pem")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        Path file = work.resolve("gateway-ca.pem");
        Files.writeString(file, response.body());
        return file;
    }

    private static X509Certificate certificate(Path pem) throws Exception
    {
        return (X509Certificate)CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(Files.readAllBytes(pem)));
    }

    /** A client context trusting the gateway's CA only, as a sandbox told of it does. */
    private static SSLContext trusting(Path ca) throws Exception
    {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setCertificateEntry("gateway-ca", certificate(ca));
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, factory.getTrustManagers(), null);
        return context;
    }

    /**
     * A client that trusts the gateway's CA and the target's certificate alike, but accepts only the
     * target's own public key, as a client with a pinned origin does: a leaf the gateway signed chains
     * to a trusted CA and is still refused, during the handshake.
     */
    private SSLContext pinning(Path ca) throws Exception
    {
        KeyStore store = target.trustKeyStore();
        store.setCertificateEntry("gateway-ca", certificate(ca));
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        X509TrustManager chains = (X509TrustManager)factory.getTrustManagers()[0];
        X509Certificate own = (X509Certificate)target.trustKeyStore().getCertificate(target.trustKeyStore().aliases().nextElement());
        byte[] pinned = own.getPublicKey().getEncoded();
        X509TrustManager pinningManager = new X509TrustManager()
        {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException
            {
                chains.checkClientTrusted(chain, authType);
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException
            {
                chains.checkServerTrusted(chain, authType);
                if (!Arrays.equals(pinned, chain[0].getPublicKey().getEncoded()))
                    throw new CertificateException("public key does not match the pin");
            }

            @Override
            public X509Certificate[] getAcceptedIssuers()
            {
                return chains.getAcceptedIssuers();
            }
        };
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new TrustManager[] {pinningManager}, null);
        return context;
    }

    /** One CONNECT tunnel, and HTTP/1.1 requests sent one after another inside it over TLS. */
    private record Tunnel(Socket socket, SSLSocket tls, String authority) implements AutoCloseable
    {
        static Tunnel open(int proxyPort, String authority, String proxyAuthorization, SSLContext context, String... connectHeaders) throws IOException
        {
            Socket socket = new Socket("127.0.0.1", proxyPort);
            socket.setSoTimeout(15_000);
            RawHttp.Response answer = connect(socket, authority, proxyAuthorization, connectHeaders);
            assertEquals(200, answer.status(), answer.toString());
            String host = authority.substring(0, authority.lastIndexOf(':'));
            SSLSocket tls = (SSLSocket)context.getSocketFactory().createSocket(socket, host, Integer.parseInt(authority.substring(host.length() + 1)), true);
            tls.startHandshake();
            return new Tunnel(socket, tls, authority);
        }

        static RawHttp.Response connect(Socket socket, String authority, String proxyAuthorization, String... headers) throws IOException
        {
            StringBuilder request = new StringBuilder("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n");
            if (proxyAuthorization != null)
                request.append("Proxy-Authorization: ").append(proxyAuthorization).append("\r\n");
            for (String header : headers)
                request.append(header).append("\r\n");
            OutputStream out = socket.getOutputStream();
            out.write(request.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return RawHttp.read(socket.getInputStream());
        }

        RawHttp.Response get(String path, String... headers) throws IOException
        {
            StringBuilder request = new StringBuilder("GET " + path + " HTTP/1.1\r\nHost: " + authority + "\r\n");
            for (String header : headers)
                request.append(header).append("\r\n");
            tls.getOutputStream().write(request.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
            tls.getOutputStream().flush();
            return RawHttp.read(tls.getInputStream());
        }

        @Override
        public void close() throws IOException
        {
            tls.close();
            socket.close();
        }
    }
}
