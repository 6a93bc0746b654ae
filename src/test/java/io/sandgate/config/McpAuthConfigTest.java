package io.sandgate.config;

import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.sandgate.config.ConfigProblems.problems;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code mcp.auth}, and each MCP server's {@code auth}, {@code quota} and {@code credential}: what
 * they default to, how a server's table overrides the global one, and a problem naming the key for
 * each value the gateway cannot take.
 */
class McpAuthConfigTest
{
    private static final String ISSUER = "https://auth.example";
    private static final Map<String, Object> AUTH = Map.of("issuers", List.of(ISSUER), "jwks-url", ISSUER + "/jwks", "resource-url", "https://gw.example");

    /** A server named {@code tools} with these keys besides its name and URL. */
    private static Map<String, Object> tools(Object... keysAndValues)
    {
        return server("tools", keysAndValues);
    }

    private static Map<String, Object> server(String name, Object... keysAndValues)
    {
        Map<String, Object> server = new LinkedHashMap<>();
        server.put("name", name);
        server.put("url", "http://" + name + "-mcp:8080/mcp");
        for (int i = 0; i < keysAndValues.length; i += 2)
            server.put((String)keysAndValues[i], keysAndValues[i + 1]);
        return server;
    }

    private static Map<String, Object> with(Map<String, Object> table, Object... keysAndValues)
    {
        Map<String, Object> copy = new HashMap<>(table);
        for (int i = 0; i < keysAndValues.length; i += 2)
        {
            if (keysAndValues[i + 1] == null)
                copy.remove((String)keysAndValues[i]);
            else
                copy.put((String)keysAndValues[i], keysAndValues[i + 1]);
        }
        return copy;
    }

    private static Map<String, Object> values(Map<String, Object> auth, List<Map<String, Object>> servers)
    {
        Map<String, Object> values = new HashMap<>();
        if (auth != null)
            values.put("mcp.auth", auth);
        values.put("mcp.servers", servers);
        return values;
    }

    private static McpConfig.Server load(Map<String, Object> auth, Map<String, Object> server)
    {
        return ConfigLoader.fromValues(values(auth, List.of(server))).mcp().server((String)server.get("name"));
    }

    private static String problem(Map<String, Object> auth, Map<String, Object> server)
    {
        return problems(values(auth, List.of(server)));
    }

    private static void assertMentions(String problems, String... parts)
    {
        for (String part : parts)
            assertTrue(problems.contains(part), "'" + part + "' in: " + problems);
    }

    @Nested
    class Defaults
    {
        @Test
        void audiences_areTheServersResourceUrl_andItsEndpoints()
        {
            McpAuthConfig auth = load(AUTH, tools()).auth().orElseThrow();
            assertEquals(URI.create("https://gw.example/mcp/tools"), auth.resource());
            assertEquals(List.of("https://gw.example/mcp/tools", "https://gw.example/mcp/tools/mcp", "https://gw.example/mcp/tools/sse",
                "https://gw.example/mcp/tools/message"), auth.audiences());
            assertEquals(Set.of("RS256", "ES256", "EdDSA"), auth.algorithms());
            assertEquals(Duration.ofSeconds(30), auth.clockSkew());
            assertEquals(List.of(ISSUER), auth.authorizationServers(), "the issuers, unless told otherwise");
            assertEquals(List.of(), auth.scopes());
            assertEquals(Optional.of(URI.create(ISSUER + "/jwks")), auth.jwksUrl());
        }

        /** Each server is a resource of its own: a token for one is not for another of the same gateway. */
        @Test
        void eachServer_hasAudiencesOfItsOwn()
        {
            McpConfig mcp = ConfigLoader.fromValues(values(AUTH, List.of(tools(), server("files")))).mcp();
            List<String> tools = mcp.server("tools").auth().orElseThrow().audiences();
            List<String> files = mcp.server("files").auth().orElseThrow().audiences();
            assertTrue(tools.stream().noneMatch(files::contains), tools + " and " + files);
        }

        @ParameterizedTest
        @ValueSource(strings = {"https://gw.example/", "https://gw.example//"})
        void resourceUrl_withATrailingSlash_makesTheSameResource(String url)
        {
            assertEquals(URI.create("https://gw.example/mcp/tools"), load(with(AUTH, "resource-url", url), tools()).auth().orElseThrow().resource());
        }

        /** Behind a context path (the WAR), the path is part of the resource. */
        @Test
        void resourceUrl_keepsItsPath()
        {
            assertEquals(URI.create("https://gw.example/base/mcp/tools"),
                load(with(AUTH, "resource-url", "https://gw.example/base"), tools()).auth().orElseThrow().resource());
        }

