package io.sandgate.testing;

import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.MimeTypes;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.LifeCycle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@code src/test/mcp-ts/oauth-client.mjs} (the TypeScript MCP SDK's {@code ClientCredentialsProvider},
 * unmodified) against {@link AuthorizationServerDouble} and a {@link ProtectedEndpoint}: a stand-in
 * for the gateway's protected MCP endpoint, written here from the MCP authorization spec, that
 * checks bearer tokens and relays to the Java-SDK {@link McpUpstream}. It shows the script works and
 * pins what the SDK does with the endpoint's 401, 403 and metadata (see the class comment of
 * {@link AuthorizationServerDouble}): the gateway's own tests run the same script against the gateway.
 */
@ExtendWith(WorkDirExtension.class)
class OAuthClientScriptTest
{
    private static final Path CLIENT_DIR = MavenPaths.projectBase().resolve("src/test/mcp-ts");
    private static final Duration PROCESS_TIMEOUT = Duration.ofSeconds(75);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path node;
    private static Path work;
    private static AuthorizationServerDouble as;
    private static McpUpstream upstream;
    private static ProtectedEndpoint endpoint;

    @BeforeAll
    static void start(WorkDir workDir) throws Exception
    {
        node = LocalResources.executable("node");
        if (node == null || !Files.isRegularFile(CLIENT_DIR.resolve("node_modules/@modelcontextprotocol/sdk/package.json")))
            fail("node and the locked packages of src/test/mcp-ts are needed: run ./scripts/test.sh (apt-get install nodejs npm; npm ci --prefix src/test/mcp-ts)");
        work = workDir.getEmptyPathDir();
        as = AuthorizationServerDouble.start().client("app", "app-secret", Set.of("mcp:tools", "mcp:admin"));
        upstream = McpUpstream.start();
        endpoint = new ProtectedEndpoint(as, upstream);
    }

    @AfterAll
    static void stop()
    {
        LifeCycle.stop(endpoint.server);
        upstream.close();
        as.close();
    }

    @BeforeEach
    void reset()
    {
        upstream.clearRecords();
        endpoint.resource = null;
        endpoint.requiredScope = "mcp:tools";
        endpoint.metadataUrlInChallenge = true;
        endpoint.metadataAtRootOnly = false;
    }

    @Test
    void streamable_readsThe401_discoversBothMetadata_getsATokenForTheResource_callsTools() throws Exception
    {
        int issuedBefore = as.issued().size();
        JsonNode report = run(0, "streamable", endpoint.url("/mcp"), "app", "app-secret", "mcp:tools", "--issuer=" + as.issuer(), "--refused=no_such_tool");

        assertEquals(5, report.path("echoMatched").asInt(), report::toPrettyString);
        assertTrue(report.path("refused").path("refused").asBoolean(), report::toPrettyString);
        assertEquals(1, report.path("endpointStatuses").path("POST 401").asInt(), report::toPrettyString);
        assertEquals(List.of("Bearer resource_metadata=\"" + endpoint.url("/.well-known/oauth-protected-resource/mcp") + "\", scope=\"mcp:tools\""),
            strings(report.path("wwwAuthenticate")));
        assertEquals(List.of("GET " + endpoint.url("/.well-known/oauth-protected-resource/mcp") + " -> 200",
            "GET " + as.metadataUrl() + " -> 200"), strings(report.path("metadataFetches")));
        JsonNode tokenRequest = report.path("tokenRequests").path(0);
        assertEquals(1, report.path("tokenRequests").size(), report::toPrettyString);
        assertEquals(as.tokenEndpoint(), tokenRequest.path("url").asText());
        assertEquals("client_credentials", tokenRequest.path("grant_type").asText());
        assertEquals("client_secret_basic", tokenRequest.path("clientAuthentication").asText());
        assertEquals("mcp:tools", tokenRequest.path("scope").asText());
        assertEquals(List.of(endpoint.url("/mcp")), strings(tokenRequest.path("resource")));
        assertEquals(endpoint.url("/mcp"), report.path("token").path("aud").asText());
        assertEquals(List.of(endpoint.url("/mcp")), as.issued().get(issuedBefore).audience());
        assertUpstreamSawNoToken(McpUpstream.TRANSPORT_STREAMABLE);
        assertFalse(report.toString().contains("app-secret"), "the secret is in the report");
    }

