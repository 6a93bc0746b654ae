package io.sandgate.egress;

import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.modelcontextprotocol.client.McpSyncClient;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.sandgate.core.Secret;
import io.sandgate.ingress.Grants;
import io.sandgate.leak.Redactor;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpClients;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RecordedSpans;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.tracing.TraceAttributes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.sandgate.testing.BrowserRequests.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No span says a secret the gateway holds or sees: every face is driven with its secrets in play
 * (the cookie secret, a grant and the session cookie it opens, an agent's internal token and the
 * real key injected in its place, a key pasted into an egress path, an MCP client's Authorization),
 * and every name and attribute value of every span exported is searched for each of them.
 */
class SpanSecretsIT
{
    private static final String COOKIE_SECRET = "span-secrets-cookie-secret-0123456789abcdef";
    private static final String KEY = "sk-" + "proj-" + "Sp4nK3ySp4nK3ySp4nK3".repeat(2);
    private static final String AGENT_TOKEN = "sgt_span_agent_0123456789";
    private static final String LEAKED = "sk-" + "proj-" + "P4thL3akP4thL3akP4th".repeat(2);
    private static final String MCP_CREDENTIAL = "mcp-span-credential-0123456789";

    private CredentialRoute route;
    private SandboxBackend sandbox;
    private McpUpstream upstream;
    private RecordedSpans spans;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(config -> route.configure(config)
        .environment("SANDGATE_SECRET_OPENAI", KEY)
        .environment("SANDGATE_SECRET_AGENT_TOKEN", AGENT_TOKEN)
        .set("egress.secrets.source", "env")
        .set("ingress.access", "signed")
        .set("ingress.cookie.secret", COOKIE_SECRET)
        .set("ingress.static-routes", Map.of("4242", sandbox.hostPort()))
        .set("mcp.servers", List.of(Map.of("name", "up", "url", upstream.streamableUrl(), "transport", "streamable")))
        .tracing(spans.tracing()));

    @BeforeEach
    void start() throws Exception
    {
        route = CredentialRoute.start();
        sandbox = SandboxBackend.start("secrets");
        upstream = McpUpstream.start();
        spans = new RecordedSpans();
    }

    @AfterEach
    void stop() throws Exception
    {
        Fixtures.closeInOrder(spans, upstream, sandbox, route);
    }

    @Test
    void noSpanNameOrAttribute_holdsASecretTheGatewayHoldsOrSees() throws Exception
    {
        List<String> secrets = new ArrayList<>(List.of(COOKIE_SECRET, KEY, AGENT_TOKEN, LEAKED, MCP_CREDENTIAL));
        String grant = Grants.create(new Secret(COOKIE_SECRET), Clock.systemUTC()).issue("4242", "alice", Duration.ofMinutes(5));
        secrets.add(grant);
        HttpResponse<String> redeemed = get(gateway.uri(), "/vnc/4242/?sandgate_grant=" + grant);
        assertEquals(303, redeemed.statusCode(), redeemed.body());
        String setCookie = redeemed.headers().firstValue("Set-Cookie").orElseThrow();
        String cookie = setCookie.substring(0, setCookie.indexOf(';'));
        secrets.add(cookie.substring(cookie.indexOf('=') + 1));
        assertEquals(200, get(gateway.uri(), "/vnc/4242/page", "Cookie", cookie).statusCode());

        HttpResponse<String> injected = route.call(gateway, AGENT_TOKEN);
        assertEquals(200, injected.statusCode(), injected.body());
        assertTrue(route.target.requests().get(0).header("authorization").contains(KEY), "the key was injected, so it was in play");
        HttpResponse<String> leak = get(gateway.uri(), "/egress/localhost:" + route.target.httpsPort() + "/echo/" + LEAKED, "Authorization", "Bearer " + AGENT_TOKEN);
        assertEquals(422, leak.statusCode(), leak.body());

        try (McpSyncClient client = McpClients.streamable(gateway.uri().toString(), "/mcp/up/mcp",
            McpClients.options().header("Authorization", "Bearer " + MCP_CREDENTIAL)))
        {
            client.initialize();
            assertEquals("echo: hi", McpClients.text(McpClients.call(client, "echo", Map.of("text", "hi"))));
        }

        spans.awaitSpan("the leak's span", span -> "blocked".equals(span.getAttributes().get(TraceAttributes.LEAK_VERDICT)));
        spans.awaitSpan("the tool call's span", span -> "echo".equals(span.getAttributes().get(TraceAttributes.TOOL_NAME)));
        List<SpanData> ended = spans.ended();
        for (String face : List.of("ingress", "egress", "mcp"))
            assertTrue(ended.stream().anyMatch(span -> face.equals(span.getAttributes().get(TraceAttributes.FACE))), face + " in " + ended);
        assertTrue(ended.stream().anyMatch(span -> String.valueOf(span.getAttributes().get(TraceAttributes.URL_PATH)).contains(Redactor.REDACTED)),
            "the pasted key's path is in a span, redacted: " + ended);
        for (SpanData span : ended)
        {
            List<String> said = new ArrayList<>(List.of(span.getName()));
            span.getAttributes().forEach((key, value) -> said.add(key.getKey() + "=" + value));
            span.getResource().getAttributes().forEach((key, value) -> said.add(key.getKey() + "=" + value));
            for (String text : said)
            {
                for (String secret : secrets)
                    assertFalse(text.contains(secret), () -> "span " + span.getName() + " says a secret: " + text);
            }
        }
    }
}
