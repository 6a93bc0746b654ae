package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.TargetServer;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Egress protection end to end, through a real forward-proxy node to a real HTTPS target:
 * credential injection (the target sees only the real key, nothing logged holds either; secrets
 * from the default {@code file} source in a scratch directory), rotation, the leak scanner on
 * request and response bodies, and the SSRF guard in base-URL, forward-proxy and CONNECT modes.
 */
@ExtendWith(WorkDirExtension.class)
class EgressProtectionIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    // Built at run time so the repository holds nothing a secret scanner would flag.
    private static final String OPENAI_KEY = "sk-" + "proj-" + "A1b2C3d4E5f6G7h8I9j0".repeat(2);
    private static final String ANTHROPIC_KEY = "sk-" + "ant-api03-" + "Zz9Yy8Xx7Ww6".repeat(3);
    /** A real key of no known shape: only the held-keys list can catch it. */
    private static final String VENDOR_KEY = "vnd_" + "Q7xL2mP9rT4wZ8kJ5nB3";
    private static final String AGENT_TOKEN = "sgt_agent_alpha_0123456789";

    @AutoClose
    private final TargetServer target = TargetServer.start();
    @AutoClose
    private final ForwardProxy node = ForwardProxy.start("n1");
    private Path secrets;
    private ListAppender<ILoggingEvent> logged;
    private Level sandgateLevel;
    private Level jettyLevel;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    @BeforeEach
    void start(WorkDir workDir) throws Exception
    {
        secrets = workDir.getEmptyPathDir().resolve("secrets.yaml");
        writeSecrets(Map.of("openai", OPENAI_KEY, "anthropic", ANTHROPIC_KEY, "vendor", VENDOR_KEY, "alpha-token", AGENT_TOKEN,
            "beta-token", "sgt_agent_beta_0123456789", "old-token", "sgt_agent_old_0123456789", "gone-token", "sgt_agent_gone_0123456789"));
        Logger root = (Logger)LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        Logger sandgate = (Logger)LoggerFactory.getLogger("io.sandgate");
        sandgateLevel = sandgate.getLevel();
        sandgate.setLevel(Level.DEBUG);
        // Production levels for Jetty (its DEBUG prints headers, as the README warns); other tests in
        // this JVM may have changed them.
        Logger jetty = (Logger)LoggerFactory.getLogger("org.eclipse.jetty");
        jettyLevel = jetty.getLevel();
        jetty.setLevel(Level.WARN);
        logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
    }

    private void writeSecrets(Map<String, String> values) throws Exception
    {
        StringBuilder yaml = new StringBuilder();
        values.forEach((k, v) -> yaml.append(k).append(": \"").append(v).append("\"\n"));
        Path next = secrets.resolveSibling("secrets.next");
        Files.writeString(next, yaml);
        Files.setPosixFilePermissions(next, PosixFilePermissions.fromString("rw-------"));
        Files.move(next, secrets, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    private void configure(GatewayConfig config)
    {
        config.trustStoreOf(target);
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.secrets.file", secrets.toString());
        config.set("egress.secrets.overlap", "2s");
        config.set("egress.routes", List.of(
            Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "llm"), "upstream", "main", "credential", "openai"),
            Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "messages"), "upstream", "main", "credential", "anthropic"),
            Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "llm"), "upstream", "main", "credential", "openai"),
            Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "redact"), "upstream", "main", "credential", "openai",
                "scan", "redact", "scan_responses", true),
            Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "report"), "upstream", "main", "scan", "report"),
            Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "off"), "upstream", "main", "scan", "off"),
            Map.of("match", Map.of("domains", List.of("localhost"), "task_type", "vendor"), "upstream", "main", "credential", "vendor"),
            Map.of("match", Map.of("domains", List.of("*"), "task_type", "anywhere"), "upstream", "main"),
            Map.of("match", Map.of("domains", List.of("localhost", "127.0.0.1")), "upstream", "main")));
        config.set("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(Map.of("id", "n1", "address", node.address())))));
        Map<String, Object> credentials = new LinkedHashMap<>();
        credentials.put("openai", Map.of("secret", "openai", "hosts", List.of("localhost")));
        credentials.put("anthropic", Map.of("secret", "anthropic", "hosts", List.of("localhost"), "header", "x-api-key"));
        credentials.put("vendor", Map.of("secret", "vendor", "hosts", List.of("localhost"), "query", "key"));
        config.set("egress.credentials", credentials);
        config.set("egress.agents", List.of(
            Map.of("id", "alpha", "token", "alpha-token", "credentials", List.of("openai", "anthropic", "vendor")),
            Map.of("id", "beta", "token", "beta-token", "credentials", List.of("anthropic")),
            Map.of("id", "old", "token", "old-token", "credentials", List.of("openai"), "expires", Instant.now().minusSeconds(60).toString()),
            Map.of("id", "gone", "token", "gone-token", "credentials", List.of("openai"), "revoked", true)));
    }

    @AfterEach
    void stop() throws Exception
    {
        ((Logger)LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logged);
        ((Logger)LoggerFactory.getLogger("io.sandgate")).setLevel(sandgateLevel);
        ((Logger)LoggerFactory.getLogger("org.eclipse.jetty")).setLevel(jettyLevel);
    }

    private HttpResponse<String> post(String host, String taskType, String authorization) throws Exception
    {
        return post(host, taskType, authorization, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    }

    private HttpResponse<String> post(String host, String taskType, String authorization, String body) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve("/egress/" + host + ":" + target.httpsPort() + "/echo"))
            .timeout(Duration.ofSeconds(15)).header("X-Agent-Task-Type", taskType)
            .POST(HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null)
            request.header("Authorization", authorization);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private void assertNothingSecretLogged(String... alsoSecret)
    {
        assertFalse(logged.list.isEmpty(), "log lines were captured");
        for (ILoggingEvent event : List.copyOf(logged.list))
        {
            String line = event.getLoggerName() + " " + event.getLevel() + " " + event.getFormattedMessage() + (event.getThrowableProxy() == null ? "" : event.getThrowableProxy().getMessage());
            assertFalse(line.contains(OPENAI_KEY), line);
            assertFalse(line.contains(ANTHROPIC_KEY), line);
            assertFalse(line.contains(AGENT_TOKEN), line);
            for (String secret : alsoSecret)
                assertFalse(line.contains(secret), line);
        }
    }

    @Test
    void realKeyReachesTheTarget_internalTokenNever_andNothingSecretIsLogged() throws Exception
    {
        HttpResponse<String> response = post("localhost", "llm", "Bearer " + AGENT_TOKEN);
        assertEquals(200, response.statusCode(), response.body());
        TargetServer.Recorded seen = target.requests().get(0);
        assertEquals("Bearer " + OPENAI_KEY, seen.header("Authorization"));
        assertTrue(seen.header("Host").startsWith("localhost"), seen.header("Host"));

        HttpResponse<String> messages = post("localhost", "messages", "Bearer " + AGENT_TOKEN);
        assertEquals(200, messages.statusCode(), messages.body());
        TargetServer.Recorded second = target.requests().get(1);
        assertEquals(ANTHROPIC_KEY, second.header("x-api-key"));
        assertNull(second.header("Authorization"), "the internal token is removed, not forwarded");
        for (TargetServer.Recorded recorded : target.requests())
            assertFalse(recorded.toString().contains(AGENT_TOKEN), "target never sees the internal token");
        assertNothingSecretLogged();
    }

    @Test
    void missingUnknownRevokedAndExpiredTokens_get401_andNothingIsSent() throws Exception
    {
        assertEquals(401, post("localhost", "llm", null).statusCode());
        HttpResponse<String> unknown = post("localhost", "llm", "Bearer sgt_nobody_knows_this");
        assertEquals(401, unknown.statusCode());
        assertTrue(unknown.body().contains("unknown internal token"), unknown.body());
        HttpResponse<String> revoked = post("localhost", "llm", "Bearer sgt_agent_gone_0123456789");
        assertEquals(401, revoked.statusCode());
        assertTrue(revoked.body().contains("revoked"), revoked.body());
        HttpResponse<String> expired = post("localhost", "llm", "Bearer sgt_agent_old_0123456789");
        assertEquals(401, expired.statusCode());
        assertTrue(expired.body().contains("expired"), expired.body());
        assertEquals(0, target.requestCount());
    }

    @Test
    void tokenOnAHostItsCredentialIsNotBoundTo_gets403_andIsNotSwapped() throws Exception
    {
        HttpResponse<String> wrongHost = post("127.0.0.1", "llm", "Bearer " + AGENT_TOKEN);
        assertEquals(403, wrongHost.statusCode(), wrongHost.body());
        assertTrue(wrongHost.body().contains("not bound to host 127.0.0.1"), wrongHost.body());

        HttpResponse<String> noCredential = post("127.0.0.1", "other", "Bearer " + AGENT_TOKEN);
        assertEquals(403, noCredential.statusCode(), "an internal token is never forwarded where nothing replaces it");

        HttpResponse<String> notAllowed = post("localhost", "llm", "Bearer sgt_agent_beta_0123456789");
        assertEquals(403, notAllowed.statusCode());
        assertTrue(notAllowed.body().contains("may not use credential openai"), notAllowed.body());
        assertEquals(0, target.requestCount());
        assertFalse(wrongHost.body().contains(OPENAI_KEY));

        HttpResponse<String> ownKey = post("127.0.0.1", "other", "Bearer agents-own-key-for-a-public-api");
        assertEquals(200, ownKey.statusCode(), "other Authorization values pass on routes without a credential");
        assertEquals("Bearer agents-own-key-for-a-public-api", target.requests().get(0).header("Authorization"));
    }

    @Test
    void rotation_newValuesAtOnce_oldTokenValidForTheOverlapOnly() throws Exception
    {
        assertEquals(200, post("localhost", "llm", "Bearer " + AGENT_TOKEN).statusCode());
        String newKey = "sk-" + "proj-" + "N3wK3yN3wK3yN3wK3yN3".repeat(2);
        String newToken = "sgt_agent_alpha_rotated_42";
        writeSecrets(Map.of("openai", newKey, "anthropic", ANTHROPIC_KEY, "vendor", VENDOR_KEY, "alpha-token", newToken,
            "beta-token", "sgt_agent_beta_0123456789", "old-token", "sgt_agent_old_0123456789", "gone-token", "sgt_agent_gone_0123456789"));

        await().atMost(Duration.ofSeconds(5)).until(() -> post("localhost", "llm", "Bearer " + newToken).statusCode() == 200);
        assertEquals("Bearer " + newKey, target.requests().get(target.requestCount() - 1).header("Authorization"), "the new key is used at once");
        HttpResponse<String> old = post("localhost", "llm", "Bearer " + AGENT_TOKEN);
        assertEquals(200, old.statusCode(), "the old token works during the overlap: " + old.body());
        await().atMost(Duration.ofSeconds(10)).until(() -> post("localhost", "llm", "Bearer " + AGENT_TOKEN).statusCode() == 401);
        assertEquals(200, post("localhost", "llm", "Bearer " + newToken).statusCode());
    }

    private static String awsKeyId()
    {
        return "AKIA" + "QWERTYUIOP234567";
    }

    /**
     * Sends a chunked POST whose body is written in two separate chunks with a flush between, the
     * key split across them, and returns the raw response.
     */
    private String postInTwoChunks(String taskType, String first, String second) throws Exception
    {
        return postInTwoChunks(taskType, "", first, second);
    }

    private String postInTwoChunks(String taskType, String extraHeaders, String first, String second) throws Exception
    {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", gateway.port()))
        {
            socket.setSoTimeout(15_000);
            var out = socket.getOutputStream();
            out.write(("POST /egress/localhost:" + target.httpsPort() + "/echo HTTP/1.1\r\nHost: gw\r\nX-Agent-Task-Type: " + taskType
                + "\r\n" + extraHeaders + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            out.write((Integer.toHexString(first.length()) + "\r\n" + first + "\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            out.flush();
            // The gateway reads the first chunk on its own; the second arrives separately.
            await().pollDelay(Duration.ofMillis(150)).until(() -> true);
            out.write((Integer.toHexString(second.length()) + "\r\n" + second + "\r\n0\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            out.flush();
            return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    private String metrics() throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void leakSplitAcrossTwoChunks_isBlockedWith422_namingTheRule_andNoneOfItIsSent() throws Exception
    {
        String key = awsKeyId();
        String response = postInTwoChunks("other", "{\"messages\":[{\"content\":\"my key is " + key.substring(0, 9), key.substring(9) + " thanks\"}]}");
        assertTrue(response.startsWith("HTTP/1.1 422"), response);
        assertTrue(response.contains("aws-access-key-id"), response);
        assertFalse(response.contains(key), "the error names the rule, never the match");
        assertEquals(0, target.requestCount(), "the target never got a complete request");
        assertTrue(metrics().contains("rule=\"aws-access-key-id\""), "alert metric by rule");
        assertTrue(List.copyOf(logged.list).stream().anyMatch(e -> e.getFormattedMessage().contains("aws-access-key-id")), "the rule is logged");
        assertFalse(List.copyOf(logged.list).stream().anyMatch(e -> e.getFormattedMessage().contains(key.substring(4))), "the key is not");

        HttpResponse<String> clean = post("localhost", "other", null, "{\"messages\":[{\"content\":\"AKIA is a prefix, nothing more\"}]}");
        assertEquals(200, clean.statusCode(), "a body without a secret passes: " + clean.body());
    }

    @Test
    void redactRoute_replacesSecretsInRequestAndResponse_evenTheInjectedKeyEchoedBack() throws Exception
    {
        String github = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
        String response = postInTwoChunks("redact", "Authorization: Bearer " + AGENT_TOKEN + "\r\n",
            "{\"content\":\"token " + github.substring(0, 20), github.substring(20) + " end\"}");
        assertTrue(response.startsWith("HTTP/1.1 200"), response);
        TargetServer.Recorded seen = target.requests().get(0);
        assertEquals("{\"content\":\"token [REDACTED] end\"}", seen.body(), "the target gets the body with the token replaced");
        assertFalse(response.contains(OPENAI_KEY), "the target echoes the key back; the response scan redacts it");
        assertTrue(response.contains("h:authorization=Bearer [REDACTED]"), response);

        HttpResponse<String> redacted = post("localhost", "redact", "Bearer " + AGENT_TOKEN, "{\"content\":\"token " + github + " end\"}");
        assertEquals(200, redacted.statusCode(), redacted.body());
        seen = target.requests().get(1);
        assertEquals("{\"content\":\"token [REDACTED] end\"}", seen.body());
        assertEquals("Bearer " + OPENAI_KEY, seen.header("Authorization"), "the injected key still reaches the target");
        assertFalse(redacted.body().contains(OPENAI_KEY), "the target echoes the key back; the response scan redacts it");
        assertTrue(redacted.body().contains("h:authorization=Bearer [REDACTED]"), redacted.body());
    }

    @Test
    void reportRoute_passesTheBodyUnchanged_butCountsTheHit() throws Exception
    {
        String key = awsKeyId();
        HttpResponse<String> response = post("localhost", "report", null, "{\"content\":\"" + key + "\"}");
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(target.requests().get(0).body().contains(key));
        assertTrue(metrics().contains("mode=\"report\""), "reported hits are counted");
    }

    @Test
    void realKeysTheGatewayHolds_areCaughtEvenWithoutARuleForTheirShape() throws Exception
    {
        HttpResponse<String> pasted = post("localhost", "other", null, "{\"content\":\"use " + VENDOR_KEY + " please\"}");
        assertEquals(422, pasted.statusCode(), pasted.body());
        assertTrue(pasted.body().contains("sandgate-credential"), pasted.body());
        assertEquals(0, target.requestCount());
    }

    @Test
    void secretInAPath_isBlocked_andRedactedInTheAccessLog() throws Exception
    {
        String github = "ghp_" + "pL4tH9sEcReT1nUrL5aB7cD9eF1gH3iJ5kL7";
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/egress/localhost:" + target.httpsPort() + "/hook/" + github))
            .header("X-Agent-Task-Type", "other").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(422, response.statusCode(), "a key in the URL is stopped like one in the body: " + response.body());
        await().atMost(Duration.ofSeconds(5)).until(() -> List.copyOf(logged.list).stream().anyMatch(e -> e.getLoggerName().equals("sandgate.access")
            && e.getFormattedMessage().contains("/hook/[REDACTED]")));
        assertFalse(List.copyOf(logged.list).stream().anyMatch(e -> e.getFormattedMessage().contains(github)));
    }

    /** A GET of {@code pathAndQuery} on the target with the headers exactly as given (name, value pairs). */
    private RawHttp.Response getAt(String taskType, String pathAndQuery, String... headers) throws Exception
    {
        List<String> all = new ArrayList<>(List.of("X-Agent-Task-Type", taskType));
        all.addAll(List.of(headers));
        return RawHttp.get(gateway.port(), "127.0.0.1:" + gateway.port(), "/egress/localhost:" + target.httpsPort() + pathAndQuery, all.toArray(String[]::new));
    }

    /**
     * A secret in the path or query of a redacting route was counted and logged as redacted, but
     * the URL went to the target as the agent wrote it. The target now sees the marker in its place.
     */
    @Test
    void secretsInThePathAndQuery_ofARedactingRoute_reachTheTargetRedacted() throws Exception
    {
        String github = "ghp_" + "uRlP4tH9sEcReT1nUrL5aB7cD9eF1gH3iJ5k";
        String aws = awsKeyId();
        RawHttp.Response response = getAt("redact", "/hook/" + github + "?q=" + aws + "&x=1", "Authorization", "Bearer " + AGENT_TOKEN);
        assertEquals(404, response.status(), "sent redacted, not refused: the target has no /hook");
        String seen = target.requests().get(0).pathAndQuery();
        assertFalse(seen.contains(github) || seen.contains(aws), "a secret reached the target");
        assertEquals("/hook/%5BREDACTED%5D?q=%5BREDACTED%5D&x=1", seen);
        String metrics = metrics();
        assertTrue(metrics.contains("direction=\"request\",mode=\"redact\",route=\"localhost\",rule=\"github-token\""), "counted as redacted");
        assertTrue(metrics.contains("direction=\"request\",mode=\"redact\",route=\"localhost\",rule=\"aws-access-key-id\""), "counted as redacted");
        assertNowhere(github, response);
        assertNowhere(aws, response);
    }

    /**
     * A key the gateway holds went out in the URL of a route that only reports or does not scan,
     * though the same key in a header is refused whatever the mode. It is refused in the URL too,
     * and redacted on a redacting route, as in a header.
     */
    @Test
    void keysTheGatewayHolds_neverLeaveInTheUrl_whateverTheRoutesMode() throws Exception
    {
        assertRefusedInTheUrlOnEveryMode(VENDOR_KEY, "a held key");
        assertEquals(0, target.requestCount());

        RawHttp.Response redacted = getAt("redact", "/echo?k=" + VENDOR_KEY, "Authorization", "Bearer " + AGENT_TOKEN);
        assertEquals(200, redacted.status(), "redacted on a redacting route");
        assertFalse(target.requests().get(0).pathAndQuery().contains(VENDOR_KEY), "the held key reached the target");
        assertEquals("/echo?k=%5BREDACTED%5D", target.requests().get(0).pathAndQuery());
    }

    /** The held key, spelled as given, in the query and in the path of a blocking, a reporting and an unscanned route: 422 each time. */
    private void assertRefusedInTheUrlOnEveryMode(String spelled, String what) throws Exception
    {
        for (String taskType : List.of("other", "report", "off"))
        {
            RawHttp.Response inQuery = getAt(taskType, "/echo?k=" + spelled);
            assertEquals(422, inQuery.status(), taskType + ": " + what + " in the query");
            assertTrue(inQuery.body().contains("sandgate-credential"), inQuery.body());
            RawHttp.Response inPath = getAt(taskType, "/files/" + spelled);
            assertEquals(422, inPath.status(), taskType + ": " + what + " in the path");
            assertNowhere(VENDOR_KEY, inQuery, inPath);
        }
    }

    /**
     * The URL check read the path and query still percent-encoded, so the gateway's own key escaped
     * byte by byte, or a provider key with one escaped character, reached the target, which decodes
     * them back. The decoded form is read too: refused as a plain key would be, and on a redacting
     * route redacted where it stands, escapes and all.
     */
    @Test
    void percentEncodedSecretsInTheUrl_areRefusedOrRedacted_asPlainOnes() throws Exception
    {
        StringBuilder escaped = new StringBuilder();
        for (byte b : VENDOR_KEY.getBytes(StandardCharsets.UTF_8))
            escaped.append(String.format("%%%02X", b & 0xFF));
        assertRefusedInTheUrlOnEveryMode(escaped.toString(), "a held key escaped");
        String agentsOwn = "sk-" + "proj-" + "M4n5B6v7C8x9Z0l1K2j3".repeat(2);
        RawHttp.Response rule = getAt("other", "/echo?key=" + agentsOwn.replace("-", "%2D"));
        assertEquals(422, rule.status(), "a rule's secret with escaped characters: " + rule.body());
        assertTrue(rule.body().contains("openai-api-key"), rule.body());
        assertNowhere(agentsOwn.substring(8), rule);
        assertEquals(0, target.requestCount());

        RawHttp.Response redacted = getAt("redact", "/echo?a=%41&k=" + escaped + "&b=1", "Authorization", "Bearer " + AGENT_TOKEN);
        assertEquals(200, redacted.status(), "redacted on a redacting route");
        assertEquals("/echo?a=%41&k=%5BREDACTED%5D&b=1", target.requests().get(0).pathAndQuery());
        assertTrue(metrics().contains("direction=\"request\",mode=\"redact\",route=\"localhost\",rule=\"sandgate-credential\""), "counted as redacted");
        assertNowhere(VENDOR_KEY, redacted);
        // The access log writes the URLs it refused: the escaped forms are the secrets too.
        assertNothingSecretLogged(escaped.toString(), agentsOwn.replace("-", "%2D").substring(8));
    }

    /**
     * A target that repeats the request it got (a debug echo, a 404 page quoting the URL) handed the
     * injected key to the agent in the body: only response headers were redacted, and bodies were
     * read only on routes with {@code scan_responses}. On a route that injects a credential the
     * injection's keys are now redacted from the body under the default settings, for a key in a
     * header and one in the query alike.
     */
    @Test
    void injectedKeyRepeatedInTheResponseBody_neverReachesTheAgent_underDefaultSettings() throws Exception
    {
        HttpResponse<String> echoed = post("localhost", "llm", "Bearer " + AGENT_TOKEN);
        assertEquals(200, echoed.statusCode());
        assertTrue(("Bearer " + OPENAI_KEY).equals(target.requests().get(0).header("Authorization")), "the target got the key");
        assertFalse(echoed.body().contains(OPENAI_KEY), "the echo of the header-injected key reached the agent");
        assertTrue(echoed.body().contains("h:authorization=Bearer [REDACTED]"), echoed.body());

        RawHttp.Response inQuery = getAt("vendor", "/echo?q=maps", "x-goog-api-key", AGENT_TOKEN);
        assertEquals(200, inQuery.status());
        assertFalse(inQuery.body().contains(VENDOR_KEY), "the echo of the query-injected key reached the agent");
        assertTrue(inQuery.body().contains("path=/echo?q=maps&key=[REDACTED]"), inQuery.body());
        RawHttp.Response notFound = getAt("vendor", "/missing?q=maps", "x-goog-api-key", AGENT_TOKEN);
        assertEquals(404, notFound.status());
        assertTrue(target.requests().get(2).pathAndQuery().endsWith("&key=" + VENDOR_KEY), "the target got the key");
        assertFalse(notFound.body().contains(VENDOR_KEY), "the 404 page quoting the query handed the key to the agent");
        assertTrue(notFound.body().contains("key=[REDACTED]"), "the page quotes the query: " + notFound.body());

        assertTrue(metrics().contains("direction=\"response\",mode=\"redact\",route=\"localhost\",rule=\"sandgate-credential\""),
            "the target's repeating the key is counted");
        assertNothingSecretLogged();
        assertNowhere(VENDOR_KEY);
    }

    /** A GET through the gateway as an agent's HTTP client makes it, the body as the agent reads it: decoded by its Content-Encoding. */
    private HttpResponse<byte[]> getAsAnAgent(String taskType, String pathAndQuery) throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/egress/localhost:" + target.httpsPort() + pathAndQuery))
            .timeout(Duration.ofSeconds(15)).header("X-Agent-Task-Type", taskType).header("Authorization", "Bearer " + AGENT_TOKEN).build(),
            HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String readAsAnAgent(HttpResponse<byte[]> response) throws Exception
    {
        String encoding = response.headers().firstValue("Content-Encoding").orElse("identity");
        java.io.InputStream body = new java.io.ByteArrayInputStream(response.body());
        body = switch (encoding)
        {
            case "gzip" -> new java.util.zip.GZIPInputStream(body);
            case "deflate" -> new java.util.zip.InflaterInputStream(body);
            default -> body;
        };
        return new String(body.readAllBytes(), StandardCharsets.UTF_8);
    }

    /**
     * Routes that read answers ask the target for {@code Accept-Encoding: identity}, but a target
     * that compressed its answer anyway passed the scan unread: the echo of the injected key reached
     * the agent gzipped, one gunzip away. Such an answer is now decoded as it streams, scanned, and
     * passed on decoded, without Content-Encoding or the compressed Content-Length.
     */
    @Test
    void compressedAnswer_isReadDecoded_andTheInjectedKeyRedacted() throws Exception
    {
        for (String encoding : List.of("gzip", "deflate"))
        {
            for (String taskType : List.of("llm", "redact"))
            {
                HttpResponse<byte[]> echoed = getAsAnAgent(taskType, "/encoded-echo?encoding=" + encoding);
                String body = readAsAnAgent(echoed);
                assertEquals(200, echoed.statusCode(), body);
                assertTrue(("Bearer " + OPENAI_KEY).equals(target.requests().get(target.requestCount() - 1).header("Authorization")), "the target got the key");
                assertFalse(body.contains(OPENAI_KEY), taskType + ": the " + encoding + " echo of the injected key reached the agent");
                assertTrue(body.contains("h:authorization=Bearer [REDACTED]"), body);
                assertTrue(echoed.headers().firstValue("Content-Encoding").isEmpty(), "the agent gets the answer decoded");
                assertTrue(echoed.headers().firstValue("Content-Length").isEmpty(), "the compressed length is not the decoded one");
            }
        }
        assertTrue(metrics().contains("direction=\"response\",mode=\"redact\",route=\"localhost\",rule=\"sandgate-credential\""), "counted as redacted");
        assertNothingSecretLogged();
    }

    /**
     * An answer in an encoding the gateway cannot decode (br, zstd, a name it does not know) is
     * refused with 502 before any of it reaches the agent: it could hold the key unseen. The error
     * names the encoding only when it is a known one: the header is the target's text.
     */
    @Test
    void answerInAnEncodingTheGatewayCannotDecode_isRefusedWith502() throws Exception
    {
        HttpResponse<byte[]> brotli = getAsAnAgent("llm", "/encoded-echo?encoding=br");
        String body = new String(brotli.body(), StandardCharsets.UTF_8);
        assertEquals(502, brotli.statusCode(), body);
        assertTrue(body.contains("encoded_response") && body.contains("Content-Encoding br"), body);
        assertFalse(body.contains(OPENAI_KEY), body);

        HttpResponse<byte[]> unknown = getAsAnAgent("llm", "/encoded-echo?encoding=weird-zip-9");
        String unknownBody = new String(unknown.body(), StandardCharsets.UTF_8);
        assertEquals(502, unknown.statusCode(), unknownBody);
        assertTrue(unknownBody.contains("unknown kind") && !unknownBody.contains("weird-zip-9"), unknownBody);
        HttpResponse<byte[]> layered = getAsAnAgent("llm", "/encoded-echo?encoding=gzip,%20br");
        assertEquals(502, layered.statusCode(), new String(layered.body(), StandardCharsets.UTF_8));

        HttpResponse<String> unread = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/egress/localhost:" + target.httpsPort() + "/encoded-echo?encoding=br"))
            .header("X-Agent-Task-Type", "off").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, unread.statusCode(), "a route that reads no answer passes it as it is");
        assertEquals("br", unread.headers().firstValue("Content-Encoding").orElse(null));
        assertTrue(metrics().contains("outcome=\"failure\""), "counted as a failed exchange");
        assertTrue(List.copyOf(logged.list).stream().anyMatch(e -> e.getFormattedMessage().contains("Content-Encoding br")), "and logged");
        assertNothingSecretLogged();
    }

    /**
     * A gzip bomb (200 MB of zeros in about 200 KB) is refused once its decoded bytes outgrow the
     * compressed ones a hundredfold, which its first slice does: a clear 502 before any of it has
     * been sent, and no more memory than a slice held.
     */
    @Test
    void gzipBomb_isRefusedWith502_beforeAnyOfItIsSent() throws Exception
    {
        HttpResponse<byte[]> bomb = getAsAnAgent("llm", "/bomb?mb=200");
        String body = new String(bomb.body(), StandardCharsets.UTF_8);
        assertEquals(502, bomb.statusCode(), "the bomb reached the agent: " + bomb.body().length + " bytes, Content-Encoding "
            + bomb.headers().firstValue("Content-Encoding").orElse("none"));
        assertTrue(body.contains("encoded_response") && body.contains("expands more than 100 times"), body);
        assertEquals(200, getAsAnAgent("llm", "/encoded-echo?encoding=gzip").statusCode(), "the gateway serves on");
    }

    @Test
    void anthropicStyleClients_sendTheTokenAsXApiKey_andItIsReplacedToo() throws Exception
    {
        HttpRequest request = HttpRequest.newBuilder(gateway.uri().resolve("/egress/localhost:" + target.httpsPort() + "/echo"))
            .header("X-Agent-Task-Type", "messages").header("x-api-key", AGENT_TOKEN).header("anthropic-version", "2023-06-01")
            .POST(HttpRequest.BodyPublishers.ofString("{}")).build();
        HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        assertEquals(ANTHROPIC_KEY, target.requests().get(0).header("x-api-key"));

        HttpRequest elsewhere = HttpRequest.newBuilder(gateway.uri().resolve("/egress/127.0.0.1:" + target.httpsPort() + "/echo"))
            .header("X-Agent-Task-Type", "other").header("x-api-key", AGENT_TOKEN).build();
        assertEquals(403, HTTP.send(elsewhere, HttpResponse.BodyHandlers.ofString()).statusCode(), "an internal token in x-api-key is not forwarded either");
        assertEquals(1, target.requestCount());
    }

    @Test
    void queryCredential_replacesTheAgentsOwnParameter() throws Exception
    {
        HttpRequest request = HttpRequest.newBuilder(gateway.uri().resolve("/egress/localhost:" + target.httpsPort() + "/echo?q=maps&key=" + AGENT_TOKEN))
            .header("X-Agent-Task-Type", "vendor").header("x-goog-api-key", AGENT_TOKEN).build();
        HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        TargetServer.Recorded seen = target.requests().get(0);
        assertEquals("/echo?q=maps&key=" + VENDOR_KEY, seen.pathAndQuery());
        assertNull(seen.header("x-goog-api-key"), "the internal token's header is removed");
        assertFalse(seen.toString().contains(AGENT_TOKEN));
    }

    @Test
    void unscannableOrCleartextRequests_areRefused() throws Exception
    {
        HttpRequest gzipped = HttpRequest.newBuilder(gateway.uri().resolve("/egress/localhost:" + target.httpsPort() + "/echo"))
            .header("X-Agent-Task-Type", "other").header("Content-Encoding", "gzip").POST(HttpRequest.BodyPublishers.ofByteArray(new byte[] {31, -117, 8, 0})).build();
        HttpResponse<String> encoded = HTTP.send(gzipped, HttpResponse.BodyHandlers.ofString());
        assertEquals(415, encoded.statusCode(), "a compressed body would hide a key from the scanner: " + encoded.body());

        gateway.restart(config -> config.set("egress.forward-proxy-port", "0"));
        HttpClient viaProxy = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .proxy(java.net.ProxySelector.of(new java.net.InetSocketAddress("127.0.0.1", gateway.forwardProxyPort()))).build();
        HttpResponse<String> cleartext = viaProxy.send(HttpRequest.newBuilder(java.net.URI.create("http://localhost:" + target.httpPort() + "/echo"))
            .header("X-Agent-Task-Type", "llm").header("Authorization", "Bearer " + AGENT_TOKEN).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(403, cleartext.statusCode(), "a real key is never sent over plain http: " + cleartext.body());
        assertEquals(0, target.requestCount());
    }

    @Test
    void deletingATokenFromTheSource_cutsTheAgentOff_overlapOrNot() throws Exception
    {
        assertEquals(200, post("localhost", "llm", "Bearer " + AGENT_TOKEN).statusCode());
        assertEquals(200, post("localhost", "messages", "Bearer sgt_agent_beta_0123456789").statusCode());
        writeSecrets(Map.of("openai", OPENAI_KEY, "anthropic", ANTHROPIC_KEY, "vendor", VENDOR_KEY, "alpha-token", AGENT_TOKEN,
            "old-token", "sgt_agent_old_0123456789", "gone-token", "sgt_agent_gone_0123456789"));
        // beta's token is gone from the file: the next refresh (an unknown token triggers one) drops it, overlap or not.
        await().atMost(Duration.ofSeconds(10)).until(() ->
        {
            post("localhost", "llm", "Bearer sgt_refresh_trigger");
            return post("localhost", "messages", "Bearer sgt_agent_beta_0123456789").statusCode() == 401;
        });
        assertEquals(200, post("localhost", "llm", "Bearer " + AGENT_TOKEN).statusCode(), "other agents are untouched");
    }

    @Test
    void ssrf_internalTargetsAreRefusedInEveryMode_andNoNodeIsAsked() throws Exception
    {
        gateway.restart(config -> config.setAll(Map.of("egress.ssrf.allow", "192.0.2.0/24", "egress.forward-proxy-port", "0")));
        for (String host : List.of("127.0.0.1", "169.254.169.254", "10.0.0.1", "%5B::ffff:127.0.0.1%5D", "%5B::1%5D", "localhost", "2130706433"))
        {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/egress/" + host + "/latest/meta-data"))
                .header("X-Agent-Task-Type", "anywhere").build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(host.equals("2130706433") ? 400 : 403, response.statusCode(), host + ": " + response.body());
            if (host.equals("localhost"))
                assertFalse(response.body().contains("127.0.0.1"), "a name's resolved address is not revealed: " + response.body());
        }
        HttpClient viaProxy = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .proxy(java.net.ProxySelector.of(new java.net.InetSocketAddress("127.0.0.1", gateway.forwardProxyPort()))).build();
        HttpResponse<String> absolute = viaProxy.send(HttpRequest.newBuilder(java.net.URI.create("http://169.254.169.254/latest/meta-data"))
            .header("X-Agent-Task-Type", "anywhere").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(403, absolute.statusCode(), absolute.body());
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", gateway.port()))
        {
            socket.getOutputStream().write("CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\nX-Agent-Task-Type: anywhere\r\n\r\n"
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String status = new java.io.BufferedReader(new java.io.InputStreamReader(socket.getInputStream())).readLine();
            assertTrue(status.startsWith("HTTP/1.1 403"), status);
        }
        assertTrue(node.received().isEmpty(), "no node was asked to reach an internal address: " + node.received());
        assertEquals(0, target.requestCount());
    }

    /** A GET to the target with the headers exactly as given (name, value pairs; repeated names and any case). */
    private RawHttp.Response getWith(String taskType, String... headers) throws Exception
    {
        List<String> all = new ArrayList<>(List.of("X-Agent-Task-Type", taskType));
        all.addAll(List.of(headers));
        return RawHttp.get(gateway.port(), "127.0.0.1:" + gateway.port(), "/egress/localhost:" + target.httpsPort() + "/echo", all.toArray(String[]::new));
    }

    private void assertNowhere(String secret, RawHttp.Response... responses) throws Exception
    {
        for (RawHttp.Response response : responses)
            assertFalse(response.body().contains(secret), "the error names the rule, never the match: " + response.body());
        assertFalse(metrics().contains(secret), "metrics labels hold no secret");
        for (ILoggingEvent event : List.copyOf(logged.list))
            assertFalse(event.getFormattedMessage().contains(secret), event.getFormattedMessage());
    }

    @Test
    void secretsInRequestHeaders_areScannedLikeTheBody_underTheRoutesMode() throws Exception
    {
        String aws = awsKeyId();
        String github = "ghp_" + "hE4dErT0kEn5aB7cD9eF1gH3iJ5kL7mN9pQ1";
        RawHttp.Response data = getWith("other", "X-Data", aws);
        assertEquals(422, data.status(), data.body());
        assertTrue(data.body().contains("aws-access-key-id"), data.body());
        RawHttp.Response cookie = getWith("other", "Cookie", "session=1; gh=" + github);
        assertEquals(422, cookie.status(), cookie.body());
        RawHttp.Response inAName = getWith("other", "X-" + aws, "1");
        assertEquals(422, inAName.status(), inAName.body());
        assertEquals(0, target.requestCount(), "a blocking route sends nothing");

        RawHttp.Response reported = getWith("report", "X-Data", aws);
        assertEquals(200, reported.status(), reported.body());
        assertEquals(aws, target.requests().get(0).header("x-data"), "a reporting route passes the header unchanged");
        assertTrue(metrics().contains("mode=\"report\""), "and counts the hit");

        RawHttp.Response redacted = getWith("redact", "Authorization", "Bearer " + AGENT_TOKEN, "X-Data", "key " + aws, "Cookie", "gh=" + github);
        assertEquals(200, redacted.status(), redacted.body());
        TargetServer.Recorded seen = target.requests().get(1);
        assertEquals("key [REDACTED]", seen.header("x-data"));
        assertEquals("gh=[REDACTED]", seen.header("cookie"));
        assertEquals("Bearer " + OPENAI_KEY, seen.header("authorization"), "the injected key is the gateway's own header: it goes whole");

        RawHttp.Response off = getWith("off", "X-Data", aws);
        assertEquals(200, off.status(), "a route that does not scan passes rule hits: " + off.body());
        assertNowhere(aws, data, inAName);
        assertNowhere(github, cookie);
    }

    @Test
    void keysTheGatewayHolds_neverLeaveInAHeader_whateverTheRoutesMode() throws Exception
    {
        for (String taskType : List.of("other", "report", "off"))
        {
            RawHttp.Response pasted = getWith(taskType, "X-Foo", "k=" + VENDOR_KEY);
            assertEquals(422, pasted.status(), taskType + ": " + pasted.body());
            assertTrue(pasted.body().contains("sandgate-credential"), pasted.body());
            assertNowhere(VENDOR_KEY, pasted);
        }
        RawHttp.Response beside = getWith("llm", "Authorization", "Bearer " + AGENT_TOKEN, "X-Foo", OPENAI_KEY);
        assertEquals(422, beside.status(), "the agent may not send the key the gateway injects: " + beside.body());
        assertEquals(0, target.requestCount());

        RawHttp.Response redacted = getWith("redact", "Authorization", "Bearer " + AGENT_TOKEN, "X-Foo", OPENAI_KEY);
        assertEquals(200, redacted.status(), redacted.body());
        assertEquals("[REDACTED]", target.requests().get(0).header("x-foo"));
        assertNowhere(OPENAI_KEY, beside);
    }

    @Test
    void internalTokenInAnyValueOfARepeatedHeader_isRefused_whateverTheNamesCase() throws Exception
    {
        RawHttp.Response second = getWith("anywhere", "Authorization", "Bearer agents-own-key-for-a-public-api",
            "authorization", "Bearer " + AGENT_TOKEN);
        assertEquals(403, second.status(), "the second Authorization is forwarded too: " + second.body());
        RawHttp.Response apiKey = getWith("anywhere", "X-Api-Key", "agents-own-key", "x-API-key", AGENT_TOKEN);
        assertEquals(403, apiKey.status(), apiKey.body());
        assertEquals(0, target.requestCount());
        assertNowhere(AGENT_TOKEN, second, apiKey);

        RawHttp.Response encoded = getWith("other", "Content-Encoding", "identity", "content-encoding", "gzip");
        assertEquals(415, encoded.status(), "every Content-Encoding counts, not the first: " + encoded.body());
    }

    /** The token under a scheme other than Bearer, or as a Basic password, is forwarded just as well: refused too. */
    @Test
    void internalTokenUnderAnotherScheme_orAsABasicPassword_isRefused() throws Exception
    {
        String basic = java.util.Base64.getEncoder().encodeToString(("agent:" + AGENT_TOKEN).getBytes(StandardCharsets.UTF_8));
        for (String value : List.of("Token " + AGENT_TOKEN, "Bearer\t" + AGENT_TOKEN, "bearer  " + AGENT_TOKEN, "Basic " + basic))
        {
            RawHttp.Response refused = getWith("anywhere", "Authorization", value);
            assertEquals(403, refused.status(), refused.body());
            assertNowhere(AGENT_TOKEN, refused);
        }
        assertEquals(0, target.requestCount());
        String ownKey = java.util.Base64.getEncoder().encodeToString("agent:its-own-password".getBytes(StandardCharsets.UTF_8));
        assertEquals(200, getWith("anywhere", "Authorization", "Basic " + ownKey).status(), "an agent's own credentials pass");
    }
}