        @Test
        void withoutResourceUrl_theFirstPublicOriginIsTheGatewaysUrl()
        {
            Map<String, Object> values = values(with(AUTH, "resource-url", null), List.of(tools()));
            values.put("server.public-origins", "https://public.example,https://other.example");
            McpAuthConfig auth = ConfigLoader.fromValues(values).mcp().server("tools").auth().orElseThrow();
            assertEquals(URI.create("https://public.example/mcp/tools"), auth.resource());
            assertEquals("https://public.example/mcp/tools", auth.audiences().get(0));
        }

        @Test
        void givenValues_replaceTheDefaults()
        {
            McpAuthConfig auth = load(with(AUTH, "audiences", List.of("api://tools"), "scopes", List.of("mcp", "mcp:read"), "algorithms", List.of("PS256"),
                "clock-skew", "5s", "authorization-servers", List.of("https://login.example")), tools()).auth().orElseThrow();
            assertEquals(List.of("api://tools"), auth.audiences());
            assertEquals(List.of("mcp", "mcp:read"), auth.scopes());
            assertEquals(Set.of("PS256"), auth.algorithms());
            assertEquals(Duration.ofSeconds(5), auth.clockSkew());
            assertEquals(List.of("https://login.example"), auth.authorizationServers());
        }

        @Test
        void aServersAuth_overridesTheGlobalOne_keyByKey()
        {
            McpConfig mcp = ConfigLoader.fromValues(values(with(AUTH, "scopes", List.of("mcp")), List.of(
                tools("auth", Map.of("scopes", List.of("mcp:admin"), "issuers", List.of("https://other-auth.example"))),
                server("files")))).mcp();
            McpAuthConfig tools = mcp.server("tools").auth().orElseThrow();
            assertEquals(List.of("mcp:admin"), tools.scopes());
            assertEquals(List.of("https://other-auth.example"), tools.issuers());
            assertEquals(Optional.of(URI.create(ISSUER + "/jwks")), tools.jwksUrl(), "what it does not set comes from mcp.auth");
            assertEquals(URI.create("https://gw.example/mcp/tools"), tools.resource());
            McpAuthConfig files = mcp.server("files").auth().orElseThrow();
            assertEquals(List.of("mcp"), files.scopes(), "the other server keeps the global table");
            assertEquals(List.of(ISSUER), files.issuers());
        }

        @Test
        void aServersAuth_aloneMakesItsEndpointsAuthenticate()
        {
            McpConfig mcp = ConfigLoader.fromValues(values(null, List.of(tools("auth", AUTH), server("files")))).mcp();
            assertTrue(mcp.server("tools").auth().isPresent());
            assertTrue(mcp.server("files").auth().isEmpty(), "without mcp.auth, a server without auth is open");
        }

        @ParameterizedTest
        @ValueSource(strings = {"off", "false"})
        void authOff_leavesOneServerOpen(String off)
        {
            McpConfig mcp = ConfigLoader.fromValues(values(AUTH, List.of(tools("auth", off), server("files")))).mcp();
            assertTrue(mcp.server("tools").auth().isEmpty());
            assertTrue(mcp.server("files").auth().isPresent());
            assertTrue(ConfigLoader.fromValues(values(AUTH, List.of(tools("auth", false)))).mcp().server("tools").auth().isEmpty(), "YAML's off is false");
        }

        @Test
        void withoutAuthAnywhere_serversAreOpen()
        {
            assertTrue(load(null, tools()).auth().isEmpty());
        }

        @Test
        void introspection_insteadOfJwks()
        {
            McpAuthConfig auth = load(with(AUTH, "jwks-url", null, "introspection",
                Map.of("url", ISSUER + "/introspect", "client-id", "sandgate", "client-secret", "as-client")), tools()).auth().orElseThrow();
            assertTrue(auth.jwksUrl().isEmpty());
            assertEquals(new McpAuthConfig.Introspection(URI.create(ISSUER + "/introspect"), "sandgate", "as-client"), auth.introspection().orElseThrow());
        }

        @Test
        void quota_windowDefaultsToAMinute_andToolsAloneAreALimit()
        {
            McpQuota quota = load(null, tools("quota", Map.of("tools", Map.of("search", 10)))).quota().orElseThrow();
            assertEquals(0, quota.calls(), "no limit on all calls, only on search's");
            assertEquals(Duration.ofMinutes(1), quota.window());
            assertEquals(Optional.of(10), quota.limitOf("search"));
            assertEquals(Optional.empty(), quota.limitOf("echo"));
            assertEquals(new McpQuota(600, Duration.ofSeconds(10), Map.of()), load(null, tools("quota", Map.of("calls", 600, "window", "10s"))).quota().orElseThrow());
        }

