package io.sandgate.testing;

import java.net.URI;
import java.net.URL;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.Key;
import java.security.PublicKey;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.Ed25519Verifier;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.crypto.factories.DefaultJWSVerifierFactory;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.jwk.AsymmetricJWK;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKMatcher;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWT;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static io.sandgate.testing.AuthorizationServerDouble.ACCESS_TOKEN_TYPE;
import static io.sandgate.testing.AuthorizationServerDouble.TOKEN_EXCHANGE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each endpoint of {@link AuthorizationServerDouble}, over real HTTP, and each token of
 * {@link TestTokens} checked by nimbus-jose-jwt the way a resource server would: against the
 * published JWKS, RFC 9068's {@code at+jwt} type, issuer and audience. The forgeries are shown to
 * be what they claim to be (an HMAC keyed with the public key verifies with that key) and to be
 * refused by such a verifier.
 */
class AuthorizationServerDoubleTest
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MCP = "http://127.0.0.1:1/mcp/a";
    private static final String OTHER_MCP = "http://127.0.0.1:1/mcp/b";

    private final HttpClient http = HttpClient.newHttpClient();
    private final MutableClock clock = MutableClock.ticking();
    private AuthorizationServerDouble as;

    @BeforeEach
    void start()
    {
        as = AuthorizationServerDouble.start(clock)
            .client("app", "app-secret", Set.of("mcp:read", "mcp:admin"))
            .client("gateway", "gateway-secret", Set.of("mcp:read", "upstream:call"));
    }

    @AfterEach
    void stop()
    {
        as.close();
    }

    @Test
    void metadata_rfc8414_atBothWellKnownPaths() throws Exception
    {
        for (String path : List.of(AuthorizationServerDouble.METADATA_PATH, AuthorizationServerDouble.OPENID_METADATA_PATH))
        {
            HttpResponse<String> response = get(as.issuer() + path);
            assertEquals(200, response.statusCode(), path);
            JsonNode metadata = JSON.readTree(response.body());
            assertEquals(as.issuer(), metadata.path("issuer").asText());
            assertEquals(as.tokenEndpoint(), metadata.path("token_endpoint").asText());
            assertEquals(as.jwksUri(), metadata.path("jwks_uri").asText());
            assertEquals(as.introspectionEndpoint(), metadata.path("introspection_endpoint").asText());
            assertEquals(List.of("client_credentials", TOKEN_EXCHANGE), strings(metadata.path("grant_types_supported")));
            assertEquals(List.of("client_secret_basic", "client_secret_post"), strings(metadata.path("token_endpoint_auth_methods_supported")));
            assertEquals(List.of("mcp:admin", "mcp:read", "upstream:call"), strings(metadata.path("scopes_supported")));
            assertTrue(metadata.path("response_types_supported").isArray());
        }
        assertEquals("unsupported_response_type", JSON.readTree(get(as.issuer() + "/authorize?response_type=code").body()).path("error").asText());
    }

    @Test
    void jwks_threeKeys_rotateAddsOne_unpublishHidesOne_downAnswers503_fetchesCounted() throws Exception
    {
        assertEquals(List.of("rsa-1", "ec-1", "ed-1"), kids());
        JWKSet published = JWKSet.parse(get(as.jwksUri()).body());
        assertTrue(published.getKeys().stream().noneMatch(k -> k.isPrivate()), "private parts are published");

        assertEquals("rsa-2", as.rotate());
        assertEquals(List.of("rsa-1", "ec-1", "ed-1", "rsa-2"), kids());
        assertEquals("rsa-2", SignedJWT.parse(as.token().sign()).getHeader().getKeyID());
        as.unpublish("rsa-1");
        assertEquals(List.of("ec-1", "ed-1", "rsa-2"), kids());

        as.jwksDown(true);
        assertEquals(503, get(as.jwksUri()).statusCode());
        as.jwksDown(false);
        assertEquals(200, get(as.jwksUri()).statusCode());
        assertEquals(6, as.jwksFetches());
    }

    @Test
    void clientCredentials_basicAuth_scopeAndResources_signedTokenOfRfc9068() throws Exception
    {
        HttpResponse<String> response = post(as.tokenEndpoint(), basic("app", "app-secret"),
            "grant_type", "client_credentials", "scope", "mcp:read", "resource", MCP, "resource", OTHER_MCP);

        assertEquals(200, response.statusCode(), response.body());
        assertEquals("no-store", response.headers().firstValue("Cache-Control").orElse(null));
        JsonNode body = JSON.readTree(response.body());
        assertEquals("Bearer", body.path("token_type").asText());
        assertEquals(300, body.path("expires_in").asInt());
        assertEquals("mcp:read", body.path("scope").asText());
        JWTClaimsSet claims = verify(body.path("access_token").asText(), MCP);
        assertEquals(as.issuer(), claims.getIssuer());
        assertEquals("app", claims.getSubject());
        assertEquals("app", claims.getStringClaim("client_id"));
        assertEquals(List.of(MCP, OTHER_MCP), claims.getAudience());
        assertEquals("mcp:read", claims.getStringClaim("scope"));
        assertTrue(claims.getJWTID() != null && claims.getNotBeforeTime() != null && claims.getIssueTime() != null);
        assertEquals(Duration.ofMinutes(5), Duration.between(claims.getIssueTime().toInstant(), claims.getExpirationTime().toInstant()));
        assertEquals(List.of(new AuthorizationServerDouble.Issued("client_credentials", "app", "app", List.of(MCP, OTHER_MCP),
            "mcp:read", as.issued().get(0).time())), as.issued());
    }

    @Test
    void clientCredentials_postAuth_noScopeMeansAllOfTheClients_lifetimeConfigurable() throws Exception
    {
        as.tokenLifetime(Duration.ofSeconds(42));
        HttpResponse<String> response = post(as.tokenEndpoint(), null,
            "grant_type", "client_credentials", "client_id", "app", "client_secret", "app-secret", "resource", MCP);

        assertEquals(200, response.statusCode(), response.body());
        JsonNode body = JSON.readTree(response.body());
        assertEquals("mcp:admin mcp:read", body.path("scope").asText());
        assertEquals(42, body.path("expires_in").asInt());
        assertEquals(MCP, SignedJWT.parse(body.path("access_token").asText()).getPayload().toJSONObject().get("aud"));
    }

    @Test
    void tokenEndpoint_refusesWhatRfc6749Refuses() throws Exception
    {
        assertError(401, "invalid_client", post(as.tokenEndpoint(), basic("app", "wrong"), "grant_type", "client_credentials"));
        assertError(401, "invalid_client", post(as.tokenEndpoint(), null, "grant_type", "client_credentials", "client_id", "nobody", "client_secret", "x"));
        assertError(401, "invalid_client", post(as.tokenEndpoint(), null, "grant_type", "client_credentials"));
        assertError(400, "invalid_request", post(as.tokenEndpoint(), basic("app", "app-secret"),
            "grant_type", "client_credentials", "client_id", "app", "client_secret", "app-secret"));
        assertError(400, "invalid_scope", post(as.tokenEndpoint(), basic("app", "app-secret"), "grant_type", "client_credentials", "scope", "mcp:read upstream:call"));
        assertError(400, "invalid_request", post(as.tokenEndpoint(), basic("app", "app-secret"),
            "grant_type", "client_credentials", "scope", "mcp:read", "scope", "mcp:admin"));
        assertError(400, "invalid_target", post(as.tokenEndpoint(), basic("app", "app-secret"), "grant_type", "client_credentials", "resource", MCP + "#x"));
        assertError(400, "invalid_target", post(as.tokenEndpoint(), basic("app", "app-secret"), "grant_type", "client_credentials", "resource", "relative/path"));
        assertError(400, "unsupported_grant_type", post(as.tokenEndpoint(), basic("app", "app-secret"), "grant_type", "password"));
        HttpResponse<String> json = http.send(HttpRequest.newBuilder(URI.create(as.tokenEndpoint()))
            .header("Authorization", basic("app", "app-secret")).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"grant_type\":\"client_credentials\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertError(400, "invalid_request", json);
        assertEquals(405, get(as.tokenEndpoint()).statusCode());
        assertEquals(10, as.tokenRequests());
        assertTrue(as.issued().isEmpty());
        HttpResponse<String> wrong = post(as.tokenEndpoint(), basic("app", "wrong"), "grant_type", "client_credentials");
        assertTrue(wrong.headers().firstValue("WWW-Authenticate").orElse("").startsWith("Basic "), wrong.headers()::toString);
    }

    @Test
    void tokenExchange_keepsTheSubject_setsAudienceAndActor_recordsTheExchange() throws Exception
    {
        String userToken = as.token().subject("alice").clientId("app").audience(MCP).scope("mcp:read").sign();

        HttpResponse<String> response = post(as.tokenEndpoint(), basic("gateway", "gateway-secret"),
            "grant_type", TOKEN_EXCHANGE, "subject_token", userToken, "subject_token_type", ACCESS_TOKEN_TYPE,
            "audience", "upstream-a", "resource", "http://upstream.example/mcp", "scope", "upstream:call");

        assertEquals(200, response.statusCode(), response.body());
        JsonNode body = JSON.readTree(response.body());
        assertEquals(ACCESS_TOKEN_TYPE, body.path("issued_token_type").asText());
        assertEquals("Bearer", body.path("token_type").asText());
        assertEquals(300, body.path("expires_in").asInt());
        JWTClaimsSet exchanged = verify(body.path("access_token").asText(), "upstream-a");
        assertEquals("alice", exchanged.getSubject());
        assertEquals(List.of("upstream-a", "http://upstream.example/mcp"), exchanged.getAudience());
        assertEquals(Map.of("sub", "gateway"), exchanged.getJSONObjectClaim("act"));
        assertEquals("gateway", exchanged.getStringClaim("client_id"));
        assertEquals("upstream:call", exchanged.getStringClaim("scope"));
        List<AuthorizationServerDouble.Issued> exchanges = as.exchanges();
        assertEquals(1, exchanges.size());
        assertEquals("gateway", exchanges.get(0).clientId());
        assertEquals("alice", exchanges.get(0).subject());
        assertEquals(List.of("upstream-a", "http://upstream.example/mcp"), exchanges.get(0).audience());

        // A second hop nests the first actor (RFC 8693 §4.1); no scope asked keeps the subject's.
        HttpResponse<String> again = post(as.tokenEndpoint(), basic("app", "app-secret"),
            "grant_type", TOKEN_EXCHANGE, "subject_token", body.path("access_token").asText(), "subject_token_type", ACCESS_TOKEN_TYPE, "audience", "next");
        JWTClaimsSet twice = verify(JSON.readTree(again.body()).path("access_token").asText(), "next");
        assertEquals(Map.of("sub", "app", "act", Map.of("sub", "gateway")), twice.getJSONObjectClaim("act"));
        assertEquals("upstream:call", twice.getStringClaim("scope"));
    }

    @Test
    void tokenExchange_refusesASubjectTokenItDidNotIssueOrThatExpired() throws Exception
    {
        String good = as.token().subject("alice").audience(MCP).sign();
        JWTClaimsSet claims = as.token().subject("alice").audience(MCP).claims();
        List<String> bad = List.of(
            as.tampered(good),
            as.signedByStranger(claims),
            as.unsigned(claims),
            as.hmacWithPublicKey(claims),
            as.token().subject("alice").expiresAt(clock.instant().minusSeconds(1)).sign(),
            as.token().subject("alice").notBefore(clock.instant().plusSeconds(60)).sign(),
            as.token().subject("alice").issuer("http://elsewhere").sign(),
            "not-a-jwt");
        for (String subjectToken : bad)
        {
            assertError(400, "invalid_grant", post(as.tokenEndpoint(), basic("gateway", "gateway-secret"),
                "grant_type", TOKEN_EXCHANGE, "subject_token", subjectToken, "subject_token_type", ACCESS_TOKEN_TYPE, "audience", "x"));
        }
        String[] noTarget = {"grant_type", TOKEN_EXCHANGE, "subject_token", good, "subject_token_type", ACCESS_TOKEN_TYPE};
        assertError(400, "invalid_target", post(as.tokenEndpoint(), basic("gateway", "gateway-secret"), noTarget));
        assertError(400, "invalid_request", post(as.tokenEndpoint(), basic("gateway", "gateway-secret"),
            "grant_type", TOKEN_EXCHANGE, "subject_token", good, "audience", "x"));
        assertError(400, "invalid_scope", post(as.tokenEndpoint(), basic("gateway", "gateway-secret"),
            "grant_type", TOKEN_EXCHANGE, "subject_token", good, "subject_token_type", ACCESS_TOKEN_TYPE, "audience", "x", "scope", "mcp:admin"));
        assertTrue(as.exchanges().isEmpty());
    }

    @Test
    void introspection_opaqueActiveUntilExpiryOrRevocation_clientAuthenticated() throws Exception
    {
        String opaque = as.opaqueToken("bob", "app", "mcp:read", MCP, Duration.ofMinutes(1));
        String revoked = as.opaqueToken("carol", "app", "mcp:read", MCP, Duration.ofMinutes(1));
        as.revoke(revoked);

        JsonNode active = introspect(opaque);
        assertTrue(active.path("active").asBoolean(), active::toString);
        assertEquals("bob", active.path("sub").asText());
        assertEquals("app", active.path("client_id").asText());
        assertEquals("mcp:read", active.path("scope").asText());
        assertEquals(MCP, active.path("aud").asText());
        assertEquals(as.issuer(), active.path("iss").asText());
        assertEquals(60, active.path("exp").asLong() - active.path("iat").asLong());
        assertEquals("{\"active\":false}", introspect(revoked).toString());
        assertEquals("{\"active\":false}", introspect("opaque-unknown").toString());
        JsonNode jwt = introspect(as.token().subject("dave").audience(MCP).sign());
        assertTrue(jwt.path("active").asBoolean());
        assertEquals("dave", jwt.path("sub").asText());
        assertEquals("{\"active\":false}", introspect(as.tampered(as.token().sign())).toString());

        clock.advance(Duration.ofMinutes(2));
        assertEquals("{\"active\":false}", introspect(opaque).toString());
        assertError(401, "invalid_client", post(as.introspectionEndpoint(), basic("app", "wrong"), "token", opaque));
        assertEquals(7, as.introspections());
    }

    @Test
    void builder_signsWithEachAlgorithm_andSetsWhatItIsTold() throws Exception
    {
        Instant now = Instant.now();
        for (JWSAlgorithm algorithm : List.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256, JWSAlgorithm.EdDSA))
        {
            String jwt = as.token().algorithm(algorithm).subject("erin").clientId("cli").audience(MCP).scope("a b")
                .issuedAt(now.minusSeconds(10)).notBefore(now.minusSeconds(5)).expiresAt(now.plusSeconds(30)).claim("tenant", "t1").sign();
            JWTClaimsSet claims = verify(jwt, MCP);
            assertEquals(algorithm, SignedJWT.parse(jwt).getHeader().getAlgorithm());
            assertEquals("erin", claims.getSubject());
            assertEquals("cli", claims.getStringClaim("client_id"));
            assertEquals("a b", claims.getStringClaim("scope"));
            assertEquals("t1", claims.getStringClaim("tenant"));
            assertEquals(now.plusSeconds(30).getEpochSecond(), claims.getExpirationTime().toInstant().getEpochSecond());
        }
        SignedJWT unknownKid = SignedJWT.parse(as.token().audience(MCP).kid("rsa-9").sign());
        assertEquals("rsa-9", unknownKid.getHeader().getKeyID());
        assertRefused(unknownKid.serialize());
        assertRefused(as.token().audience(MCP).issuer("http://elsewhere").sign());
        assertRefused(as.token().audience(OTHER_MCP).sign());
        assertRefused(as.token().audience(MCP).expiresAt(now.minusSeconds(120)).sign());
        assertRefused(as.token().audience(MCP).notBefore(now.plusSeconds(120)).sign());
        assertNull(as.token().without("exp", "sub").claims().getExpirationTime());
        assertEquals(JOSEObjectType.JWT, SignedJWT.parse(as.token().type("JWT").sign()).getHeader().getType());
    }

    @Test
    void forgeries_areWhatTheyClaim_andAVerifierOfTheJwksRefusesEach() throws Exception
    {
        JWTClaimsSet claims = as.token().audience(MCP).scope("mcp:read").claims();

        JWT unsigned = JWTParser.parse(as.unsigned(claims));
        assertInstanceOf(PlainJWT.class, unsigned);
        assertEquals("none", unsigned.getHeader().getAlgorithm().getName());
        assertTrue(as.unsigned(claims).endsWith("."));

        SignedJWT hmac = SignedJWT.parse(as.hmacWithPublicKey(claims));
        RSAKey rsa = (RSAKey)JWKSet.parse(get(as.jwksUri()).body()).getKeyByKeyId("rsa-1");
        assertEquals(JWSAlgorithm.HS256, hmac.getHeader().getAlgorithm());
        assertEquals("rsa-1", hmac.getHeader().getKeyID());
        assertTrue(hmac.verify(new MACVerifier(rsa.toRSAPublicKey().getEncoded())), "keyed with the published key's DER");
        for (TestTokens.PublicKeyAs form : TestTokens.PublicKeyAs.values())
            assertRefused(as.tokens().hmacWithPublicKey(claims, form));

        String tampered = as.tampered(as.token().audience(MCP).scope("mcp:read").sign());
        assertEquals("mcp:read mcp:admin", SignedJWT.parse(tampered).getJWTClaimsSet().getStringClaim("scope"));

        SignedJWT stranger = SignedJWT.parse(as.signedByStranger(claims));
        assertEquals("stranger", stranger.getHeader().getKeyID());
        SignedJWT headerKey = SignedJWT.parse(as.tokens().signedWithHeaderKey(claims));
        assertTrue(headerKey.getHeader().getJWK() != null);

        for (String forged : List.of(as.unsigned(claims), as.tokens().unsigned(claims, "NONE"), hmac.serialize(), tampered,
            stranger.serialize(), as.tokens().signedByStranger(claims, "rsa-1"), headerKey.serialize()))
            assertRefused(forged);
        verify(as.token().audience(MCP).scope("mcp:read").sign(), MCP);
    }

    // --------------------------------------------------------------------------- helpers

    /**
     * A resource server's check: JWKS of the double, at+jwt, RS256/ES256/EdDSA, this issuer and
     * audience. nimbus's own key selector turns JWKs into {@code java.security} keys, which it
     * cannot do for Ed25519 (OKP) keys and silently skips them; such a key is carried through in an
     * {@link OkpKey} to a verifier factory that knows it.
     */
    private JWTClaimsSet verify(String jwt, String audience) throws Exception
    {
        JWKSource<SecurityContext> jwks = JWKSourceBuilder.<SecurityContext>create(new URL(as.jwksUri()))
            .cache(false).refreshAheadCache(false).rateLimited(false).retrying(false).build();
        Set<JWSAlgorithm> allowed = Set.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256, JWSAlgorithm.EdDSA);
        DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
        processor.setJWSTypeVerifier(new DefaultJOSEObjectTypeVerifier<>(TestTokens.ACCESS_TOKEN_TYPE));
        processor.setJWSKeySelector((header, context) ->
        {
            if (!allowed.contains(header.getAlgorithm()))
                return List.of();
            List<Key> keys = new ArrayList<>();
            try
            {
                for (JWK jwk : jwks.get(new JWKSelector(JWKMatcher.forJWSHeader(header)), context))
                    keys.add(jwk instanceof OctetKeyPair okp ? new OkpKey(okp) : ((AsymmetricJWK)jwk).toPublicKey());
            }
            catch (JOSEException x)
            {
                throw new KeySourceException("unusable key", x);
            }
            return keys;
        });
        processor.setJWSVerifierFactory(new DefaultJWSVerifierFactory()
        {
            @Override
            public JWSVerifier createJWSVerifier(JWSHeader header, Key key) throws JOSEException
            {
                return key instanceof OkpKey okp ? new Ed25519Verifier(okp.jwk()) : super.createJWSVerifier(header, key);
            }
        });
        processor.setJWTClaimsSetVerifier(new DefaultJWTClaimsVerifier<>(audience,
            new JWTClaimsSet.Builder().issuer(as.issuer()).build(), Set.of("sub", "exp", "iat")));
        return processor.process(jwt, null);
    }

    /** An Ed25519 public JWK in the shape nimbus's processor passes keys around in. */
    private record OkpKey(OctetKeyPair jwk) implements PublicKey
    {
        @Override
        public String getAlgorithm()
        {
            return "EdDSA";
        }

        @Override
        public String getFormat()
        {
            return null;
        }

        @Override
        public byte[] getEncoded()
        {
            return null;
        }
    }

    private void assertRefused(String jwt)
    {
        assertThrows(Exception.class, () -> verify(jwt, MCP), jwt);
    }

    private List<String> kids() throws Exception
    {
        return JWKSet.parse(get(as.jwksUri()).body()).getKeys().stream().map(k -> k.getKeyID()).toList();
    }

    private JsonNode introspect(String token) throws Exception
    {
        HttpResponse<String> response = post(as.introspectionEndpoint(), basic("gateway", "gateway-secret"), "token", token);
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }

    private static void assertError(int status, String error, HttpResponse<String> response) throws Exception
    {
        assertEquals(status, response.statusCode(), response.body());
        assertEquals(error, JSON.readTree(response.body()).path("error").asText(), response.body());
        assertFalse(response.body().contains("secret"), response.body());
    }

    private HttpResponse<String> get(String url) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A form POST; {@code authorization} null sends none. */
    private HttpResponse<String> post(String url, String authorization, String... pairs) throws Exception
    {
        List<String> fields = new ArrayList<>();
        for (int i = 0; i < pairs.length; i += 2)
            fields.add(URLEncoder.encode(pairs[i], StandardCharsets.UTF_8) + "=" + URLEncoder.encode(pairs[i + 1], StandardCharsets.UTF_8));
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString(String.join("&", fields)));
        if (authorization != null)
            request.header("Authorization", authorization);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String basic(String id, String secret)
    {
        String pair = URLEncoder.encode(id, StandardCharsets.UTF_8) + ":" + URLEncoder.encode(secret, StandardCharsets.UTF_8);
        return "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8));
    }

    private static List<String> strings(JsonNode array)
    {
        List<String> values = new ArrayList<>();
        array.forEach(v -> values.add(v.asText()));
        return values;
    }
}
