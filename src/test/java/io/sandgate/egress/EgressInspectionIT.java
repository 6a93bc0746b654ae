package io.sandgate.egress;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;

import io.sandgate.testing.Curl;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import io.sandgate.testing.TargetServer;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Inspected CONNECT tunnels end to end, with curl as the agent: {@code HTTPS_PROXY} names the
 * gateway and the gateway's CA is trusted through the environment only ({@code CURL_CA_BUNDLE}),
 * towards a real HTTPS target through a real forward-proxy node. Inside the tunnel the base-URL
 * pipeline runs: the internal token becomes the real key, secrets in a header or the body are
 * refused (422) before anything reaches the target. A passthrough domain's tunnel stays blind, and
 * clients that do not trust the CA fail on their side, counted, without the gateway keeping anything.
 */
@ExtendWith(WorkDirExtension.class)
class EgressInspectionIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    // Built at run time so the repository holds nothing a secret scanner would flag.
    private static final String OPENAI_KEY = "sk-" + "proj-" + "A1b2C3d4E5f6G7h8I9j0".repeat(2);
    private static final String AWS_KEY = "AKIA" + "QWERTYUIOP234567";
    private static final String AGENT_TOKEN = "sgt_agent_alpha_0123456789";

    @AutoClose
    private final TargetServer target = TargetServer.start();
    @AutoClose
    private final ForwardProxy node = ForwardProxy.start("n1");
    private Path work;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    @BeforeEach
    void writeSecrets(WorkDir workDir) throws Exception
    {
        work = workDir.getEmptyPathDir();
        Path secrets = work.resolve("secrets.yaml");
        Files.writeString(secrets, "openai: \"" + OPENAI_KEY + "\"\nalpha-token: \"" + AGENT_TOKEN + "\"\n");
        Files.setPosixFilePermissions(secrets, PosixFilePermissions.fromString("rw-------"));
    }

    private void configure(GatewayConfig config)
    {
        config.trustStoreOf(target);
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.connect-ports", "443," + target.httpsPort());
        // The file is written before each test; the extension starts the gateway after @BeforeEach.
        config.set("egress.secrets.file", work.resolve("secrets.yaml").toString());
        config.set("egress.routes", List.of(
            Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "scrape"), "upstream", "main", "inspect", true),
            Map.of("match", Map.of("domains", List.of("localhost")), "upstream", "main", "credential", "openai", "inspect", true),
            Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "main", "inspect", true)));
        config.set("egress.inspect.passthrough", "127.0.0.1");
        config.set("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(Map.of("id", "n1", "address", node.address())))));
        Map<String, Object> credentials = new LinkedHashMap<>();
        credentials.put("openai", Map.of("secret", "openai", "hosts", List.of("localhost")));
        config.set("egress.credentials", credentials);
        config.set("egress.agents", List.of(Map.of("id", "alpha", "token", "alpha-token", "credentials", List.of("openai"))));
    }

    /** curl through the gateway, trusting only the bundle given (the system's CAs when null). */
    private Curl curl(Path caBundle, String... arguments) throws Exception
    {
        return Curl.viaProxy(work, gateway.internalPort(), caBundle == null ? Curl.SYSTEM_CAS : caBundle, arguments);
    }

    /** The gateway's CA as sandboxes fetch it. */
    private Path caPem() throws Exception
    {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.internalUri("/egress/ca.pem")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        assertFalse(response.body().contains("PRIVATE"), "the key never leaves");
        X509Certificate ca = (X509Certificate)CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(response.body().getBytes(StandardCharsets.US_ASCII)));
        assertTrue(ca.getBasicConstraints() >= 0, "a CA certificate");
        Path file = work.resolve("gateway-ca.pem");
        Files.writeString(file, response.body());
        return file;
    }

    private String url(String host, String path)
    {
        return "https://" + host + ":" + target.httpsPort() + path;
    }

    private double handshakes(String outcome) throws Exception
    {
        String metrics = HTTP.send(HttpRequest.newBuilder(gateway.internalUri("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        Matcher line = Pattern.compile("(?m)^sandgate_egress_inspect_handshakes_total\\{outcome=\"" + outcome + "\"[^}]*} (\\S+)$").matcher(metrics);
        return line.find() ? Double.parseDouble(line.group(1)) : 0;
    }

    @Test
    void cleanRequest_reachesTheTargetWithTheRealKey_neverTheInternalToken() throws Exception
    {
        Curl answer = curl(caPem(), "-H", "Authorization: Bearer " + AGENT_TOKEN, "-d", "{\"messages\":[\"hi\"]}", url("localhost", "/echo?q=1"));
        assertEquals(200, answer.status(), answer.describe());
        assertTrue(answer.body().contains("messages"), answer.body());
        assertEquals(1, target.requests().size());
        TargetServer.Recorded seen = target.requests().get(0);
        assertEquals("https", seen.scheme());
        assertEquals("/echo?q=1", seen.pathAndQuery());
        assertEquals("Bearer " + OPENAI_KEY, seen.header("Authorization"));
        assertFalse(seen.toString().contains(AGENT_TOKEN), "the target never sees the internal token");
        assertFalse(answer.body().contains(OPENAI_KEY), "the agent never sees the real key");
        assertEquals(1, handshakes("ok"));
    }

    @Test
    void secretInTheBodyOrAHeader_is422_andNeverReachesTheTarget() throws Exception
    {
        Path ca = caPem();
        Curl body = curl(ca, "-H", "Authorization: Bearer " + AGENT_TOKEN, "-d", "{\"key\":\"" + AWS_KEY + "\"}", url("localhost", "/echo"));
        assertEquals(422, body.status(), body.describe());
        assertFalse(body.body().contains(AWS_KEY), body.body());
        Curl header = curl(ca, "-H", "Authorization: Bearer " + AGENT_TOKEN, "-H", "X-Debug: " + AWS_KEY, url("localhost", "/echo"));
        assertEquals(422, header.status(), header.describe());
        for (TargetServer.Recorded seen : target.requests())
            assertFalse(seen.toString().contains(AWS_KEY), "the secret never reaches the target");
    }

    @Test
    void inspectedTunnel_isTheBaseUrlPipeline_tokenRequiredOnACredentialRoute() throws Exception
    {
        Curl answer = curl(caPem(), url("localhost", "/echo"));
        assertEquals(401, answer.status(), answer.describe());
        assertTrue(target.requests().isEmpty());
    }

    /**
     * Inside the tunnel the CONNECT's host is the target: a request naming another Host, or a path
     * of the gateway's own (the admin API), still goes to the tunnel's host and nowhere else.
     */
    @Test
    void innerHostAndPath_cannotReachAnotherTargetOrTheGatewaysOwnFaces() throws Exception
    {
        Curl answer = curl(caPem(), "-H", "Authorization: Bearer " + AGENT_TOKEN, "-H", "Host: 127.0.0.1:" + gateway.internalPort(),
            url("localhost", "/admin/routes"));
        assertEquals(1, target.requests().size(), "the target answered (its 404): " + answer.describe());
        TargetServer.Recorded seen = target.requests().get(0);
        assertEquals("/admin/routes", seen.pathAndQuery());
        assertTrue(seen.header("Host").startsWith("localhost"), seen.header("Host"));
    }

    /** Tools often set headers on the CONNECT only: its task type picks the route of the requests inside that name none. */
    @Test
    void taskTypeOnTheConnect_routesTheRequestsInside() throws Exception
    {
        Curl scrape = curl(caPem(), "--proxy-header", "X-Agent-Task-Type: scrape", url("localhost", "/echo"));
        assertEquals(200, scrape.status(), "the scrape route names no credential: " + scrape.describe());
        Curl plain = curl(caPem(), url("localhost", "/echo"));
        assertEquals(401, plain.status(), "the credential route wants the internal token: " + plain.describe());
        assertEquals(1, target.requests().size());
        assertFalse(target.requests().get(0).toString().contains("X-Agent-Task-Type"), "the gateway's own headers end there");
    }

    /** On the forward-proxy port, where every request counts as plain http, a tunnel's requests still go over https. */
    @Test
    void inspectedTunnel_onTheForwardProxyPort_staysHttps() throws Exception
    {
        gateway.restart(config -> config.set("egress.forward-proxy-port", "0"));
        Curl answer = Curl.viaProxy(work, gateway.forwardProxyPort(), caPem(), "-H", "Authorization: Bearer " + AGENT_TOKEN, url("localhost", "/echo"));
        assertEquals(200, answer.status(), answer.describe());
        assertEquals("https", target.requests().get(0).scheme());
        assertEquals("Bearer " + OPENAI_KEY, target.requests().get(0).header("Authorization"));
    }

    /** A CONNECT sent inside an inspected tunnel would open a tunnel the inspection never sees: refused. */
    @Test
    void connectInsideAnInspectedTunnel_isRefused() throws Exception
    {
        java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream pem = Files.newInputStream(caPem()))
        {
            trust.setCertificateEntry("gateway", CertificateFactory.getInstance("X.509").generateCertificate(pem));
        }
        javax.net.ssl.TrustManagerFactory trustManagers = javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
        trustManagers.init(trust);
        SSLContext trusting = SSLContext.getInstance("TLS");
        trusting.init(null, trustManagers.getTrustManagers(), null);
        try (Socket socket = new Socket("127.0.0.1", gateway.internalPort()))
        {
            socket.setSoTimeout(10_000);
            String authority = "localhost:" + target.httpsPort();
            socket.getOutputStream().write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            assertTrue(readHead(socket.getInputStream()).startsWith("HTTP/1.1 200"));
            SSLSocket tls = (SSLSocket)trusting.getSocketFactory().createSocket(socket, "localhost", target.httpsPort(), true);
            tls.startHandshake();
            tls.getOutputStream().write(("CONNECT 127.0.0.1:" + target.httpsPort() + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            String head = readHead(tls.getInputStream());
            assertTrue(head.startsWith("HTTP/1.1 400"), head);
        }
        assertTrue(target.requests().isEmpty());
    }

    /** An inspected route tunnels to the ports of egress.connect-ports only, as a blind one does: refused before the 200. */
    @Test
    void inspectedConnect_toAPortNotTunnelled_isRefused() throws Exception
    {
        try (Socket socket = new Socket("127.0.0.1", gateway.internalPort()))
        {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write("CONNECT localhost:25 HTTP/1.1\r\nHost: localhost:25\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            String head = readHead(socket.getInputStream());
            assertTrue(head.startsWith("HTTP/1.1 403"), head);
        }
        assertEquals(0, handshakes("ok") + handshakes("failed"));
    }

    @Test
    void webSocketUpgradeInsideATunnel_isRefusedInWordsTheAgentReads() throws Exception
    {
        Curl answer = curl(caPem(), "-H", "Authorization: Bearer " + AGENT_TOKEN, "-H", "Connection: Upgrade", "-H", "Upgrade: websocket",
            "-H", "Sec-WebSocket-Version: 13", "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", url("localhost", "/echo"));
        assertEquals(501, answer.status(), answer.describe());
        assertTrue(answer.body().contains("WebSocket"), answer.body());
        assertTrue(target.requests().isEmpty());
    }

    @Test
    void passthroughDomain_keepsTheTargetsOwnCertificate() throws Exception
    {
        X509Certificate own = (X509Certificate)target.trustKeyStore().getCertificate(target.trustKeyStore().aliases().nextElement());
        Path targetCa = work.resolve("target.pem");
        Files.writeString(targetCa, "-----BEGIN CERTIFICATE-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(own.getEncoded())
            + "\n-----END CERTIFICATE-----\n");
        // Trusting only the target's own certificate: a leaf of the gateway would be refused.
        Curl answer = curl(targetCa, url("127.0.0.1", "/echo"));
        assertEquals(200, answer.status(), answer.describe());
        assertEquals(1, target.requests().size());
        assertEquals(0, handshakes("ok") + handshakes("failed"), "nothing was intercepted");
        // The same name on an inspected route is intercepted: the target's certificate alone is not enough there.
        Curl inspected = curl(targetCa, url("localhost", "/echo"));
        assertNotEquals(0, inspected.exit(), "the gateway's leaf is not the target's certificate");
    }

    @Test
    void clientWithoutTheCa_failsOnItsSide_counted() throws Exception
    {
        caPem();
        Curl answer = curl(null, "-H", "Authorization: Bearer " + AGENT_TOKEN, url("localhost", "/echo"));
        assertEquals(60, answer.exit(), "curl: peer certificate cannot be authenticated; " + answer.describe());
        assertTrue(target.requests().isEmpty());
        await().until(() -> handshakes("failed") >= 1);
    }

    @Test
    void aThousandFailingHandshakes_leaveNoThreadsConnectionsOrMemoryBehind() throws Exception
    {
        int before = ManagementFactory.getThreadMXBean().getThreadCount();
        long heapBefore = heapAfterGc();
        // The JVM's default trust: the gateway's CA is not in it.
        SSLContext untrusting = SSLContext.getDefault();
        int rounds = 1000;
        for (int i = 0; i < rounds; i++)
        {
            try (Socket socket = new Socket("127.0.0.1", gateway.internalPort()))
            {
                socket.setSoTimeout(10_000);
                OutputStream out = socket.getOutputStream();
                String authority = "localhost:" + target.httpsPort();
                out.write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                assertTrue(readHead(socket.getInputStream()).startsWith("HTTP/1.1 200"));
                SSLSocket tls = (SSLSocket)untrusting.getSocketFactory().createSocket(socket, "localhost", target.httpsPort(), true);
                assertThrows(SSLException.class, tls::startHandshake);
                tls.close();
            }
        }
        await().until(() -> handshakes("failed") >= rounds);
        assertEquals(0, handshakes("ok"));
        assertTrue(target.requests().isEmpty());
        await().untilAsserted(() -> assertTrue(ManagementFactory.getThreadMXBean().getThreadCount() <= before + 16,
            "threads after " + rounds + " failed handshakes: " + ManagementFactory.getThreadMXBean().getThreadCount() + ", before: " + before));
        // Each failed handshake's connection is closed, not left for an idle timeout to find.
        await().untilAsserted(() -> assertTrue(gateway.connectedEndPoints() <= 2, "connections still open: " + gateway.connectedEndPoints()));
        // Nothing per handshake stays reachable (a few KB each would be several MB): the JVM's whole heap, so a generous bound.
        long grown = heapAfterGc() - heapBefore;
        assertTrue(grown < 16L << 20, "heap grew by " + (grown >> 10) + " KiB over " + rounds + " failed handshakes");
        // And the gateway still serves a client that trusts its CA.
        Curl answer = curl(caPem(), "-H", "Authorization: Bearer " + AGENT_TOKEN, url("localhost", "/echo"));
        assertEquals(200, answer.status(), answer.describe());
    }

    private static long heapAfterGc()
    {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Node's fetch through undici's ProxyAgent; the gateway's CA is trusted through NODE_EXTRA_CA_CERTS only. */
    private String[] nodeFetch(Path caBundle, String url, String headersJson, String body) throws Exception
    {
        Path suite = MavenPaths.projectBase().resolve("src/test/conformance");
        assertTrue(Files.isDirectory(suite.resolve("node_modules/undici")), "run ./scripts/test.sh (npm ci --prefix src/test/conformance) to install undici");
        List<String> command = new java.util.ArrayList<>(List.of("node", suite.resolve("proxy-fetch.mjs").toString(),
            "http://127.0.0.1:" + gateway.internalPort(), url, headersJson));
        if (body != null)
            command.add(body);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().keySet().removeIf(name -> name.toLowerCase(java.util.Locale.ROOT).endsWith("_proxy") || name.startsWith("NODE_"));
        if (caBundle != null)
            builder.environment().put("NODE_EXTRA_CA_CERTS", caBundle.toString());
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "node finished");
        return out.split("\n", 2);
    }

    @Test
    void nodeFetchThroughUndiciProxyAgent_isInspected() throws Exception
    {
        Path ca = caPem();
        String token = "{\"Authorization\":\"Bearer " + AGENT_TOKEN + "\"}";
        String[] clean = nodeFetch(ca, url("localhost", "/echo"), token, "{\"messages\":[\"hi\"]}");
        assertEquals("200", clean[0], String.join("\n", clean));
        assertEquals("Bearer " + OPENAI_KEY, target.requests().get(0).header("Authorization"));
        String[] leak = nodeFetch(ca, url("localhost", "/echo"), token, "{\"key\":\"" + AWS_KEY + "\"}");
        assertEquals("422", leak[0], String.join("\n", leak));
        String[] untrusting = nodeFetch(null, url("localhost", "/echo"), token, null);
        assertEquals("0", untrusting[0], "a Node without the CA refuses the leaf: " + String.join("\n", untrusting));
        assertEquals(1, target.requests().size());
        for (TargetServer.Recorded seen : target.requests())
            assertFalse(seen.toString().contains(AGENT_TOKEN) || seen.toString().contains(AWS_KEY), seen.toString());
    }

    @Test
    void gitOverHttps_isInspected_aSecretInAHeaderIsRefused() throws Exception
    {
        Path ca = caPem();
        String repository = url("localhost", "/echo/repo.git");
        Curl leak = git(ca, "-c", "http.extraHeader=Authorization: Bearer " + AGENT_TOKEN, "-c", "http.extraHeader=X-Debug: " + AWS_KEY,
            "ls-remote", repository);
        assertNotEquals(0, leak.exit());
        assertTrue(leak.error().contains("422"), leak.describe());
        assertTrue(target.requests().isEmpty(), "nothing of the refused request reached the target");
        git(ca, "-c", "http.extraHeader=Authorization: Bearer " + AGENT_TOKEN, "ls-remote", repository);
        TargetServer.Recorded seen = target.requests().get(0);
        assertTrue(seen.pathAndQuery().startsWith("/echo/repo.git/info/refs?service=git-upload-pack"), seen.pathAndQuery());
        assertTrue(seen.header("User-Agent").startsWith("git/"), seen.header("User-Agent"));
        assertEquals("Bearer " + OPENAI_KEY, seen.header("Authorization"));
    }

    /** git with HTTPS_PROXY and GIT_SSL_CAINFO only; its exit code and error output. */
    private Curl git(Path caBundle, String... arguments) throws Exception
    {
        List<String> command = new java.util.ArrayList<>(List.of("git"));
        command.addAll(List.of(arguments));
        Path error = Files.createTempFile(work, "git", ".err");
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(error.toFile()).directory(work.toFile());
        builder.environment().keySet().removeIf(name -> name.toLowerCase(java.util.Locale.ROOT).endsWith("_proxy") || name.startsWith("GIT_") || name.startsWith("SSL_CERT_"));
        builder.environment().put("HTTPS_PROXY", "http://127.0.0.1:" + gateway.internalPort());
        builder.environment().put("GIT_SSL_CAINFO", caBundle.toString());
        builder.environment().put("GIT_TERMINAL_PROMPT", "0");
        builder.environment().put("GIT_CONFIG_NOSYSTEM", "1");
        builder.environment().put("HOME", work.toString());
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "git finished");
        return new Curl(0, process.exitValue(), out, Files.readString(error));
    }

    private static String readHead(InputStream in) throws IOException
    {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n"))
        {
            int b = in.read();
            if (b < 0)
                break;
            head.append((char)b);
        }
        return head.toString();
    }
}