        @Test
        void credential_defaultsToABearerAuthorization()
        {
            McpConfig.Server server = load(null, tools("credential", Map.of("secret", "tools-key")));
            McpUpstreamCredential credential = server.credential().orElseThrow();
            assertEquals(Optional.of("tools-key"), credential.secret());
            assertEquals("Authorization", credential.header());
            assertEquals("Bearer {secret}", credential.format());
            assertTrue(ConfigLoader.fromValues(values(null, List.of(server("files", "credential", Map.of("secret", "k"))))).mcp().needsSecrets());
            assertFalse(ConfigLoader.fromValues(values(null, List.of(server("files")))).mcp().needsSecrets());
        }

        @Test
        void tokenExchange_audienceDefaultsToTheServersUrl()
        {
            McpUpstreamCredential.TokenExchange exchange = load(AUTH, tools("credential",
                Map.of("token-exchange", Map.of("url", ISSUER + "/token", "client-id", "sandgate", "client-secret", "as-client"))))
                .credential().orElseThrow().exchange().orElseThrow();
            assertEquals("http://tools-mcp:8080/mcp", exchange.audience());
            assertEquals(URI.create(ISSUER + "/token"), exchange.url());
            assertEquals(Optional.empty(), exchange.scope());
        }
    }

    @Nested
    class Errors
    {
        @Test
        void missingIssuers()
        {
            assertMentions(problem(with(AUTH, "issuers", null), tools()), "mcp.auth.issuers: missing", "issuers accepted");
            assertMentions(problem(with(AUTH, "issuers", List.of()), tools()), "mcp.auth.issuers: missing");
        }

        @Test
        void neitherJwksUrlNorIntrospection()
        {
            assertMentions(problem(with(AUTH, "jwks-url", null), tools()), "mcp.auth: jwks-url or introspection missing");
        }

        /** An HMAC "key" would be the issuer's public key, which anyone has: a token signed with it must never pass. */
        @ParameterizedTest
        @ValueSource(strings = {"HS256", "HS384", "HS512", "none", "NONE", "rs256"})
        void symmetricOrNoAlgorithm_isRefused(String algorithm)
        {
            assertMentions(problem(with(AUTH, "algorithms", List.of("RS256", algorithm)), tools()), "mcp.auth.algorithms: " + algorithm, "asymmetric",
                "none and HMAC are never accepted");
        }

        @Test
        void noResourceUrl_andNoPublicOrigin()
        {
            assertMentions(problem(with(AUTH, "resource-url", null), tools()), "mcp.auth.resource-url: missing", "server.public-origins");
        }

        @Test
        void badUrls()
        {
            assertMentions(problem(with(AUTH, "jwks-url", "not a url"), tools()), "mcp.auth.jwks-url");
            assertMentions(problem(with(AUTH, "clock-skew", "soon"), tools()), "mcp.auth.clock-skew");
        }

        @Test
        void introspection_withoutWhatItNeeds()
        {
            Map<String, Object> introspection = Map.of("url", ISSUER + "/introspect", "client-id", "sandgate", "client-secret", "as-client");
            for (String key : List.of("url", "client-id", "client-secret"))
                assertMentions(problem(with(AUTH, "jwks-url", null, "introspection", with(introspection, key, null)), tools()),
                    "mcp.auth.introspection." + key + ": missing");
            assertMentions(problem(with(AUTH, "introspection", with(introspection, "secret", "x")), tools()), "mcp.auth.introspection: unknown key secret");
        }

        @Test
        void toolScopes_withoutAuth()
        {
            assertMentions(problem(null, tools("tools", Map.of("scopes", Map.of("mcp:admin", List.of("*"))))), "mcp.servers: tools: tools.scopes without auth");
            assertMentions(problem(AUTH, tools("auth", "off", "tools", Map.of("scopes", Map.of("mcp:admin", List.of("*"))))), "tools.scopes without auth");
        }

        @Test
        void tokenExchange_withoutAuth()
        {
            assertMentions(problem(null, tools("credential", Map.of("token-exchange", Map.of("url", ISSUER + "/token", "client-id", "c", "client-secret", "s")))),
                "mcp.servers: tools: credential.token-exchange without auth");
        }

        @Test
        void tokenExchange_withoutWhatItNeeds()
        {
            Map<String, Object> exchange = Map.of("url", ISSUER + "/token", "client-id", "c", "client-secret", "s");
            for (String key : List.of("url", "client-id", "client-secret"))
                assertMentions(problem(AUTH, tools("credential", Map.of("token-exchange", with(exchange, key, null)))),
                    "mcp.servers: tools: credential.token-exchange." + key + ": missing");
            assertMentions(problem(AUTH, tools("credential", Map.of("token-exchange", with(exchange, "resource", "x")))),
                "mcp.servers: tools: credential.token-exchange: unknown key resource");
        }