    @Test
    void sse_theResourceCoversTheStreamUrl_andPostsToTheMessageUrlUseTheSameToken() throws Exception
    {
        JsonNode report = run(0, "sse", endpoint.url("/sse"), "app", "app-secret", "mcp:tools", "--issuer=" + as.issuer());

        assertEquals(5, report.path("echoMatched").asInt(), report::toPrettyString);
        assertEquals(1, report.path("endpointStatuses").path("GET 401").asInt(), report::toPrettyString);
        assertEquals(1, report.path("tokenRequests").size(), report::toPrettyString);
        assertEquals(List.of(endpoint.url("/sse")), strings(report.path("tokenRequests").path(0).path("resource")));
        assertUpstreamSawNoToken(McpUpstream.TRANSPORT_SSE);
    }

    @Test
    void challengeWithoutMetadataUrl_theSdkTriesThePathSuffixedWellKnown_thenTheRoot() throws Exception
    {
        endpoint.metadataUrlInChallenge = false;
        endpoint.metadataAtRootOnly = true;

        JsonNode report = run(0, "streamable", endpoint.url("/mcp"), "app", "app-secret", "mcp:tools");

        assertEquals(List.of("GET " + endpoint.url("/.well-known/oauth-protected-resource/mcp") + " -> 404",
            "GET " + endpoint.url("/.well-known/oauth-protected-resource") + " -> 200",
            "GET " + as.metadataUrl() + " -> 200"), strings(report.path("metadataFetches")));
        assertEquals(List.of(endpoint.url("/mcp")), strings(report.path("tokenRequests").path(0).path("resource")));
    }

    @Test
    void metadataResourceNotAPrefixOfTheUrl_theSdkRefusesBeforeAskingForAToken() throws Exception
    {
        endpoint.resource = endpoint.url("/mc");
        int before = as.tokenRequests();

        JsonNode report = run(1, "streamable", endpoint.url("/mcp"), "app", "app-secret", "mcp:tools", "--issuer=" + as.issuer());

        assertTrue(report.path("error").asText().contains("Protected resource " + endpoint.url("/mc") + " does not match expected"),
            report::toPrettyString);
        assertEquals(before, as.tokenRequests());
    }

    @Test
    void metadataNamingAnotherAuthorizationServer_theSdkSendsTheCredentialsNowhere() throws Exception
    {
        int before = as.tokenRequests();

        JsonNode report = run(1, "streamable", endpoint.url("/mcp"), "app", "app-secret", "mcp:tools", "--issuer=http://127.0.0.1:9");

        assertTrue(report.path("error").asText().contains("is not presented to " + as.issuer()), report::toPrettyString);
        assertEquals(before, as.tokenRequests());
        assertEquals(0, report.path("tokenRequests").size());
    }

    @Test
    void insufficientScope403_theSdkFetchesOneMoreTokenWithItsOwnScope_thenGivesUp() throws Exception
    {
        endpoint.requiredScope = "mcp:admin";

        JsonNode report = run(1, "streamable", endpoint.url("/mcp"), "app", "app-secret", "mcp:tools");

        assertTrue(report.path("error").asText().contains("Server returned 403 after trying upscoping"), report::toPrettyString);
        assertEquals(List.of("mcp:tools", "mcp:tools"),
            report.path("tokenRequests").findValues("scope").stream().map(JsonNode::asText).toList(), report::toPrettyString);
        assertTrue(upstream.requests.isEmpty(), () -> upstream.requests.toString());
    }

