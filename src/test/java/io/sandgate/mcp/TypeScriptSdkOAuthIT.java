package io.sandgate.mcp;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.sandgate.testing.AuthorizationServerDouble;
import io.sandgate.testing.Balancer;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LocalResources;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.NodeScript;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import jakarta.servlet.http.HttpServletRequest;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The official TypeScript MCP SDK client, unmodified ({@code src/test/mcp-ts/oauth-client.mjs}:
 * {@code ClientCredentialsProvider} as the transport's {@code authProvider}), through gateways with
 * {@code mcp.auth} on, against {@link AuthorizationServerDouble}: the SDK reads the gateway's 401,
 * fetches the RFC 9728 metadata it names and the authorization server's, gets a token for the
 * endpoint by client credentials and calls tools with it. Through one gateway on the in-memory
 * store, and through two replicas sharing a real redis-server, each over Streamable HTTP and the
 * legacy HTTP+SSE transport.
 *
 * <p>Each gateway sits behind a front ({@link Balancer}) whose URL is the gateway's
 * {@code resource-url}: the public URL clients reach, which the SDK checks the metadata's
 * {@code resource} against. In front of the replicas, streams (GET) go to A, the SSE transport's
 * POSTs to B, and Streamable HTTP's POSTs alternate between B and A.
 *
 * <p>No token passthrough: the upstream ({@link McpUpstream}, which records every request's headers)
 * sees on every request the token the gateway got by RFC 8693 exchange of the client's (signed by
 * the authorization server, {@code aud} the upstream's URL, {@code sub} the client's, the gateway
 * as actor), or the gateway's static secret, and never a token the client holds. Exchanges happen
 * once per principal and replica, not per call. Each test uses a client (a principal) of its own.
 *
 * <p>And where the SDK stops: a client that reaches the gateway by another URL than its
 * {@code resource-url}, and a token without a scope the server needs (403, one more token, then
 * the end), neither reaching the upstream.
 */
@ExtendWith(WorkDirExtension.class)
class TypeScriptSdkOAuthIT
{
    private static final Path CLIENT_DIR = MavenPaths.projectBase().resolve("src/test/mcp-ts");
    /** oauth-client.mjs ends itself after 60 s; this is the backstop. */
    private static final Duration PROCESS_TIMEOUT = Duration.ofSeconds(75);
    private static final int ECHO_CALLS = 20;
    private static final String SCOPE = "mcp:tools";
    private static final String GATEWAY_CLIENT = "sandgate";
    /** With characters that RFC 6749 §2.3.1 has a client form-encode before it joins id and secret for Basic. */
    private static final String GATEWAY_CLIENT_SECRET = "gateway+client/secret%2F:0123456789";
    private static final String UPSTREAM_KEY = "upstream-static-key-0123456789";
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path node;
    private static Path work;
    private static AuthorizationServerDouble as;
    private static McpUpstream upstream;
    private static RedisServerProcess redis;
    private static Balancer singleFront;
    private static Balancer replicasFront;
    private static volatile RunningGateway single;
    private static volatile RunningGateway replicaA;
    private static volatile RunningGateway replicaB;

    /** The gateways' configuration, but for the front whose URL is their resource URL and the store. */
    @RegisterExtension
    static final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .set("egress.secrets.source", "env")
        .environment("SANDGATE_SECRET_AS_CLIENT", GATEWAY_CLIENT_SECRET)
        .environment("SANDGATE_SECRET_UPSTREAM_KEY", UPSTREAM_KEY)
        .set("mcp.servers", List.of(
            server("stream", upstream.streamableUrl(), "streamable", exchange()),
            server("legacy", upstream.sseUrl(), "sse", exchange()),
            server("keyed", upstream.streamableUrl(), "streamable", Map.of("secret", "upstream-key")),
            adminOnly(server("admin", upstream.streamableUrl(), "streamable", exchange())))));

    @BeforeAll
    static void start(WorkDir workDir) throws Exception
    {
        node = LocalResources.executable("node");
        if (node == null || !Files.isRegularFile(CLIENT_DIR.resolve("node_modules/@modelcontextprotocol/sdk/package.json")))
            fail("node and the locked packages of src/test/mcp-ts are needed: run ./scripts/test.sh (apt-get install nodejs npm; npm ci --prefix src/test/mcp-ts)");
        work = workDir.getEmptyPathDir();
        as = AuthorizationServerDouble.start().client(GATEWAY_CLIENT, GATEWAY_CLIENT_SECRET, Set.of());
        upstream = McpUpstream.start();
        redis = RedisServerProcess.start();
        // The fronts first: their URLs are in the gateways' configuration.
        singleFront = Balancer.start(request -> single.uri());
        AtomicInteger next = new AtomicInteger();
        replicasFront = Balancer.start(request -> route(request, next));
        single = gateways.startAnother(config -> auth(config, singleFront));
        replicaA = gateways.startAnother(config -> auth(config, replicasFront).redisStore(redis));
        replicaB = gateways.startAnother(config -> auth(config, replicasFront).redisStore(redis));
    }

    @AfterAll
    static void stop() throws Exception
    {
        Fixtures.closeInOrder(singleFront, replicasFront, single, replicaA, replicaB, upstream, redis, as);
    }

    @BeforeEach
    void clear()
    {
        upstream.clearRecords();
        replicasFront.routed.clear();
    }

    @Test
    void oneGateway_streamableHttp_sdkDiscoversAndAuthenticates_upstreamGetsTheExchangedTokenOnly() throws Exception
    {
        String client = newClient("one-streamable");

        JsonNode report = runClient("streamable", singleFront.baseUrl() + "/mcp/stream/mcp", client);

        assertDiscoveredAndCalled(report, singleFront, "/mcp/stream/mcp", "POST 401", McpUpstream.TRANSPORT_STREAMABLE);
        assertUpstreamSawExchangedTokensOnly(client, upstream.streamableUrl(), 1);
    }

    @Test
    void oneGateway_sse_sdkDiscoversAndAuthenticates_upstreamGetsTheExchangedTokenOnly() throws Exception
    {
        String client = newClient("one-sse");

        JsonNode report = runClient("sse", singleFront.baseUrl() + "/mcp/legacy/sse", client);

        assertDiscoveredAndCalled(report, singleFront, "/mcp/legacy/sse", "GET 401", McpUpstream.TRANSPORT_SSE);
        assertUpstreamSawExchangedTokensOnly(client, upstream.sseUrl(), 1);
        assertFalse(upstream.requestsTo(McpUpstream.MESSAGE_PATH).isEmpty(), () -> upstream.requests.toString());
    }

    @Test
    void twoReplicasOnRedis_streamableHttp_postsAlternate_eachReplicaExchangesOnce() throws Exception
    {
        String client = newClient("two-streamable");

        JsonNode report = runClient("streamable", replicasFront.baseUrl() + "/mcp/stream/mcp", client);

        assertDiscoveredAndCalled(report, replicasFront, "/mcp/stream/mcp", "POST 401", McpUpstream.TRANSPORT_STREAMABLE);
        assertBothReplicasServed("POST /mcp/stream/mcp");
        assertUpstreamSawExchangedTokensOnly(client, upstream.streamableUrl(), 2);
    }

    @Test
    void twoReplicasOnRedis_sse_streamOnA_postsOnB_eachReplicaExchangesOnce() throws Exception
    {
        String client = newClient("two-sse");

        JsonNode report = runClient("sse", replicasFront.baseUrl() + "/mcp/legacy/sse", client);

        assertDiscoveredAndCalled(report, replicasFront, "/mcp/legacy/sse", "GET 401", McpUpstream.TRANSPORT_SSE);
        assertBothReplicasServed("POST /mcp/legacy/message");
        assertUpstreamSawExchangedTokensOnly(client, upstream.sseUrl(), 2);
    }

    @Test
    void staticCredential_theUpstreamGetsTheGatewaysSecret_neverTheClientsToken() throws Exception
    {
        String client = newClient("keyed");
        int exchangesBefore = as.exchanges().size();

        JsonNode report = runClient("streamable", singleFront.baseUrl() + "/mcp/keyed/mcp", client);

        assertDiscoveredAndCalled(report, singleFront, "/mcp/keyed/mcp", "POST 401", McpUpstream.TRANSPORT_STREAMABLE);
        for (McpUpstream.Seen seen : upstream.requests)
            assertEquals("Bearer " + UPSTREAM_KEY, seen.header("authorization"), seen::toString);
        assertNoClientTokenUpstream();
        assertEquals(exchangesBefore, as.exchanges().size(), "a static credential needs no exchange");
    }

    /**
     * A client that reaches the gateway by another URL than its {@code resource-url} (here the
     * gateway itself rather than its front) gets metadata whose {@code resource} is not its URL,
     * and the SDK refuses to ask for a token: {@code resource-url} must be the URL clients use.
     */
    @Test
    void clientReachesAnotherUrlThanTheResourceUrl_theSdkRefusesBeforeAskingForAToken() throws Exception
    {
        String client = newClient("elsewhere");
        int tokenRequests = as.tokenRequests();
        String direct = "http://127.0.0.1:" + single.port() + "/mcp/stream/mcp";

        JsonNode report = runClient(1, "streamable", direct, client);

        assertTrue(report.path("error").asText().contains("Protected resource " + singleFront.baseUrl() + "/mcp/stream/mcp does not match expected"),
            report::toPrettyString);
        assertEquals(tokenRequests, as.tokenRequests());
        assertTrue(upstream.requests.isEmpty(), () -> upstream.requests.toString());
    }

    /**
     * A server whose own {@code auth} needs a scope the client's token lacks answers 403
     * {@code insufficient_scope}; the SDK gets one more token (with its own scope, which it cannot
     * widen by client credentials), meets the same 403 and gives up. Nothing reaches the upstream.
     */
    @Test
    void missingScope_403InsufficientScope_theSdkTriesOneMoreToken_thenGivesUp() throws Exception
    {
        String client = newClient("no-admin");
        int exchangesBefore = as.exchanges().size();

        JsonNode report = runClient(1, "streamable", singleFront.baseUrl() + "/mcp/admin/mcp", client);

        assertTrue(report.path("error").asText().contains("Server returned 403 after trying upscoping"), report::toPrettyString);
        assertEquals(List.of(SCOPE, SCOPE), report.path("tokenRequests").findValues("scope").stream().map(JsonNode::asText).toList(),
            report::toPrettyString);
        assertEquals(2, report.path("endpointStatuses").path("POST 403").asInt(), report::toPrettyString);
        String metadata = singleFront.baseUrl() + "/.well-known/oauth-protected-resource/mcp/admin/mcp";
        assertTrue(strings(report.path("wwwAuthenticate")).stream().anyMatch(challenge -> challenge.startsWith("Bearer resource_metadata=\"" + metadata + "\"")
            && challenge.contains("scope=\"mcp:admin\"") && challenge.contains("error=\"insufficient_scope\"")), report::toPrettyString);
        assertTrue(upstream.requests.isEmpty(), () -> upstream.requests.toString());
        assertEquals(exchangesBefore, as.exchanges().size(), "a refused caller's token is exchanged for nothing");
    }

    /** What the SDK did, from its report: one 401, the metadata the gateway named, one token for the endpoint, the calls. */
    private static void assertDiscoveredAndCalled(JsonNode report, Balancer front, String path, String firstRefusal, String upstreamTransport)
    {
        String url = front.baseUrl() + path;
        assertTrue(report.path("ok").asBoolean(false), report::toPrettyString);
        assertEquals(ECHO_CALLS, report.path("echoMatched").asInt(), report::toPrettyString);
        assertEquals(McpUpstream.TOOL_NAMES.stream().sorted().toList(), strings(report.path("tools")), report::toPrettyString);
        assertEquals(1, report.path("endpointStatuses").path(firstRefusal).asInt(), report::toPrettyString);
        assertEquals(List.of("Bearer resource_metadata=\"" + front.baseUrl() + "/.well-known/oauth-protected-resource" + path + "\", scope=\"" + SCOPE + "\""),
            strings(report.path("wwwAuthenticate")), report::toPrettyString);
        assertEquals(List.of("GET " + front.baseUrl() + "/.well-known/oauth-protected-resource" + path + " -> 200", "GET " + as.metadataUrl() + " -> 200"),
            strings(report.path("metadataFetches")), report::toPrettyString);
        assertEquals(1, report.path("tokenRequests").size(), report::toPrettyString);
        JsonNode tokenRequest = report.path("tokenRequests").path(0);
        assertEquals(as.tokenEndpoint(), tokenRequest.path("url").asText(), report::toPrettyString);
        assertEquals("client_credentials", tokenRequest.path("grant_type").asText(), report::toPrettyString);
        assertEquals(List.of(url), strings(tokenRequest.path("resource")), report::toPrettyString);
        assertEquals(url, report.path("token").path("aud").asText(), report::toPrettyString);

        List<McpUpstream.Call> echoes = upstream.callsOf("echo");
        assertEquals(ECHO_CALLS, echoes.size(), () -> upstream.calls.toString());
        assertTrue(echoes.stream().allMatch(c -> c.transport().equals(upstreamTransport)), () -> echoes.toString());
    }

    /**
     * Every upstream request carried a token the authorization server made for the upstream by
     * exchange of this client's: signed by its key, {@code aud} the upstream's URL, {@code sub} the
     * client, the gateway as actor; one exchange per replica that served the client, whatever the
     * number of calls; and no token the client held appears anywhere in what the upstream got.
     */
    private static void assertUpstreamSawExchangedTokensOnly(String client, String upstreamUrl, int replicas) throws Exception
    {
        assertFalse(upstream.requests.isEmpty());
        Set<String> seenTokens = new HashSet<>();
        for (McpUpstream.Seen seen : upstream.requests)
        {
            String authorization = seen.header("authorization");
            assertNotNull(authorization, seen::toString);
            assertTrue(authorization.startsWith("Bearer "), seen::toString);
            seenTokens.add(authorization.substring("Bearer ".length()));
        }
        for (String token : seenTokens)
        {
            JWTClaimsSet claims = verified(token);
            assertEquals(as.issuer(), claims.getIssuer());
            assertEquals(List.of(upstreamUrl), claims.getAudience());
            assertEquals(client, claims.getSubject());
            assertEquals(Map.of("sub", GATEWAY_CLIENT), claims.getJSONObjectClaim("act"));
        }
        List<AuthorizationServerDouble.Issued> exchanges = as.exchanges().stream().filter(i -> i.subject().equals(client)).toList();
        assertEquals(replicas, exchanges.size(), exchanges::toString);
        assertTrue(exchanges.stream().allMatch(i -> i.clientId().equals(GATEWAY_CLIENT) && i.audience().equals(List.of(upstreamUrl))), exchanges::toString);
        assertEquals(replicas, seenTokens.size(), seenTokens::toString);
        assertNoClientTokenUpstream();
    }

    /** No client-credentials token the double issued (to any client) is in any upstream request's path or headers. */
    private static void assertNoClientTokenUpstream()
    {
        List<String> clientTokens = new ArrayList<>();
        List<AuthorizationServerDouble.Issued> issued = as.issued();
        List<String> tokens = as.issuedTokens();
        for (int i = 0; i < issued.size(); i++)
        {
            if (issued.get(i).grantType().equals(AuthorizationServerDouble.CLIENT_CREDENTIALS))
                clientTokens.add(tokens.get(i));
        }
        assertFalse(clientTokens.isEmpty());
        for (McpUpstream.Seen seen : upstream.requests)
        {
            String everything = seen.pathAndQuery() + "\n" + seen.headers();
            for (String token : clientTokens)
                assertFalse(everything.contains(token), () -> "a client's token reached the upstream: " + seen);
        }
    }

    private void assertBothReplicasServed(String posts)
    {
        List<String> routed = List.copyOf(replicasFront.routed);
        assertTrue(routed.stream().anyMatch(r -> r.startsWith("GET ") && r.endsWith("-> " + replicaA.port())), routed::toString);
        assertTrue(routed.stream().anyMatch(r -> r.startsWith(posts) && r.endsWith("-> " + replicaB.port())), routed::toString);
    }

    /** The token's claims, once its signature is checked against the authorization server's key. */
    private static JWTClaimsSet verified(String token) throws Exception
    {
        SignedJWT jwt = SignedJWT.parse(token);
        RSAKey key = (RSAKey)as.tokens().publicKeys().getKeyByKeyId(jwt.getHeader().getKeyID());
        assertNotNull(key, () -> "no key " + jwt.getHeader().getKeyID());
        assertTrue(jwt.verify(new RSASSAVerifier(key)), "the upstream's token is not the authorization server's");
        return jwt.getJWTClaimsSet();
    }

    /** Streams to A; the SSE transport's messages to B; Streamable HTTP's POSTs alternately to B and A. */
    private static URI route(HttpServletRequest request, AtomicInteger next)
    {
        if ("GET".equals(request.getMethod()) || request.getRequestURI().contains("/.well-known/"))
            return replicaA.uri();
        if (request.getRequestURI().endsWith("/message"))
            return replicaB.uri();
        return next.getAndIncrement() % 2 == 0 ? replicaB.uri() : replicaA.uri();
    }

    private static GatewayConfig auth(GatewayConfig config, Balancer front)
    {
        return config.set("mcp.auth", Map.of("issuers", List.of(as.issuer()), "jwks-url", as.jwksUri(), "scopes", List.of(SCOPE),
            "resource-url", front.baseUrl()));
    }

    private static Map<String, Object> server(String name, String url, String transport, Map<String, Object> credential)
    {
        Map<String, Object> server = new LinkedHashMap<>();
        server.put("name", name);
        server.put("url", url);
        server.put("transport", transport);
        server.put("credential", credential);
        return server;
    }

    /** The server's own {@code auth} over {@code mcp.auth}: a scope no test client is given. */
    private static Map<String, Object> adminOnly(Map<String, Object> server)
    {
        server.put("auth", Map.of("scopes", List.of("mcp:admin")));
        return server;
    }

    private static Map<String, Object> exchange()
    {
        return Map.of("token-exchange", Map.of("url", as.tokenEndpoint(), "client-id", GATEWAY_CLIENT, "client-secret", "as-client"));
    }

    /** A client of the authorization server of its own, so that each test is a principal of its own. */
    private static String newClient(String name)
    {
        String id = "agent-" + name;
        as.client(id, secretOf(id), Set.of(SCOPE));
        return id;
    }

    private static String secretOf(String client)
    {
        return client + "-secret";
    }

    private static List<String> strings(JsonNode array)
    {
        List<String> values = new ArrayList<>();
        array.forEach(v -> values.add(v.asText()));
        return values;
    }

    private static JsonNode runClient(String transport, String url, String client) throws Exception
    {
        return runClient(0, transport, url, client);
    }

    /** Runs oauth-client.mjs; fails with its output unless it exits with {@code exitCode} and prints its JSON line. */
    private static JsonNode runClient(int exitCode, String transport, String url, String client) throws Exception
    {
        NodeScript.Ended ended = NodeScript.run(node, CLIENT_DIR, CLIENT_DIR.resolve("oauth-client.mjs"), work, client, PROCESS_TIMEOUT,
            transport, url, client, secretOf(client), SCOPE, "--issuer=" + as.issuer(), "--calls=" + ECHO_CALLS);
        if (ended.exitCode() != exitCode || ended.lastLine().isEmpty())
            fail("oauth-client.mjs " + transport + " " + url + ": exit " + ended.exitCode() + " (expected: " + exitCode + ")\n" + ended.output());
        System.out.println("oauth-client.mjs " + transport + ": " + ended.lastLine());
        return JSON.readTree(ended.lastLine());
    }
}
