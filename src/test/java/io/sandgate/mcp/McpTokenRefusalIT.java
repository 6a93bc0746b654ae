package io.sandgate.mcp;

import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jwt.SignedJWT;
import io.sandgate.testing.AuthorizationServerDouble;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.TestTokens;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The MCP endpoints as an OAuth 2.1 resource server, against a real authorization server double
 * (its JWKS, its introspection endpoint): every token a hostile or confused client could present is
 * refused with the status and {@code WWW-Authenticate} challenge RFC 6750 and RFC 9728 give it, a
 * JSON-RPC error body, nothing relayed and nothing of the token repeated; valid tokens of each
 * algorithm pass. On the Streamable HTTP endpoint ({@code POST /mcp/tools/mcp}) and the HTTP+SSE one
 * ({@code GET /mcp/legacy/sse}). The key-set behaviours (rotation, an unknown key id, the issuer
 * down) each have an issuer and a server of their own, so that one's fetches do not spend another's
 * refetch allowance.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class McpTokenRefusalIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The gateway's public URL as the configuration gives it; tokens are made for resources under it. */
    private static final String PUBLIC = "https://gw.example";
    private static final String METADATA = PUBLIC + "/.well-known/oauth-protected-resource";
    private static final String SCOPE = "mcp";
    private static final String INTROSPECTION_SECRET = "introspection-" + "secret-6f1c9a27e4";
    private static final Pattern PARAMETER = Pattern.compile("([a-z_]+)=\"([^\"]*)\"");
    private static final Pattern CHALLENGE = Pattern.compile("Bearer [a-z_]+=\"[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]*\"(, [a-z_]+=\"[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]*\")*");

    private static final AuthorizationServerDouble as = AuthorizationServerDouble.start().client("sandgate", INTROSPECTION_SECRET, Set.of());
    private static final AuthorizationServerDouble anotherIssuer = AuthorizationServerDouble.start();
    private static final AuthorizationServerDouble rotatingIssuer = AuthorizationServerDouble.start();
    private static final AuthorizationServerDouble downIssuer = AuthorizationServerDouble.start();
    private static final AuthorizationServerDouble kidIssuer = AuthorizationServerDouble.start();
    private static final McpUpstream upstream = McpUpstream.start();
    /** Where nothing listens: an issuer whose key set and introspection never answer. */
    private static final String NOWHERE = "http://127.0.0.1:" + closedPort();
    /** When the gateway had surely fetched {@link #kidIssuer}'s key set ahead of the first call, in epoch milliseconds. */
    private static long kidSetFetchedBy;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .set("egress.secrets.source", "env")
        .environment("SANDGATE_SECRET_AS_CLIENT", INTROSPECTION_SECRET)
        .set("mcp.auth", Map.of("issuers", List.of(as.issuer()), "jwks-url", as.jwksUri(), "resource-url", PUBLIC, "scopes", List.of(SCOPE)))
        .set("mcp.servers", List.of(
            server("tools", "streamable", null),
            server("legacy", "sse", null),
            // Needs no scope: its challenge names none.
            server("unscoped", "streamable", Map.of("scopes", List.of())),
            server("open", "streamable", "off"),
            server("opaque", "streamable", Map.of("introspection",
                Map.of("url", as.introspectionEndpoint(), "client-id", "sandgate", "client-secret", "as-client"))),
            server("rotating", "streamable", ownIssuer(rotatingIssuer)),
            server("down", "streamable", ownIssuer(downIssuer)),
            server("kid", "streamable", ownIssuer(kidIssuer)),
            server("keyless", "streamable", Map.of("jwks-url", NOWHERE + "/jwks")),
            server("unjudged", "streamable", Map.of("introspection", Map.of("url", NOWHERE + "/introspect", "client-id", "sandgate", "client-secret", "as-client"))))));

    private static int closedPort()
    {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0))
        {
            return socket.getLocalPort();
        }
        catch (java.io.IOException x)
        {
            throw new IllegalStateException(x);
        }
    }

    private static Map<String, Object> server(String name, String transport, Object auth)
    {
        Map<String, Object> server = new HashMap<>(Map.of("name", name, "transport", transport,
            "url", transport.equals("sse") ? upstream.sseUrl() : upstream.streamableUrl()));
        if (auth != null)
            server.put("auth", auth);
        return server;
    }

    private static Map<String, Object> ownIssuer(AuthorizationServerDouble issuer)
    {
        return Map.of("issuers", List.of(issuer.issuer()), "jwks-url", issuer.jwksUri());
    }

    @AfterAll
    static void stop() throws Exception
    {
        Fixtures.closeInOrder(upstream, as, anotherIssuer, rotatingIssuer, downIssuer, kidIssuer);
    }

    @BeforeEach
    void keySetsFetched()
    {
        // The gateway fetches each key set in the background when it starts.
        for (AuthorizationServerDouble issuer : List.of(as, rotatingIssuer, downIssuer, kidIssuer))
            await().until(() -> issuer.jwksFetches() >= 1);
        if (kidSetFetchedBy == 0)
            kidSetFetchedBy = System.currentTimeMillis();
    }

    /** The endpoints a client opens a session at, each on a server of its transport. */
    enum Endpoint
    {
        STREAMABLE("tools", "mcp"),
        SSE("legacy", "sse");

        final String server;
        final String path;

        Endpoint(String server, String path)
        {
            this.server = server;
            this.path = path;
        }
    }

    /** What the gateway answered: for an SSE stream that opened, the first event instead of the body. */
    private record Answer(int status, HttpHeaders headers, String body)
    {
    }

    private static String resource(String server)
    {
        return PUBLIC + "/mcp/" + server;
    }

    /** A token {@code as} makes for the server, with the scope every server needs. */
    private static TestTokens.Builder token(String server)
    {
        return as.token().audience(resource(server)).scope(SCOPE);
    }

    private static Answer call(Endpoint endpoint, String authorization) throws Exception
    {
        return call(endpoint.server, endpoint.path, authorization);
    }

    /**
     * A client's first request at the endpoint: a POST of initialize at {@code mcp}, the GET that
     * opens a stream at {@code sse}. A session it opens is ended (Streamable HTTP) or its stream closed.
     */
    private static Answer call(String server, String path, String authorization) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri("/mcp/" + server + "/" + path)).timeout(Duration.ofSeconds(10));
        if (authorization != null)
            request.header("Authorization", authorization);
        if (path.equals("sse"))
            request.header("Accept", "text/event-stream").GET();
        else
            request.header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", BearerClient.REVISION_2025).POST(HttpRequest.BodyPublishers.ofString(BearerClient.initialize(1)));
        HttpResponse<InputStream> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream body = response.body())
        {
            if (response.statusCode() == 200 && path.equals("sse"))
            {
                SseReader.Event first = new SseReader(body).next();
                return new Answer(200, response.headers(), first.name() + ": " + first.data());
            }
            Answer answer = new Answer(response.statusCode(), response.headers(), new String(body.readAllBytes(), StandardCharsets.UTF_8));
            String session = response.headers().firstValue("Mcp-Session-Id").orElse(null);
            if (session != null)
            {
                HttpRequest.Builder end = HttpRequest.newBuilder(gateway.uri("/mcp/" + server + "/mcp")).header("Mcp-Session-Id", session)
                    .header("MCP-Protocol-Version", BearerClient.REVISION_2025).DELETE();
                if (authorization != null)
                    end.header("Authorization", authorization);
                HttpResponse<Void> ended = HTTP.send(end.build(), HttpResponse.BodyHandlers.discarding());
                assertEquals(204, ended.statusCode());
            }
            return answer;
        }
    }

    private static void assertPasses(Endpoint endpoint, String token) throws Exception
    {
        assertPasses(endpoint.server, endpoint.path, token);
    }

    private static void assertPasses(String server, String path, String token) throws Exception
    {
        int before = upstream.requests.size();
        Answer answer = call(server, path, "Bearer " + token);
        assertEquals(200, answer.status(), answer.body());
        assertTrue(answer.body().startsWith("endpoint: ") || answer.body().contains("protocolVersion"), answer.body());
        assertTrue(upstream.requests.size() > before, "relayed to the server");
        for (McpUpstream.Seen seen : upstream.requests.subList(before, upstream.requests.size()))
            assertFalse(seen.headers().toString().contains(token), "the client's token reached the server: " + seen);
    }

    private static Map<String, String> challenge(Answer answer)
    {
        String challenge = answer.headers().firstValue("WWW-Authenticate").orElseThrow(() -> new AssertionError("no challenge: " + answer));
        // RFC 6750, 3: quoted values of the characters it allows (no quote, no backslash), so that no client's parser is led astray.
        assertTrue(CHALLENGE.matcher(challenge).matches(), challenge);
        Map<String, String> parameters = new HashMap<>();
        Matcher matcher = PARAMETER.matcher(challenge);
        while (matcher.find())
            parameters.put(matcher.group(1), matcher.group(2));
        return parameters;
    }

    private static Answer assertRefused(Endpoint endpoint, String token, int status, String error) throws Exception
    {
        return assertRefused(endpoint.server, endpoint.path, token == null ? null : "Bearer " + token, status, error, token);
    }

    /**
     * Sends the request and asserts the refusal: its status, its challenge naming the endpoint's
     * metadata and the server's scope, the error (none for a request without credentials), a
     * JSON-RPC error body; that nothing reached the upstream, and that nothing of {@code secret}
     * came back.
     */
    private static Answer assertRefused(String server, String path, String authorization, int status, String error, String secret) throws Exception
    {
        int before = upstream.requests.size();
        Answer answer = call(server, path, authorization);
        assertEquals(status, answer.status(), answer.body());
        Map<String, String> challenge = challenge(answer);
        assertEquals(METADATA + "/mcp/" + server + "/" + path.replaceAll("\\?.*", ""), challenge.get("resource_metadata"), challenge.toString());
        assertEquals(server.equals("unscoped") ? null : SCOPE, challenge.get("scope"), challenge.toString());
        assertEquals(error, challenge.get("error"), challenge.toString());
        assertEquals(error != null, challenge.containsKey("error_description") && !challenge.get("error_description").isBlank(), challenge.toString());
        JsonNode body = JSON.readTree(answer.body());
        assertEquals("2.0", body.path("jsonrpc").asText(), answer.body());
        assertTrue(body.path("error").path("code").isInt(), answer.body());
        assertFalse(body.path("error").path("message").asText().isBlank(), answer.body());
        assertEquals(before, upstream.requests.size(), "nothing reached the upstream: " + upstream.requests.subList(before, upstream.requests.size()));
        if (secret != null)
            assertNothingOf(secret, answer);
        assertNothingOf(INTROSPECTION_SECRET, answer);
        return answer;
    }

    private static void assertNothingOf(String secret, Answer answer)
    {
        assertFalse(answer.body().contains(secret), answer.body());
        answer.headers().map().forEach((name, values) -> values.forEach(value -> assertFalse(value.contains(secret), name + ": " + value)));
        // A claim or a signature repeated alone gives as much away.
        for (String part : secret.split("\\."))
        {
            if (part.length() >= 16)
                assertFalse(answer.body().contains(part) || answer.headers().map().toString().contains(part), "a part of the token came back: " + answer);
        }
    }

    @ParameterizedTest
    @EnumSource(Endpoint.class)
    void noToken_is401_withTheChallengeAndNoError(Endpoint endpoint) throws Exception
    {
        assertRefused(endpoint, null, 401, null);
    }

    @Test
    void noToken_onTheMessageEndpoint_namesItsMetadata() throws Exception
    {
        assertRefused("legacy", "message?sessionId=" + UUID.randomUUID(), null, 401, null, null);
    }

    @Test
    void aServerWithoutRequiredScopes_namesNoScope() throws Exception
    {
        assertRefused("unscoped", "mcp", null, 401, null, null);
        assertPasses("unscoped", "mcp", as.token().audience(resource("unscoped")).sign());
    }

    @ParameterizedTest
    @EnumSource(Endpoint.class)
    void notABearerToken_isAnInvalidToken(Endpoint endpoint) throws Exception
    {
        String valid = token(endpoint.server).sign();
        assertRefused(endpoint.server, endpoint.path, "Basic " + Base64.getEncoder().encodeToString(("alice:" + valid).getBytes(StandardCharsets.UTF_8)),
            401, "invalid_token", valid);
        assertRefused(endpoint.server, endpoint.path, valid, 401, "invalid_token", valid);
        assertRefused(endpoint.server, endpoint.path, "Bearer", 401, "invalid_token", null);
        // RFC 6750's query parameter is a way the metadata does not offer: the token is not looked for there.
        assertRefused(endpoint.server, endpoint.path + "?access_token=" + valid, null, 401, null, valid);
    }

    @ParameterizedTest
    @EnumSource(Endpoint.class)
    void expiredOrNotYetValid_beyondTheSkew_isAnInvalidToken(Endpoint endpoint) throws Exception
    {
        Instant now = Instant.now();
        assertRefused(endpoint, token(endpoint.server).issuedAt(now.minusSeconds(600)).notBefore(now.minusSeconds(600)).expiresAt(now.minusSeconds(60)).sign(),
            401, "invalid_token");
        assertRefused(endpoint, token(endpoint.server).notBefore(now.plusSeconds(120)).expiresAt(now.plusSeconds(600)).sign(), 401, "invalid_token");
        // Within the 30 s the clocks of issuer and gateway may differ, both pass.
        assertPasses(endpoint, token(endpoint.server).issuedAt(now.minusSeconds(600)).notBefore(now.minusSeconds(600)).expiresAt(now.minusSeconds(10)).sign());
        assertPasses(endpoint, token(endpoint.server).notBefore(now.plusSeconds(10)).sign());
    }

    @ParameterizedTest
    @EnumSource(Endpoint.class)
    void anotherIssuer_isAnInvalidToken(Endpoint endpoint) throws Exception
    {
        assertRefused(endpoint, anotherIssuer.token().audience(resource(endpoint.server)).scope(SCOPE).sign(), 401, "invalid_token");
        // Signed by a key of the configured issuer, but saying it comes from another.
        assertRefused(endpoint, token(endpoint.server).issuer("https://issuer.example").sign(), 401, "invalid_token");
        assertRefused(endpoint, token(endpoint.server).issuer(as.issuer() + "/").sign(), 401, "invalid_token");
        // Another issuer's key, under a key id ours uses too, for a token that names our issuer.
        assertRefused(endpoint, anotherIssuer.token().issuer(as.issuer()).audience(resource(endpoint.server)).scope(SCOPE).sign(), 401, "invalid_token");
        assertRefused(endpoint, token(endpoint.server).without("iss").sign(), 401, "invalid_token");
    }

    @ParameterizedTest
    @EnumSource(Endpoint.class)
    void anotherAudience_isAnInvalidToken(Endpoint endpoint) throws Exception
    {
        String neighbour = endpoint == Endpoint.STREAMABLE ? "legacy" : "tools";
        assertRefused(endpoint, token(endpoint.server).audience(resource(neighbour)).sign(), 401, "invalid_token");
        assertRefused(endpoint, token(endpoint.server).audience(resource(neighbour) + "/" + endpoint.path).sign(), 401, "invalid_token");
        assertRefused(endpoint, token(endpoint.server).audience("https://api.other-service.example").sign(), 401, "invalid_token");
        // The URL under another host, as a client that trusted the request's Host would have it.
        assertRefused(endpoint, token(endpoint.server).audience(gateway.uri("/mcp/" + endpoint.server).toString()).sign(), 401, "invalid_token");
        assertRefused(endpoint, token(endpoint.server).audience(resource(endpoint.server) + "x").sign(), 401, "invalid_token");
        assertRefused(endpoint, token(endpoint.server).audience(List.of()).sign(), 401, "invalid_token");
        // The resource or its endpoint, alone or among others, is this server's.
        assertPasses(endpoint, token(endpoint.server).audience(resource(endpoint.server) + "/" + endpoint.path).sign());
        assertPasses(endpoint, token(endpoint.server).audience("https://api.other-service.example", resource(endpoint.server)).sign());
    }

    @ParameterizedTest
    @EnumSource(Endpoint.class)
    void unsigned_isAnInvalidToken(Endpoint endpoint) throws Exception
    {
        for (String alg : List.of("none", "None", "NONE", "nOnE"))
            assertRefused(endpoint, as.tokens().unsigned(token(endpoint.server).claims(), alg), 401, "invalid_token");
    }

    @ParameterizedTest
    @EnumSource(Endpoint.class)
    void hmacKeyedWithThePublicKey_isAnInvalidToken(Endpoint endpoint) throws Exception
    {
        for (TestTokens.PublicKeyAs form : TestTokens.PublicKeyAs.values())
            assertRefused(endpoint, as.tokens().hmacWithPublicKey(token(endpoint.server).claims(), form), 401, "invalid_token");
    }

    @ParameterizedTest
    @EnumSource(Endpoint.class)
    void forgedOrTampered_isAnInvalidToken(Endpoint endpoint) throws Exception
    {
        String valid = token(endpoint.server).sign();
        assertRefused(endpoint, as.tampered(valid), 401, "invalid_token");
        assertRefused(endpoint, as.tokens().tampered(valid, "sub", "admin"), 401, "invalid_token");
        assertRefused(endpoint, as.tokens().tampered(valid, "exp", Instant.now().plus(Duration.ofDays(365)).getEpochSecond()), 401, "invalid_token");
        assertRefused(endpoint, as.signedByStranger(token(endpoint.server).claims()), 401, "invalid_token");
        assertRefused(endpoint, as.tokens().signedByStranger(token(endpoint.server).claims(), as.tokens().currentRsaKid()), 401, "invalid_token");
        assertRefused(endpoint, as.tokens().signedWithHeaderKey(token(endpoint.server).claims()), 401, "invalid_token");
        // A key id of another kind of key than the algorithm's.
        assertRefused(endpoint, token(endpoint.server).algorithm(JWSAlgorithm.ES256).kid("rsa-1").sign(), 401, "invalid_token");
        assertRefused(endpoint, token(endpoint.server).algorithm(JWSAlgorithm.EdDSA).kid("ec-1").sign(), 401, "invalid_token");
        assertRefused(endpoint, token(endpoint.server).kid("ed-1").sign(), 401, "invalid_token");
        // A valid signature under another algorithm's header, and a token cut short.
        String[] parts = valid.split("\\.");
        assertRefused(endpoint, parts[0] + "." + parts[1] + ".", 401, "invalid_token");
        assertRefused(endpoint, parts[0] + "." + parts[1], 401, "invalid_token");
    }

    @ParameterizedTest
    @EnumSource(Endpoint.class)
    void missingScope_is403InsufficientScope(Endpoint endpoint) throws Exception
    {
        assertRefused(endpoint, token(endpoint.server).scope("mcp:other").sign(), 403, "insufficient_scope");
        assertRefused(endpoint, token(endpoint.server).without("scope").sign(), 403, "insufficient_scope");
        // A scope is a whole word of the list.
        assertRefused(endpoint, token(endpoint.server).scope("mcpx").sign(), 403, "insufficient_scope");
        assertPasses(endpoint, token(endpoint.server).scope("other " + SCOPE).sign());
        assertPasses(endpoint, token(endpoint.server).without("scope").claim("scp", List.of("other", SCOPE)).sign());
    }

    @ParameterizedTest
    @EnumSource(Endpoint.class)
    void validTokens_ofEachAlgorithmAndType_pass(Endpoint endpoint) throws Exception
    {
        for (JWSAlgorithm algorithm : List.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256, JWSAlgorithm.EdDSA))
            assertPasses(endpoint, token(endpoint.server).algorithm(algorithm).sign());
        assertPasses(endpoint, token(endpoint.server).type("JWT").sign());
        // A typ is a media type, "application/" left out or not (RFC 7515, 4.1.9; RFC 9068, 4), in any case.
        for (String type : List.of("application/at+jwt", "AT+JWT", "application/jwt"))
            assertPasses(endpoint, token(endpoint.server).type(type).sign());
        assertPasses(endpoint, token(endpoint.server).type(null).sign());
        Answer jose = assertRefused(endpoint, token(endpoint.server).type("JOSE").sign(), 401, "invalid_token");
        assertTrue(challenge(jose).get("error_description").contains("typ"), "says it is the type: " + challenge(jose));
    }

    @Test
    void metadata_isServedForEachProtectedEndpoint() throws Exception
    {
        for (String path : List.of("/mcp/tools", "/mcp/tools/mcp", "/mcp/legacy/sse", "/mcp/legacy/message"))
        {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.uri("/.well-known/oauth-protected-resource" + path)).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals(200, response.statusCode(), path + ": " + response.body());
            assertTrue(response.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
            JsonNode metadata = JSON.readTree(response.body());
            assertEquals(PUBLIC + path, metadata.path("resource").asText(), response.body());
            assertEquals(List.of(as.issuer()), JSON.convertValue(metadata.path("authorization_servers"), List.class), response.body());
            assertEquals(List.of(SCOPE), JSON.convertValue(metadata.path("scopes_supported"), List.class), response.body());
            assertEquals(List.of("header"), JSON.convertValue(metadata.path("bearer_methods_supported"), List.class), response.body());
        }
        HttpResponse<String> own = HTTP.send(HttpRequest.newBuilder(gateway.uri("/.well-known/oauth-protected-resource/mcp/rotating/mcp")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(List.of(rotatingIssuer.issuer()), JSON.convertValue(JSON.readTree(own.body()).path("authorization_servers"), List.class), own.body());
        for (String path : List.of("/mcp/nosuch", "/mcp/nosuch/mcp", "/mcp/open", "/mcp/open/mcp", "/mcp/tools/other", "/mcp/tools/mcp/more", "/mcp", ""))
        {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.uri("/.well-known/oauth-protected-resource" + path)).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals(404, response.statusCode(), path + ": " + response.body());
        }
    }

    @Test
    void anOpenServer_takesCallersWithoutToken() throws Exception
    {
        Answer answer = call("open", "mcp", null);
        assertEquals(200, answer.status(), answer.body());
        assertTrue(answer.headers().firstValue("WWW-Authenticate").isEmpty());
    }

    /** A rotated key is seen at the first token that names it: the set is fetched again once. */
    @Test
    void rotatedKey_isFetchedOnce_andItsTokensPass() throws Exception
    {
        // The set the gateway holds is the one before the rotation.
        assertPasses("rotating", "mcp", rotatingIssuer.token().audience(resource("rotating")).scope(SCOPE).sign());
        String kid = rotatingIssuer.rotate();
        int fetches = rotatingIssuer.jwksFetches();
        String rotated = rotatingIssuer.token().audience(resource("rotating")).scope(SCOPE).sign();
        assertEquals(kid, SignedJWT.parse(rotated).getHeader().getKeyID());
        assertPasses("rotating", "mcp", rotated);
        assertEquals(fetches + 1, rotatingIssuer.jwksFetches(), "fetched again once for the new key " + kid);
        assertPasses("rotating", "mcp", rotatingIssuer.token().audience(resource("rotating")).scope(SCOPE).sign());
        assertPasses("rotating", "mcp", rotatingIssuer.token().audience(resource("rotating")).scope(SCOPE).kid("rsa-1").sign());
        assertEquals(fetches + 1, rotatingIssuer.jwksFetches(), "the new set serves what follows");
    }

    /** An issuer whose key set cannot be read for a while does not stop its valid tokens. */
    @Test
    void keySetDown_afterTheFirstFetch_servesTheLastOne() throws Exception
    {
        String server = "down";
        assertPasses(server, "mcp", downIssuer.token().audience(resource(server)).scope(SCOPE).sign());
        downIssuer.jwksDown(true);
        try
        {
            assertPasses(server, "mcp", downIssuer.token().audience(resource(server)).scope(SCOPE).algorithm(JWSAlgorithm.ES256).sign());
            int fetches = downIssuer.jwksFetches();
            // A key id the set lacks makes the gateway try the issuer, which fails...
            assertRefused(server, "mcp", "Bearer " + downIssuer.token().audience(resource(server)).scope(SCOPE).kid("rsa-9").sign(), 401, "invalid_token", null);
            assertEquals(fetches + 1, downIssuer.jwksFetches(), "the set was asked for again");
            // ... and the set it had keeps serving.
            assertPasses(server, "mcp", downIssuer.token().audience(resource(server)).scope(SCOPE).sign());
            assertPasses(server, "mcp", downIssuer.token().audience(resource(server)).scope(SCOPE).algorithm(JWSAlgorithm.EdDSA).sign());
        }
        finally
        {
            downIssuer.jwksDown(false);
        }
    }

    /**
     * A token naming a key id the set lacks makes the gateway fetch the set again, and a flood of
     * made-up key ids costs the issuer at most two fetches per 5 s (nimbus keeps the second of each
     * two for a rotation that follows a refresh). Last, so that the 5 s since the first fetch have
     * mostly passed already.
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void unknownKeyId_fetchesTheSetAgain_atMostTwicePer5Seconds() throws Exception
    {
        String server = "kid";
        // The 5 s that the fetch at start-up opened are over: the next fetch opens a period of its own.
        await().atMost(Duration.ofSeconds(10)).until(() -> System.currentTimeMillis() > kidSetFetchedBy + 5_100);
        int fetches = kidIssuer.jwksFetches();
        long first = System.currentTimeMillis();
        assertRefused(server, "mcp", "Bearer " + kidIssuer.token().audience(resource(server)).scope(SCOPE).kid("made-up-0").sign(), 401, "invalid_token", null);
        assertEquals(fetches + 1, kidIssuer.jwksFetches(), "an unknown key id fetches the set again");
        for (int i = 1; i <= 10; i++)
            assertRefused(server, "mcp", "Bearer " + kidIssuer.token().audience(resource(server)).scope(SCOPE).kid("made-up-" + i).sign(), 401, "invalid_token", null);
        assertTrue(System.currentTimeMillis() - first < 4_000, "the flood took less than the 5 s it is judged in");
        assertTrue(kidIssuer.jwksFetches() <= fetches + 2, "eleven made-up key ids within 5 s: " + (kidIssuer.jwksFetches() - fetches) + " fetches");
        int afterFlood = kidIssuer.jwksFetches();
        assertPasses(server, "mcp", kidIssuer.token().audience(resource(server)).scope(SCOPE).sign());
        assertEquals(afterFlood, kidIssuer.jwksFetches(), "a known key id needs no fetch");
    }

    /** Opaque tokens are judged by introspection, once per token, with the gateway's client secret from its secret source. */
    @Test
    void opaqueTokens_areIntrospectedOncePerToken() throws Exception
    {
        String server = "opaque";
        String token = as.opaqueToken("carol", "client-c", SCOPE, resource(server), Duration.ofMinutes(5));
        int introspections = as.introspections();
        for (int i = 0; i < 3; i++)
            assertPasses(server, "mcp", token);
        assertEquals(introspections + 1, as.introspections(), "three calls (and the DELETEs that ended their sessions) cost one introspection");

        String revoked = as.opaqueToken("carol", "client-c", SCOPE, resource(server), Duration.ofMinutes(5));
        as.revoke(revoked);
        assertRefused(server, "mcp", "Bearer " + revoked, 401, "invalid_token", revoked);
        String unknown = "opaque-" + UUID.randomUUID();
        assertRefused(server, "mcp", "Bearer " + unknown, 401, "invalid_token", unknown);
        String elsewhere = as.opaqueToken("carol", "client-c", SCOPE, resource("tools"), Duration.ofMinutes(5));
        assertRefused(server, "mcp", "Bearer " + elsewhere, 401, "invalid_token", elsewhere);
        String unscoped = as.opaqueToken("carol", "client-c", "mcp:other", resource(server), Duration.ofMinutes(5));
        assertRefused(server, "mcp", "Bearer " + unscoped, 403, "insufficient_scope", unscoped);
    }

    /**
     * A token the gateway cannot judge (the issuer's key set, or its introspection endpoint, does not
     * answer) is not the client's fault: 503, not the 401 that sends a client for a new token in vain.
     */
    @Test
    void whatJudgesTokens_unreachable_isA503_notARefusal() throws Exception
    {
        String jwt = token("keyless").sign();
        Answer keyless = call("keyless", "mcp", "Bearer " + jwt);
        assertEquals(503, keyless.status(), keyless.body());
        assertTrue(keyless.headers().firstValue("WWW-Authenticate").isEmpty(), "no challenge: the token may be good");
        assertFalse(keyless.body().contains(jwt));
        String opaque = as.opaqueToken("carol", "client-c", SCOPE, resource("unjudged"), Duration.ofMinutes(5));
        Answer unjudged = call("unjudged", "mcp", "Bearer " + opaque);
        assertEquals(503, unjudged.status(), unjudged.body());
        assertTrue(unjudged.headers().firstValue("WWW-Authenticate").isEmpty());
    }
}
