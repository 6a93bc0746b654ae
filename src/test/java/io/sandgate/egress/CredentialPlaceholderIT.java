package io.sandgate.egress;

import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LogCapture;
import io.sandgate.testing.PercentEscapes;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.TargetServer;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Credential placeholders in base-URL mode: an agent writes {@code sandgate-credential:<credential>} where a
 * tool puts its API key, in a header value or the query, and carries its internal token in an
 * API-key header of its own; the target at a host the credential is bound to gets the real key in
 * the placeholder's place, and neither the placeholder nor the token. Towards any other host, for a
 * credential nobody configured or the agent may not use, without a valid token, or in a form the
 * gateway cannot read once, the request is refused and the target gets nothing. The key never
 * shows in an answer, a log line or a metric.
 */
@ExtendWith(WorkDirExtension.class)
class CredentialPlaceholderIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    // Built at run time so the repository holds nothing a secret scanner would flag.
    private static final String OPENAI_KEY = "sk-" + "proj-" + "PlAcEh0lDeRk3yPlAcEh0".repeat(2);
    private static final String GITHUB_KEY = "ghp_" + "Pl4c3h0ld3rGitHubK3y00000000000000ab";
    private static final String STRIPE_KEY = "rk_" + "live_" + "Pl4c3h0ld3rStr1peK3y0000";
    private static final String TOKEN = "sgt_agent_alpha_placeholder_01";

    private final List<String> resolved = new CopyOnWriteArrayList<>();
    @AutoClose
    private final TargetServer target = TargetServer.start();
    @AutoClose
    private final ForwardProxy node = ForwardProxy.start("n1");
    private Path secrets;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    @BeforeEach
    void start(WorkDir workDir) throws Exception
    {
        secrets = workDir.getEmptyPathDir().resolve("secrets.yaml");
        Files.writeString(secrets, "openai: \"" + OPENAI_KEY + "\"\ngithub: \"" + GITHUB_KEY + "\"\nstripe: \"" + STRIPE_KEY
            + "\"\nalpha-token: \"" + TOKEN + "\"\n");
        Files.setPosixFilePermissions(secrets, PosixFilePermissions.fromString("rw-------"));
    }

    private void configure(GatewayConfig config)
    {
        List<Map<String, Object>> routes = new ArrayList<>();
        routes.add(Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "redact"), "upstream", "main", "scan", "redact"));
        routes.add(Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "llm"), "upstream", "main", "credential", "openai"));
        routes.add(Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "plain"), "upstream", "main", "scheme", "http"));
        routes.add(Map.of("match", Map.of("domains", List.of("*")), "upstream", "main"));
        Map<String, Object> credentials = new LinkedHashMap<>();
        credentials.put("openai", Map.of("secret", "openai", "hosts", List.of("localhost")));
        credentials.put("github", Map.of("secret", "github", "hosts", List.of("api.github.test")));
        credentials.put("stripe", Map.of("secret", "stripe", "hosts", List.of("localhost")));
        config.trustStoreOf(target)
            .set("egress.ssrf.allow", "127.0.0.0/8")
            .set("egress.secrets.file", secrets.toString())
            .set("egress.routes", routes)
            .set("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(Map.of("id", "n1", "address", node.address())))))
            .set("egress.credentials", credentials)
            .set("egress.agents", List.of(Map.of("id", "alpha", "token", "alpha-token", "credentials", List.of("openai", "github"))))
            .namesOnLoopback(resolved);
    }

    /** A GET of {@code pathAndQuery} on {@code host}, with the headers exactly as given (name, value pairs). */
    private RawHttp.Response getAt(String host, String pathAndQuery, String... headers) throws Exception
    {
        return RawHttp.get(gateway.port(), "127.0.0.1:" + gateway.port(), "/egress/" + host + ":" + target.httpsPort() + pathAndQuery, headers);
    }

    private RawHttp.Response get(String pathAndQuery, String... headers) throws Exception
    {
        return getAt("localhost", pathAndQuery, headers);
    }

    private TargetServer.Recorded onlyRequest()
    {
        assertEquals(1, target.requestCount(), "the target got " + target.requests());
        TargetServer.Recorded recorded = target.requests().get(0);
        target.clearRequests();
        return recorded;
    }

    /** Neither a placeholder (in any case, plain or escaped) nor the agent's token reached the target. */
    private static void assertClean(TargetServer.Recorded recorded)
    {
        String all = (recorded.pathAndQuery() + recorded.headers() + recorded.body()).toLowerCase(Locale.ROOT);
        assertFalse(all.contains("sandgate-credential:") || all.contains("sandgate-credential%3a"), "no placeholder reached the target: " + recorded);
        assertFalse(all.contains(TOKEN), "the token never reaches the target: " + recorded);
    }

    private void assertRefused(RawHttp.Response response, String where, String... words)
    {
        assertEquals(403, response.status(), where + ": " + response.body());
        assertTrue(response.body().contains("\"placeholder_refused\""), where + ": " + response.body());
        for (String word : words)
            assertTrue(response.body().contains(word), where + ": the answer says " + word + ": " + response.body());
        assertNoKeyIn(response.body(), where);
        assertEquals(0, target.requestCount(), where + ": the target got " + target.requests());
    }

    private static void assertNoKeyIn(String text, String where)
    {
        for (String key : List.of(OPENAI_KEY, GITHUB_KEY, STRIPE_KEY))
            assertFalse(text.contains(key), where + ": " + text);
    }

    @SafeVarargs
    private static List<String> concat(List<String>... lists)
    {
        List<String> all = new ArrayList<>();
        for (List<String> list : lists)
            all.addAll(list);
        return all;
    }

    private String metrics() throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void placeholderInAHeader_becomesTheKey_atTheBoundHost() throws Exception
    {
        RawHttp.Response response = get("/echo", "Authorization", "Bearer sandgate-credential:openai", "x-api-key", TOKEN,
            "X-Backup-Key", "sandgate-credential:openai", "Referer", "http://sandgate:8080/back");
        assertEquals(200, response.status(), response.body());
        TargetServer.Recorded recorded = onlyRequest();
        assertEquals("http://sandgate:8080/back", recorded.header("Referer"), "the gateway's own name is no placeholder");
        assertEquals("Bearer " + OPENAI_KEY, recorded.header("Authorization"));
        assertEquals(OPENAI_KEY, recorded.header("X-Backup-Key"));
        assertNull(recorded.header("x-api-key"), "the header of the token stops at the gateway");
        assertClean(recorded);
        // The target's echo repeats the key: the agent never sees it.
        assertNoKeyIn(response.body(), "echo");
        assertTrue(response.body().contains("[REDACTED]"), response.body());
    }

    @Test
    void placeholderInTheQuery_becomesTheKey_plainEscapedOrInAnyCase() throws Exception
    {
        String encodedKey = URLEncoder.encode(OPENAI_KEY, StandardCharsets.UTF_8);
        for (String placeholder : List.of("sandgate-credential:openai", "sandgate-credential%3Aopenai", "SANDGATE-CREDENTIAL%3aopenai",
            "SandGate-Credential:openai", PercentEscapes.everyByte("sandgate-credential:openai")))
        {
            RawHttp.Response response = get("/echo?q=1&api_key=" + placeholder + "&z=2", "Authorization", "Bearer " + TOKEN);
            assertEquals(200, response.status(), placeholder + ": " + response.body());
            TargetServer.Recorded recorded = onlyRequest();
            assertEquals("/echo?q=1&api_key=" + encodedKey + "&z=2", recorded.pathAndQuery(), placeholder);
            assertNull(recorded.header("Authorization"), "the token header stops at the gateway");
            assertClean(recorded);
            assertNoKeyIn(response.body(), placeholder);
        }
    }

    @Test
    void placeholderInAHeader_escaped_isReplacedToo() throws Exception
    {
        RawHttp.Response response = get("/echo", "x-api-key", TOKEN, "X-Key", "sandgate-credential%3Aopenai");
        assertEquals(200, response.status(), response.body());
        TargetServer.Recorded recorded = onlyRequest();
        assertEquals(OPENAI_KEY, recorded.header("X-Key"));
        assertClean(recorded);
    }

    @Test
    void placeholderTowardsAnotherHost_isRefused_andTheTargetGetsNothing() throws Exception
    {
        // github is the agent's, but bound to api.github.test; openai is bound to localhost only.
        assertRefused(getAt("127.0.0.1", "/echo", "Authorization", "Bearer sandgate-credential:openai", "x-api-key", TOKEN), "header, another host",
            "credential openai is not bound to host 127.0.0.1");
        assertRefused(getAt("127.0.0.1", "/echo?key=sandgate-credential%3Aopenai", "x-api-key", TOKEN), "query, another host", "not bound");
        assertRefused(get("/echo", "X-Key", "sandgate-credential:github", "x-api-key", TOKEN), "github at localhost", "credential github is not bound to host localhost");
        assertEquals(List.of(), resolved, "nothing was looked up for a refused request");
        assertTrue(node.received().isEmpty(), "no node was asked: " + node.received());
    }

    @Test
    void unknownCredential_isRefused() throws Exception
    {
        for (String placeholder : List.of("sandgate-credential:nope", "sandgate-credential:OPENAI", "sandgate-credential:", "xsandgate-credential:nope"))
            assertRefused(get("/echo", "X-Key", placeholder, "x-api-key", TOKEN), placeholder, "names no configured credential");
        assertRefused(get("/echo?k=sandgate-credential:OpenAI", "x-api-key", TOKEN), "query, other case of the name", "names no configured credential");
    }

    @Test
    void credentialTheAgentMayNotUse_isRefused() throws Exception
    {
        assertRefused(get("/echo", "X-Key", "sandgate-credential:stripe", "x-api-key", TOKEN), "stripe", "agent alpha may not use credential stripe");
        assertRefused(get("/echo?k=sandgate-credential:stripe", "x-api-key", TOKEN), "stripe in the query", "may not use credential stripe");
    }

    /** A placeholder needs an agent: without a valid internal token it is refused as a credential route refuses (401). */
    @Test
    void placeholderWithoutAValidToken_isUnauthorized() throws Exception
    {
        RawHttp.Response none = get("/echo", "Authorization", "Bearer sandgate-credential:openai");
        assertEquals(401, none.status(), none.body());
        assertTrue(none.body().contains("missing internal token"), none.body());
        RawHttp.Response unknown = get("/echo?k=sandgate-credential:openai", "x-api-key", "sgt_not_a_token_of_anyone_000");
        assertEquals(401, unknown.status(), unknown.body());
        assertEquals(0, target.requestCount(), "the target got " + target.requests());
    }

    @Test
    void placeholderEscapedTwice_orInThePath_isRefused() throws Exception
    {
        assertRefused(get("/echo?k=sandgate-credential%253Aopenai", "x-api-key", TOKEN), "escaped twice", "percent-encoded more than once");
        assertRefused(get("/echo", "X-Key", "sandgate-credential%253Aopenai", "x-api-key", TOKEN), "escaped twice, header", "more than once");
        assertRefused(get("/v1/sandgate-credential:openai/x", "x-api-key", TOKEN), "path", "not in the path");
    }

    /** A key goes over https only: a placeholder towards plain http is refused, as a credential route there is. */
    @Test
    void placeholderTowardsPlainHttp_isRefused() throws Exception
    {
        RawHttp.Response response = RawHttp.get(gateway.port(), "127.0.0.1:" + gateway.port(), "/egress/localhost:" + target.httpPort() + "/echo",
            "X-Agent-Task-Type", "plain", "x-api-key", TOKEN, "X-Key", "sandgate-credential:openai");
        assertRefused(response, "plain http", "only replaced over https");
    }

    /** A cookie is a header value like another: a placeholder in it is replaced where it stands. */
    @Test
    void placeholderInACookie_isReplacedWhereItStands() throws Exception
    {
        RawHttp.Response response = get("/echo", "x-api-key", TOKEN, "Cookie", "theme=dark; key=sandgate-credential:openai; z=1");
        assertEquals(200, response.status(), response.body());
        TargetServer.Recorded recorded = onlyRequest();
        assertEquals("theme=dark; key=" + OPENAI_KEY + "; z=1", recorded.header("Cookie"));
        assertClean(recorded);
    }

    /** The token still goes nowhere but its own header: a second copy beside the placeholder is a leak (422). */
    @Test
    void aSecondCopyOfTheToken_isRefused() throws Exception
    {
        RawHttp.Response response = get("/echo", "X-Key", "sandgate-credential:openai", "x-api-key", TOKEN, "X-Trace", TOKEN);
        assertEquals(422, response.status(), response.body());
        assertTrue(response.body().contains("sandgate-agent-token"), response.body());
        assertEquals(0, target.requestCount(), "the target got " + target.requests());
    }

    /** On a route with a credential the route's header gets its key as before, and a placeholder elsewhere its own. */
    @Test
    void onACredentialRoute_placeholdersGoBesideTheRoutesKey() throws Exception
    {
        RawHttp.Response response = get("/echo?k=sandgate-credential:openai", "X-Agent-Task-Type", "llm", "Authorization", "Bearer " + TOKEN, "X-Key", "sandgate-credential:openai");
        assertEquals(200, response.status(), response.body());
        TargetServer.Recorded recorded = onlyRequest();
        assertEquals("Bearer " + OPENAI_KEY, recorded.header("Authorization"));
        assertEquals(OPENAI_KEY, recorded.header("X-Key"));
        assertTrue(recorded.pathAndQuery().endsWith("k=" + URLEncoder.encode(OPENAI_KEY, StandardCharsets.UTF_8)), recorded.pathAndQuery());
        assertClean(recorded);
    }

    /** A redacting route redacts what the agent sent, then the key goes in whole. */
    @Test
    void onARedactingRoute_theKeyGoesInAfterRedaction() throws Exception
    {
        RawHttp.Response response = get("/echo", "X-Agent-Task-Type", "redact", "x-api-key", TOKEN, "X-Key", "sandgate-credential:openai");
        assertEquals(200, response.status(), response.body());
        TargetServer.Recorded recorded = onlyRequest();
        assertEquals(OPENAI_KEY, recorded.header("X-Key"));
        assertClean(recorded);
    }

    @Test
    void noLogLineMetricOrAnswerHoldsTheKey_andEachSubstitutionIsAudited() throws Exception
    {
        try (LogCapture all = new LogCapture(org.slf4j.Logger.ROOT_LOGGER_NAME); LogCapture access = LogCapture.accessLog(); LogCapture audit = LogCapture.auditLog())
        {
            RawHttp.Response ok = get("/echo?api_key=sandgate-credential:openai", "x-api-key", TOKEN, "X-Key", "sandgate-credential:openai");
            assertEquals(200, ok.status(), ok.body());
            assertNoKeyIn(ok.body() + ok.headers(), "answer");
            getAt("127.0.0.1", "/echo", "X-Key", "sandgate-credential:openai", "x-api-key", TOKEN);
            get("/echo", "X-Key", "sandgate-credential:stripe", "x-api-key", TOKEN);
            org.awaitility.Awaitility.await().until(() -> access.lines().size() >= 3);
            for (String line : concat(all.lines(), access.lines(), audit.lines()))
            {
                assertNoKeyIn(line, "log");
                assertFalse(line.contains(TOKEN), line);
            }
            List<String> injected = audit.lines().stream().filter(line -> line.contains("credential.injected")).toList();
            assertEquals(1, injected.size(), "one substitution, one audit event: " + audit.lines());
            assertTrue(injected.get(0).contains("\"agent\":\"alpha\"") && injected.get(0).contains("\"credential\":\"openai\"")
                && injected.get(0).contains("\"host\":\"localhost\""), injected.get(0));
        }
        String metrics = metrics();
        assertNoKeyIn(metrics, "metrics");
        assertFalse(metrics.contains(TOKEN));
        assertTrue(metrics.lines().anyMatch(line -> line.startsWith("sandgate_egress_credentials_injected_total{") && line.contains("credential=\"openai\"")),
            "counted by credential name");
        assertTrue(metrics.lines().anyMatch(line -> line.startsWith("sandgate_egress_credentials_refused_total{") && line.contains("reason=\"placeholder\"")),
            "refusals counted");
    }
}