    private static void assertUpstreamSawNoToken(String transport)
    {
        assertEquals(5, upstream.callsOf("echo").size());
        assertTrue(upstream.callsOf("echo").stream().allMatch(c -> c.transport().equals(transport)));
        assertFalse(upstream.requests.isEmpty());
        for (McpUpstream.Seen seen : upstream.requests)
            assertNull(seen.header("authorization"), seen::toString);
    }

    private static List<String> strings(JsonNode array)
    {
        List<String> values = new ArrayList<>();
        array.forEach(v -> values.add(v.asText()));
        return values;
    }

    /** Runs the script; fails unless it exits with {@code exitCode} and prints its JSON line. */
    private static JsonNode run(int exitCode, String... args) throws Exception
    {
        Path out = Files.createTempFile(work, "oauth-client", ".json");
        Path err = Files.createTempFile(work, "oauth-client", ".err");
        List<String> command = new ArrayList<>(List.of(node.toString(), CLIENT_DIR.resolve("oauth-client.mjs").toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(CLIENT_DIR.toFile())
            .redirectOutput(out.toFile()).redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .start();
        if (!process.waitFor(PROCESS_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            fail("oauth-client.mjs did not end within " + PROCESS_TIMEOUT + "\n" + Files.readString(err));
        }
        String stdout = Files.readString(out, StandardCharsets.UTF_8).trim();
        if (process.exitValue() != exitCode || stdout.isEmpty())
            fail("oauth-client.mjs " + String.join(" ", args) + ": exit " + process.exitValue() + " (expected: " + exitCode + ")\n--- stderr\n"
                + Files.readString(err, StandardCharsets.UTF_8) + "--- stdout\n" + stdout);
        String line = stdout.substring(stdout.lastIndexOf('\n') + 1);
        System.out.println("oauth-client.mjs " + args[0] + ": " + line);
        JsonNode report = JSON.readTree(line);
        assertEquals(exitCode == 0, report.path("ok").asBoolean(), report::toPrettyString);
        return report;
    }

    /**
     * A protected MCP endpoint as the MCP authorization spec describes one, in front of
     * {@link McpUpstream}: {@code /mcp} is its own resource, {@code /sse} and the {@code /message}
     * URL its stream names share the resource {@code /sse}. RFC 9728 metadata is served at the
     * path-suffixed well-known URL of each. A request without a valid token for the resource (RS256
     * of the double's JWKS, {@code at+jwt}, this issuer, {@code aud} = the resource) gets 401 and
     * {@code WWW-Authenticate: Bearer resource_metadata="...", scope="..."} ({@code error="invalid_token"}
     * when a token was sent); a token without the required scope gets 403
     * {@code error="insufficient_scope"}. A request that passes is relayed without its
     * {@code Authorization}: no token passthrough.
     */
    private static final class ProtectedEndpoint extends Handler.Wrapper
    {
        static final String WELL_KNOWN = "/.well-known/oauth-protected-resource";

        final Server server;
        final String base;
        final AuthorizationServerDouble as;
        final JWKSource<SecurityContext> jwks;
        /** The metadata's {@code resource} and the audience required, when not the endpoint's own URL. */
        volatile String resource;
        volatile String requiredScope;
        volatile boolean metadataUrlInChallenge;
        /** Metadata for {@code /mcp} at {@code /.well-known/oauth-protected-resource} instead of its path-suffixed URL. */
        volatile boolean metadataAtRootOnly;

        ProtectedEndpoint(AuthorizationServerDouble as, McpUpstream upstream) throws Exception
        {
            this.as = as;
            this.jwks = JWKSourceBuilder.<SecurityContext>create(new URL(as.jwksUri())).refreshAheadCache(false).build();
            ProxyHandler.Reverse relay = new ProxyHandler.Reverse(request ->
                HttpURI.build(request.getHttpURI()).scheme("http").host("127.0.0.1").port(upstream.port()).asImmutable())
            {
                @Override
                protected void copyRequestHeaders(Request clientToProxyRequest, org.eclipse.jetty.client.Request proxyToServerRequest)
                {
                    super.copyRequestHeaders(clientToProxyRequest, proxyToServerRequest);
                    proxyToServerRequest.headers(headers -> headers.remove(HttpHeader.AUTHORIZATION));
                }
            };
            setHandler(relay);
            server = LoopbackServers.serve("protected-endpoint", this);
            base = "http://127.0.0.1:" + LoopbackServers.port(server);
        }

        String url(String path)
        {
            return base + path;
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            String path = Request.getPathInContext(request);
            if (path.startsWith(WELL_KNOWN))
            {
                String endpointPath = path.substring(WELL_KNOWN.length());
                if (metadataAtRootOnly)
                    endpointPath = endpointPath.isEmpty() ? "/mcp" : "";
                if (!endpointPath.equals("/mcp") && !endpointPath.equals("/sse"))
                    return answer(response, callback, HttpStatus.NOT_FOUND_404, Map.of("error", "not_found"), null);
                Map<String, Object> metadata = new LinkedHashMap<>();
                metadata.put("resource", resourceOf(endpointPath));
                metadata.put("authorization_servers", List.of(as.issuer()));
                metadata.put("scopes_supported", List.of(requiredScope));
                metadata.put("bearer_methods_supported", List.of("header"));
                return answer(response, callback, HttpStatus.OK_200, metadata, null);
            }
            String endpointPath = path.equals("/mcp") ? "/mcp" : path.equals("/sse") || path.equals("/message") ? "/sse" : null;
            if (endpointPath == null)
                return answer(response, callback, HttpStatus.NOT_FOUND_404, Map.of("error", "not_found"), null);
            String challenge = "Bearer " + (metadataUrlInChallenge ? "resource_metadata=\"" + url(WELL_KNOWN + endpointPath) + "\", " : "")
                + "scope=\"" + requiredScope + "\"";
            String authorization = request.getHeaders().get(HttpHeader.AUTHORIZATION);
            if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7))
                return answer(response, callback, HttpStatus.UNAUTHORIZED_401, Map.of("error", "unauthorized"), challenge);
            JWTClaimsSet claims;
            try
            {
                claims = verify(authorization.substring(7).trim(), resourceOf(endpointPath));
            }
            catch (Exception x)
            {
                return answer(response, callback, HttpStatus.UNAUTHORIZED_401, Map.of("error", "invalid_token"), challenge + ", error=\"invalid_token\"");
            }
            String scope = claims.getStringClaim("scope");
            if (scope == null || !List.of(scope.split(" ")).contains(requiredScope))
                return answer(response, callback, HttpStatus.FORBIDDEN_403, Map.of("error", "insufficient_scope"), challenge + ", error=\"insufficient_scope\"");
            return super.handle(request, response, callback);
        }

        private String resourceOf(String endpointPath)
        {
            return resource != null ? resource : url(endpointPath);
        }

        private JWTClaimsSet verify(String token, String audience) throws Exception
        {
            DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
            processor.setJWSTypeVerifier(new DefaultJOSEObjectTypeVerifier<>(TestTokens.ACCESS_TOKEN_TYPE));
            processor.setJWSKeySelector(new JWSVerificationKeySelector<>(JWSAlgorithm.RS256, jwks));
            processor.setJWTClaimsSetVerifier(new DefaultJWTClaimsVerifier<>(audience,
                new JWTClaimsSet.Builder().issuer(as.issuer()).build(), Set.of("sub", "exp")));
            return processor.process(token, null);
        }

        private static boolean answer(Response response, Callback callback, int status, Map<String, Object> body, String challenge) throws Exception
        {
            response.setStatus(status);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, MimeTypes.Type.APPLICATION_JSON.asString());
            if (challenge != null)
                response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, challenge);
            response.write(true, ByteBuffer.wrap(JSON.writeValueAsBytes(body)), callback);
            return true;
        }
    }
}