        @Test
        void quota_withNoLimit()
        {
            assertMentions(problem(null, tools("quota", Map.of("window", "1m"))), "mcp.servers: tools: quota: no limit");
            assertMentions(problem(null, tools("quota", Map.of("calls", 0))), "mcp.servers: tools: quota: no limit");
            assertMentions(problem(null, tools("quota", Map.of("tools", Map.of()))), "mcp.servers: tools: quota: no limit");
        }

        @Test
        void quota_badValues()
        {
            assertMentions(problem(null, tools("quota", Map.of("calls", -1))), "mcp.servers: tools: quota.calls: -1");
            assertMentions(problem(null, tools("quota", Map.of("calls", "many"))), "mcp.servers: tools: quota.calls: many");
            assertMentions(problem(null, tools("quota", Map.of("calls", 5, "window", "0s"))), "mcp.servers: tools: quota.window: 0s");
            assertMentions(problem(null, tools("quota", Map.of("tools", Map.of("search", 0)))), "mcp.servers: tools: quota.tools.search: 0");
            assertMentions(problem(null, tools("quota", Map.of("tools", List.of("search")))), "mcp.servers: tools: quota.tools");
            assertMentions(problem(null, tools("quota", 100)), "mcp.servers: tools: quota", McpQuota.SHAPE);
        }

        @Test
        void credential_withBothSecretAndTokenExchange_orNeither()
        {
            Map<String, Object> exchange = Map.of("url", ISSUER + "/token", "client-id", "c", "client-secret", "s");
            assertMentions(problem(AUTH, tools("credential", Map.of("secret", "k", "token-exchange", exchange))),
                "mcp.servers: tools: credential", "one of secret and token-exchange");
            assertMentions(problem(AUTH, tools("credential", Map.of("header", "X-Api-Key"))), "mcp.servers: tools: credential", "one of secret and token-exchange");
        }

        @Test
        void credential_badHeaderOrFormat()
        {
            assertMentions(problem(null, tools("credential", Map.of("secret", "k", "header", "X Api: Key"))), "mcp.servers: tools: credential.header: X Api: Key");
            assertMentions(problem(null, tools("credential", Map.of("secret", "k", "format", "Bearer fixed"))), "mcp.servers: tools: credential.format: Bearer fixed",
                "{secret}");
        }

        @Test
        void unknownKeys_areNamed()
        {
            assertMentions(problem(with(AUTH, "issuer", ISSUER), tools()), "mcp.auth: unknown key issuer");
            assertMentions(problem(null, tools("auth", with(AUTH, "jwks", "x"))), "mcp.servers: tools: auth: unknown key jwks");
            assertMentions(problem(null, tools("quota", Map.of("calls", 1, "per", "1m"))), "mcp.servers: tools: quota: unknown key per");
            assertMentions(problem(null, tools("credential", Map.of("secret", "k", "value", "v"))), "mcp.servers: tools: credential: unknown key value");
            assertMentions(problem(null, tools("limits", Map.of())), "mcp.servers: unknown key limits", "auth", "credential", "quota");
        }

        @Test
        void authThatIsNeitherATableNorOff()
        {
            assertMentions(problem(AUTH, tools("auth", "on")), "mcp.servers: tools: auth", "or off");
            assertMentions(problem(null, tools("auth", true)), "mcp.servers: tools: auth", "or off");
        }

        /** A bad value in mcp.auth is named where it was written, though a server's table completes it. */
        @Test
        void aProblemOfTheGlobalTable_namesTheGlobalKey()
        {
            Map<String, Object> own = Map.of("scopes", List.of("mcp"));
            assertMentions(problem(with(AUTH, "algorithms", List.of("HS256")), tools("auth", own)), "mcp.auth.algorithms: HS256");
            assertMentions(problem(with(AUTH, "jwks-url", null, "introspection", Map.of("url", ISSUER + "/introspect", "client-secret", "s")), tools("auth", own)),
                "mcp.auth.introspection.client-id: missing");
        }

        @Test
        void aProblemOfAServersTable_namesTheServersKey()
        {
            assertMentions(problem(AUTH, tools("auth", Map.of("algorithms", List.of("HS256")))), "mcp.servers: tools: auth.algorithms: HS256");
        }

        /** A mistake in mcp.auth shows though no server uses it, and once however many servers do. */
        @Test
        void aProblemOfTheGlobalTable_showsOnce_usedOrNot()
        {
            Map<String, Object> bad = with(AUTH, "algorithms", List.of("none"));
            String unused = problems(values(bad, List.of(tools("auth", "off"))));
            assertMentions(unused, "mcp.auth.algorithms: none");
            String twice = problems(values(bad, List.of(tools(), server("files"))));
            assertEquals(1, twice.split("mcp.auth.algorithms: none", -1).length - 1, twice);
        }
    }
}
