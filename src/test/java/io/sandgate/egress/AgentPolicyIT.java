package io.sandgate.egress;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.Counter;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Per-agent policy on one replica: domains beyond the routes, enforce and report, budgets of calls
 * and bytes, and the admin API that replaces a policy at run time.
 */
class AgentPolicyIT
{
    static final String ADMIN = "agent-policy-admin-token";
    static final String ALPHA = "sgt_agent_alpha_policy_0123456789";
    static final String BETA = "sgt_agent_beta_policy_0123456789";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    Path scratch;
    @AutoClose
    private final TargetServer target = TargetServer.start();
    @AutoClose
    private final ForwardProxy node = ForwardProxy.start("n1");

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(config -> configure(config, secrets(scratch), target, node));

    /** Two agents on a credential route to {@code localhost}; alpha may reach only {@code *.example.org} as configured. */
    static GatewayConfig configure(GatewayConfig config, Path secrets, TargetServer target, ForwardProxy node)
    {
        return config.trustStoreOf(target)
            .set("admin.token", ADMIN)
            .set("egress.ssrf.allow", "127.0.0.0/8")
            .set("egress.secrets.file", secrets.toString())
            .set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("localhost")), "upstream", "main", "credential", "key"),
                Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "main")))
            .set("egress.pools", Map.of("main", Map.of("nodes", List.of(Map.of("id", "n1", "address", node.address())))))
            .set("egress.credentials", Map.of("key", Map.of("secret", "key", "hosts", List.of("localhost"))))
            .set("egress.agents", List.of(
                Map.of("id", "alpha", "token", "alpha-token", "credentials", List.of("key"), "policy", Map.of("domains", List.of("*.example.org"))),
                Map.of("id", "beta", "token", "beta-token", "credentials", List.of("key"))));
    }

    static Path secrets(Path scratch)
    {
        try
        {
            Path secrets = scratch.resolve("secrets.yaml");
            if (!Files.exists(secrets))
            {
                Files.writeString(secrets, "key: \"vnd_policy_key_0123456789\"\nalpha-token: \"" + ALPHA + "\"\nbeta-token: \"" + BETA + "\"\n");
                Files.setPosixFilePermissions(secrets, PosixFilePermissions.fromString("rw-------"));
            }
            return secrets;
        }
        catch (IOException x)
        {
            throw new UncheckedIOException(x);
        }
    }

    static HttpResponse<String> call(URI gateway, TargetServer target, String token, String body) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.resolve("/egress/localhost:" + target.httpsPort() + "/echo"))
            .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(15));
        request.method(body == null ? "GET" : "POST", body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> admin(URI gateway, String method, String agent, String body, String token) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.resolve("/admin/egress/agents/" + agent + "/policy")).timeout(Duration.ofSeconds(15))
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null)
            request.header("Authorization", "Bearer " + token);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> put(String agent, String body) throws Exception
    {
        return admin(gateway.uri(), "PUT", agent, body, ADMIN);
    }

    private double policyCount(String agent, String reason, String outcome)
    {
        Counter counter = gateway.sandgate().metrics().find("sandgate.egress.agent.policy").tags("agent", agent, "reason", reason, "outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void domainOutsideTheAgentsGlobs_refused403_inEnforce_andNeverReachesTheTarget() throws Exception
    {
        HttpResponse<String> refused = call(gateway.uri(), target, ALPHA, null);
        assertEquals(403, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("policy"), refused.body());
        assertEquals(0, target.requestLog().size());
        assertEquals(1, policyCount("alpha", "domain", "refused"));
        assertEquals(200, call(gateway.uri(), target, BETA, null).statusCode(), "beta has no policy: the routes alone bind it");
    }

    @Test
    void reportMode_letsTheCallGo_andCountsIt() throws Exception
    {
        assertEquals(200, put("alpha", "{\"domains\":[\"*.example.org\"],\"mode\":\"report\"}").statusCode());
        HttpResponse<String> reported = call(gateway.uri(), target, ALPHA, null);
        assertEquals(200, reported.statusCode(), reported.body());
        assertEquals(1, policyCount("alpha", "domain", "reported"));
        assertEquals(0, policyCount("alpha", "domain", "refused"));
    }

    @Test
    void requestsPerMinute_429WithRetryAfter_andABodyNamingTheBudget() throws Exception
    {
        assertEquals(200, put("alpha", "{\"domains\":[\"localhost\"],\"budgets\":{\"requests_per_minute\":3}}").statusCode());
        for (int i = 0; i < 3; i++)
            assertEquals(200, call(gateway.uri(), target, ALPHA, null).statusCode(), "call " + i);
        HttpResponse<String> over = call(gateway.uri(), target, ALPHA, null);
        assertEquals(429, over.statusCode(), over.body());
        long retryAfter = Long.parseLong(over.headers().firstValue("Retry-After").orElseThrow());
        assertTrue(retryAfter >= 1 && retryAfter <= 60, "Retry-After " + retryAfter);
        assertTrue(over.body().contains("\"over_budget\"") && over.body().contains("requests_per_minute"), over.body());
        assertEquals(3, target.requestLog().size(), "the refused call never reached the target");
        assertEquals(1, policyCount("alpha", "requests_per_minute", "refused"));
        assertEquals(200, call(gateway.uri(), target, BETA, null).statusCode(), "another agent's budget is its own");
    }

    @Test
    void reportMode_overABudget_letsTheCallsGo_andCountsEach() throws Exception
    {
        assertEquals(200, put("alpha", "{\"mode\":\"report\",\"budgets\":{\"requests_per_minute\":1}}").statusCode());
        for (int i = 0; i < 3; i++)
            assertEquals(200, call(gateway.uri(), target, ALPHA, null).statusCode(), "call " + i);
        assertEquals(3, target.requestLog().size());
        assertEquals(2, policyCount("alpha", "requests_per_minute", "reported"));
        assertEquals(0, policyCount("alpha", "requests_per_minute", "refused"));
    }

    @Test
    void responseBytesPerHour_refusesTheNextCall_onceUsedUp() throws Exception
    {
        assertEquals(200, put("alpha", "{\"budgets\":{\"response_bytes_per_hour\":100}}").statusCode());
        HttpResponse<String> first = call(gateway.uri(), target, ALPHA, "x".repeat(200));
        assertEquals(200, first.statusCode(), "the exchange that uses the budget up is not cut: its size is known once it ended");
        assertTrue(first.body().length() > 100);
        HttpResponse<String> next = call(gateway.uri(), target, ALPHA, null);
        assertEquals(429, next.statusCode(), next.body());
        assertTrue(next.body().contains("response_bytes_per_hour"), next.body());
        assertTrue(next.headers().firstValue("Retry-After").isPresent());
    }

    @Test
    void requestBytesPerHour_refusesTheNextCall_onceUsedUp() throws Exception
    {
        assertEquals(200, put("alpha", "{\"budgets\":{\"request_bytes_per_hour\":100,\"requests_per_minute\":1000}}").statusCode());
        assertEquals(200, call(gateway.uri(), target, ALPHA, "small").statusCode());
        assertEquals(200, call(gateway.uri(), target, ALPHA, "y".repeat(150)).statusCode());
        HttpResponse<String> next = call(gateway.uri(), target, ALPHA, "z");
        assertEquals(429, next.statusCode(), next.body());
        assertTrue(next.body().contains("request_bytes_per_hour"), next.body());
    }

    @Test
    void badPolicyBodies_400_andNothingChanges() throws Exception
    {
        String before = admin(gateway.uri(), "GET", "alpha", null, ADMIN).body();
        for (String body : List.of("not json", "[]", "{\"mode\":\"block\"}", "{\"budgets\":{\"requests_per_minute\":-1}}",
            "{\"budgets\":{\"requests_per_minute\":\"10\"}}", "{\"budgets\":{\"requests_per_minute\":1.5}}", "{\"domains\":\"localhost\"}",
            "{\"domains\":[\"bad domain!\"]}", "{\"domains\":[7]}", "{\"budget\":{}}", "{\"budgets\":{\"tokens_per_hour\":5}}", "{\"budgets\":[]}"))
        {
            HttpResponse<String> refused = put("alpha", body);
            assertEquals(400, refused.statusCode(), body + " -> " + refused.body());
            assertTrue(refused.body().contains("expected") || body.equals("not json"), "says what was expected: " + refused.body());
        }
        HttpResponse<String> empty = admin(gateway.uri(), "PUT", "alpha", null, ADMIN);
        assertEquals(400, empty.statusCode());
        assertEquals(before, admin(gateway.uri(), "GET", "alpha", null, ADMIN).body());
        assertTrue(before.contains("\"source\":\"config\"") && before.contains("*.example.org"), before);
        assertEquals(403, call(gateway.uri(), target, ALPHA, null).statusCode(), "the configured policy is still in force");
    }

    @Test
    void getShowsThePolicyInForce_andWhereItCameFrom() throws Exception
    {
        HttpResponse<String> set = put("alpha", "{\"domains\":[\"localhost\"],\"mode\":\"report\",\"budgets\":{\"requests_per_minute\":7}}");
        assertEquals(200, set.statusCode(), set.body());
        String shown = admin(gateway.uri(), "GET", "alpha", null, ADMIN).body();
        assertTrue(shown.contains("\"source\":\"admin\"") && shown.contains("\"mode\":\"report\"") && shown.contains("\"requests_per_minute\":7"), shown);
    }

    @Test
    void unknownAgent_404() throws Exception
    {
        assertEquals(404, admin(gateway.uri(), "GET", "gamma", null, ADMIN).statusCode());
        assertEquals(404, put("gamma", "{\"mode\":\"report\"}").statusCode());
    }

    @Test
    void withoutTheAdminToken_401_andWithAnotherToken_403_andNothingChanges() throws Exception
    {
        assertEquals(401, admin(gateway.uri(), "PUT", "alpha", "{}", null).statusCode());
        assertEquals(403, admin(gateway.uri(), "PUT", "alpha", "{}", ALPHA).statusCode(), "an agent's own token is no admin token");
        assertEquals(401, admin(gateway.uri(), "GET", "alpha", null, null).statusCode());
        assertEquals(403, call(gateway.uri(), target, ALPHA, null).statusCode(), "the configured policy is still in force");
    }

    /** The status line a CONNECT to the target gets, sent as an HTTPS_PROXY client would, naming its agent by token. */
    private String connect(String token) throws Exception
    {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), gateway.port()))
        {
            socket.setSoTimeout(15_000);
            String authority = "127.0.0.1:" + target.httpsPort();
            socket.getOutputStream().write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\nAuthorization: Bearer " + token + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
            // The head: status line and headers, up to the empty line.
            StringBuilder head = new StringBuilder();
            InputStream in = socket.getInputStream();
            while (head.indexOf("\r\n\r\n") < 0)
            {
                int b = in.read();
                if (b < 0)
                    break;
                head.append((char)b);
            }
            return head.toString();
        }
    }

    @Test
    void aBlindTunnel_isHeldToTheAgentsDomains_andCountsAsOneCall() throws Exception
    {
        assertTrue(connect(ALPHA).startsWith("HTTP/1.1 403"), "configured: only *.example.org");
        assertEquals(1, policyCount("alpha", "domain", "refused"));
        assertTrue(connect(BETA).startsWith("HTTP/1.1 200"), "beta has no policy");

        assertEquals(200, put("alpha", "{\"domains\":[\"127.0.0.1\"],\"budgets\":{\"requests_per_minute\":1}}").statusCode());
        assertTrue(connect(ALPHA).startsWith("HTTP/1.1 200"));
        String over = connect(ALPHA);
        assertTrue(over.startsWith("HTTP/1.1 429") && over.contains("Retry-After: "), "the second tunnel of the minute: " + over);
    }

    @Test
    void anAgentCannotShedItsPolicy_byCallingAsAnotherRouteOrWithoutItsToken() throws Exception
    {
        HttpResponse<String> anonymous = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/egress/localhost:" + target.httpsPort() + "/echo")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(401, anonymous.statusCode(), "the credential route needs the token, which names the agent");
        assertNull(gateway.sandgate().metrics().find("sandgate.egress.agent.policy").tags("agent", "beta").counter());
    }
}
