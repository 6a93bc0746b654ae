package io.sandgate.egress;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LogCapture;
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
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An agent's internal token is a secret the gateway holds, as its real keys are: on a route
 * without a credential only {@code Authorization} and the other API-key headers were refused,
 * and the token reached the target in any other header, a cookie, the query, the path and the
 * body. It is now refused in each of these, plain or percent-encoded, on every route whatever its
 * scan mode; on a route with a credential the copy in the header the key replaces is swapped as
 * before, and a second copy anywhere else is refused. The target never gets such a request, and
 * no answer, log line or metric holds the token.
 */
@ExtendWith(WorkDirExtension.class)
class AgentTokenLeakIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    // Built at run time so the repository holds nothing a secret scanner would flag.
    private static final String OPENAI_KEY = "sk-" + "proj-" + "T0k3nL3akT0k3nL3akT0".repeat(2);
    private static final String VENDOR_KEY = "vnd_" + "W3kP8sQ2zR7yL4nM9bX5";
    private static final String TOKEN = "sgt_agent_alpha_0123456789";
    /** Another agent's token: the gateway holds it as well. */
    private static final String BETA_TOKEN = "sgt_agent_beta_9876543210";
    /** A token that can be a DNS label. */
    private static final String GAMMA_TOKEN = "sgt-gamma-0123456789abcdef";
    /** Every scan mode, on routes without a credential. */
    private static final List<String> PLAIN_ROUTES = List.of("block", "report", "off", "redact");

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
        Files.writeString(secrets, "openai: \"" + OPENAI_KEY + "\"\nvendor: \"" + VENDOR_KEY + "\"\nalpha-token: \"" + TOKEN + "\"\nbeta-token: \"" + BETA_TOKEN
            + "\"\ngamma-token: \"" + GAMMA_TOKEN + "\"\n");
        Files.setPosixFilePermissions(secrets, PosixFilePermissions.fromString("rw-------"));
    }

    private void configure(GatewayConfig config)
    {
        List<Map<String, Object>> routes = new ArrayList<>();
        for (String mode : PLAIN_ROUTES)
            routes.add(Map.of("match", Map.of("domains", List.of("localhost"), "task_type", mode), "upstream", "main", "scan", mode));
        routes.add(Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "llm"), "upstream", "main", "credential", "openai"));
        routes.add(Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "llm-redact"), "upstream", "main", "credential", "openai",
            "scan", "redact"));
        routes.add(Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "vendor"), "upstream", "main", "credential", "vendor"));
        routes.add(Map.of("match", Map.of("domains", List.of("*"), "task_type", "anywhere"), "upstream", "main", "scan", "off"));
        Map<String, Object> credentials = new LinkedHashMap<>();
        credentials.put("openai", Map.of("secret", "openai", "hosts", List.of("localhost")));
        credentials.put("vendor", Map.of("secret", "vendor", "hosts", List.of("localhost"), "query", "key"));
        config.trustStoreOf(target)
            .set("egress.ssrf.allow", "127.0.0.0/8")
            .set("egress.secrets.file", secrets.toString())
            .set("egress.routes", routes)
            .set("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(Map.of("id", "n1", "address", node.address())))))
            .set("egress.credentials", credentials)
            .set("egress.forward-proxy-port", "0")
            .set("egress.agents", List.of(
                Map.of("id", "alpha", "token", "alpha-token", "credentials", List.of("openai", "vendor")),
                Map.of("id", "beta", "token", "beta-token", "credentials", List.of("openai")),
                Map.of("id", "gamma", "token", "gamma-token", "credentials", List.of("openai"))))
            .namesOnLoopback(resolved);
    }

    /** A GET of {@code pathAndQuery} on the target, with the headers exactly as given (name, value pairs). */
    private RawHttp.Response get(String taskType, String pathAndQuery, String... headers) throws Exception
    {
        List<String> all = new ArrayList<>(List.of("X-Agent-Task-Type", taskType));
        all.addAll(List.of(headers));
        return RawHttp.get(gateway.port(), "127.0.0.1:" + gateway.port(), "/egress/localhost:" + target.httpsPort() + pathAndQuery, all.toArray(String[]::new));
    }

    private HttpResponse<String> post(String taskType, String contentType, String body, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve("/egress/localhost:" + target.httpsPort() + "/echo"))
            .timeout(Duration.ofSeconds(15)).header("X-Agent-Task-Type", taskType).header("Content-Type", contentType)
            .POST(HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Every byte as a {@code %XX} escape. */
    private static String escaped(String text)
    {
        StringBuilder out = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8))
            out.append(String.format("%%%02X", b & 0xFF));
        return out.toString();
    }

    private static void assertRefused(int status, String body, String where)
    {
        assertEquals(422, status, where + ": " + body);
        assertTrue(body.contains("secret_detected") && body.contains("sandgate-agent-token"), where + ": the answer names the rule: " + body);
        assertFalse(body.contains(TOKEN) || body.contains(BETA_TOKEN), where + ": the answer never names the token: " + body);
    }

    private void assertTargetGotNothing(String where)
    {
        assertEquals(0, target.requestCount(), where + ": the target got " + target.requests());
    }

    private String metrics() throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void tokenInACustomHeader_isRefused_onEveryRoute() throws Exception
    {
        for (String route : PLAIN_ROUTES)
        {
            for (String header : List.of("OpenAI-Api-Key", "X-Auth-Token", "X-Anything"))
            {
                RawHttp.Response response = get(route, "/echo", header, TOKEN);
                assertRefused(response.status(), response.body(), route + " " + header);
            }
            RawHttp.Response underAScheme = get(route, "/echo", "X-Auth-Token", "Token " + TOKEN);
            assertRefused(underAScheme.status(), underAScheme.body(), route + " under a scheme");
        }
        assertTargetGotNothing("custom header");
        assertTrue(metrics().contains("rule=\"sandgate-agent-token\""), "counted by rule");
    }

    @Test
    void tokenInACookie_isRefused_onEveryRoute() throws Exception
    {
        for (String route : PLAIN_ROUTES)
        {
            RawHttp.Response response = get(route, "/echo", "Cookie", "theme=dark; session=" + TOKEN);
            assertRefused(response.status(), response.body(), route + " cookie");
        }
        assertTargetGotNothing("cookie");
    }

    @Test
    void tokenInTheQuery_isRefused_onEveryRoute() throws Exception
    {
        for (String route : PLAIN_ROUTES)
        {
            for (String query : List.of("?t=" + TOKEN, "?q=x&access_token=" + TOKEN + "&z=1", "?" + TOKEN))
            {
                RawHttp.Response response = get(route, "/echo" + query);
                assertRefused(response.status(), response.body(), route + " " + query.replace(TOKEN, "<token>"));
            }
        }
        assertTargetGotNothing("query");
    }

    @Test
    void tokenInThePath_isRefused_onEveryRoute() throws Exception
    {
        for (String route : PLAIN_ROUTES)
        {
            RawHttp.Response response = get(route, "/v1/" + TOKEN + "/files");
            assertRefused(response.status(), response.body(), route + " path");
        }
        assertTargetGotNothing("path");
    }

    @Test
    void tokenInTheBody_isRefused_onEveryRoute() throws Exception
    {
        for (String route : PLAIN_ROUTES)
        {
            HttpResponse<String> json = post(route, "application/json", "{\"note\":\"my token is " + TOKEN + "\"}");
            assertRefused(json.statusCode(), json.body(), route + " json body");
            HttpResponse<String> other = post(route, "application/json", "{\"note\":\"" + BETA_TOKEN + "\"}");
            assertRefused(other.statusCode(), other.body(), route + " another agent's token");
        }
        assertTargetGotNothing("body");
    }

    @Test
    void percentEncodedToken_isRefused_inTheQueryPathCookieAndFormBody() throws Exception
    {
        String encoded = escaped(TOKEN);
        String partly = TOKEN.replace("_", "%5f");
        for (String route : PLAIN_ROUTES)
        {
            for (String pathAndQuery : List.of("/echo?t=" + encoded, "/echo?t=" + partly, "/v1/" + encoded))
            {
                RawHttp.Response response = get(route, pathAndQuery);
                assertRefused(response.status(), response.body(), route + " url " + pathAndQuery.replace(encoded, "<escaped>"));
            }
            RawHttp.Response cookie = get(route, "/echo", "Cookie", "session=" + partly);
            assertRefused(cookie.status(), cookie.body(), route + " cookie");
            HttpResponse<String> form = post(route, "application/x-www-form-urlencoded", "a=1&token=" + encoded + "&b=2");
            assertRefused(form.statusCode(), form.body(), route + " form body");
            HttpResponse<String> partlyForm = post(route, "application/x-www-form-urlencoded", "token=" + partly);
            assertRefused(partlyForm.statusCode(), partlyForm.body(), route + " form body, partly escaped");
        }
        assertTargetGotNothing("percent-encoded");
    }

    /**
     * On a route with a credential the token in the header the key replaces is swapped as before;
     * a second copy anywhere else is refused, on a redacting route too (a token is not redacted
     * into the request: it has no business there).
     */
    @Test
    void credentialRoute_swapsTheTokenInItsHeader_andRefusesASecondCopyElsewhere() throws Exception
    {
        RawHttp.Response swapped = get("llm", "/echo", "Authorization", "Bearer " + TOKEN);
        assertEquals(200, swapped.status(), swapped.body());
        assertEquals("Bearer " + OPENAI_KEY, target.requests().get(0).header("Authorization"));
        target.clearRequests();

        for (String route : List.of("llm", "llm-redact"))
        {
            RawHttp.Response header = get(route, "/echo", "Authorization", "Bearer " + TOKEN, "X-Auth-Token", TOKEN);
            assertRefused(header.status(), header.body(), route + " second copy in a header");
            RawHttp.Response cookie = get(route, "/echo", "Authorization", "Bearer " + TOKEN, "Cookie", "s=" + TOKEN);
            assertRefused(cookie.status(), cookie.body(), route + " second copy in a cookie");
            RawHttp.Response query = get(route, "/echo?t=" + escaped(TOKEN), "Authorization", "Bearer " + TOKEN);
            assertRefused(query.status(), query.body(), route + " second copy in the query");
            RawHttp.Response path = get(route, "/v1/" + TOKEN, "Authorization", "Bearer " + TOKEN);
            assertRefused(path.status(), path.body(), route + " second copy in the path");
            HttpResponse<String> body = post(route, "application/json", "{\"t\":\"" + TOKEN + "\"}", "Authorization", "Bearer " + TOKEN);
            assertRefused(body.statusCode(), body.body(), route + " second copy in the body");
        }
        assertTargetGotNothing("second copy");
    }

    /** A query credential replaces the agent's own value of its parameter, as before; the token anywhere else in the query is refused. */
    @Test
    void queryCredentialRoute_replacesItsOwnParameter_andRefusesTheTokenInAnother() throws Exception
    {
        RawHttp.Response swapped = get("vendor", "/echo?q=maps&key=" + TOKEN, "x-goog-api-key", TOKEN);
        assertEquals(200, swapped.status(), swapped.body());
        assertEquals("/echo?q=maps&key=" + VENDOR_KEY, target.requests().get(0).pathAndQuery());
        target.clearRequests();

        RawHttp.Response other = get("vendor", "/echo?q=" + TOKEN + "&key=" + TOKEN, "x-goog-api-key", TOKEN);
        assertRefused(other.status(), other.body(), "token in another parameter");
        assertTargetGotNothing("query credential");
    }

    /**
     * Held provider keys were refused in the body only on blocking routes: a reporting route counted
     * them and sent them, a route with {@code scan: off} did not look. They never leave now, as in a
     * header or the URL.
     */
    @Test
    void heldKeyInTheBody_isRefused_onReportingAndUnscannedRoutes() throws Exception
    {
        for (String route : List.of("report", "off"))
        {
            HttpResponse<String> plain = post(route, "application/json", "{\"k\":\"" + VENDOR_KEY + "\"}");
            assertEquals(422, plain.statusCode(), route + ": " + plain.body());
            assertTrue(plain.body().contains("sandgate-credential"), plain.body());
            HttpResponse<String> form = post(route, "application/x-www-form-urlencoded", "k=" + escaped(VENDOR_KEY));
            assertEquals(422, form.statusCode(), route + " form: " + form.body());
        }
        assertTargetGotNothing("held key in a body");
        HttpResponse<String> clean = post("off", "application/json", "{\"k\":\"nothing secret here\"}");
        assertEquals(200, clean.statusCode(), "a clean body passes: " + clean.body());
    }

    /**
     * The name of a target goes to the name servers that resolve it: a token (or a key) in it leaks
     * by the lookup alone. A base-URL request's authority was read for secrets before its lookup; a
     * CONNECT's name was not, though nothing of the tunnel can be read afterwards.
     */
    @Test
    void tokenInATargetsName_isRefusedBeforeItIsLookedUp_inEveryMode() throws Exception
    {
        String name = GAMMA_TOKEN + ".example.test";
        try (Socket socket = new Socket("127.0.0.1", gateway.port()))
        {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(("CONNECT " + name + ":443 HTTP/1.1\r\nHost: " + name + ":443\r\nX-Agent-Task-Type: anywhere\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
            String status = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1)).readLine();
            assertTrue(status.startsWith("HTTP/1.1 422"), status);
        }
        RawHttp.Response baseUrl = RawHttp.get(gateway.port(), "gw", "/egress/" + name + "/x", "X-Agent-Task-Type", "anywhere");
        assertRefused(baseUrl.status(), baseUrl.body(), "base-URL authority");
        RawHttp.Response absolute = RawHttp.get(gateway.forwardProxyPort(), name, "http://" + name + "/x", "X-Agent-Task-Type", "anywhere");
        assertRefused(absolute.status(), absolute.body(), "absolute-form authority");
        assertEquals(List.of(), resolved, "no name server was asked");
        assertTrue(node.received().isEmpty(), "no node was asked: " + node.received());
    }

    @Test
    void noLogLineOrMetricHoldsTheToken() throws Exception
    {
        try (LogCapture access = LogCapture.accessLog(); LogCapture audit = LogCapture.auditLog())
        {
            get("block", "/v1/" + TOKEN + "?t=" + escaped(TOKEN), "X-Auth-Token", TOKEN);
            post("off", "application/json", "{\"t\":\"" + TOKEN + "\"}");
            assertTargetGotNothing("logged");
            org.awaitility.Awaitility.await().until(() -> access.lines().size() >= 2);
            for (String line : access.lines())
                assertFalse(line.contains(TOKEN) || line.contains(escaped(TOKEN)), line);
            assertTrue(audit.lines().stream().anyMatch(line -> line.contains("sandgate-agent-token")), "the block is audited: " + audit.lines());
            for (String line : audit.lines())
                assertFalse(line.contains(TOKEN), line);
        }
        assertFalse(metrics().contains(TOKEN));
    }
}
