package io.sandgate.mcp;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.AuthorizationServerDouble;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A federation with {@code mcp.auth} on: its endpoint is a resource server of its own (its own
 * audience and metadata), the principal owns the federated session, and each member's tool rules by
 * scope still decide what the caller lists and calls through the federation.
 */
class McpFederationAuthIT
{
    private static final String PUBLIC = "https://gw.example";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
        + "\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}";
    private static final McpUpstream javaSdk = McpUpstream.start();
    private static final AuthorizationServerDouble as = AuthorizationServerDouble.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("mcp.auth", Map.of("issuers", List.of(as.issuer()), "jwks-url", as.jwksUri(), "resource-url", PUBLIC))
        .set("mcp.servers", List.of(
            Map.of("name", "scoped", "url", javaSdk.streamableUrl(),
                "tools", Map.of("scopes", Map.of("mcp:admin", List.of("*"), "mcp:read", List.of("e*")))),
            Map.of("name", "plain", "url", javaSdk.streamableUrl())))
        .set("mcp.federations", List.of(Map.of("name", "fed", "servers", List.of("scoped", "plain")))));

    @AfterAll
    static void stop() throws Exception
    {
        Fixtures.closeInOrder(javaSdk, as);
    }

    private static String token(String subject, String audience, String scope)
    {
        return as.token().subject(subject).audience(audience).scope(scope).sign();
    }

    @Test
    void noTokenOrAMembersTokenIsRefusedWithTheFederationsChallenge() throws Exception
    {
        HttpResponse<String> none = post(null, null, INITIALIZE);
        assertEquals(401, none.statusCode(), none::body);
        String challenge = none.headers().firstValue("WWW-Authenticate").orElseThrow();
        assertTrue(challenge.contains("/.well-known/oauth-protected-resource/mcp/fed"), challenge);

        HttpResponse<String> member = post("Bearer " + token("agent", PUBLIC + "/mcp/scoped", "mcp:read"), null, INITIALIZE);
        assertEquals(401, member.statusCode(), member::body);
    }

    @Test
    void theFederationPublishesItsOwnResourceMetadata() throws Exception
    {
        HttpResponse<String> metadata = HTTP.send(HttpRequest.newBuilder(gateway.uri("/.well-known/oauth-protected-resource/mcp/fed/mcp")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(200, metadata.statusCode(), metadata::body);
        JsonNode body = JSON.readTree(metadata.body());
        assertEquals(PUBLIC + "/mcp/fed/mcp", body.path("resource").asText(), metadata::body);
        assertTrue(body.path("scopes_supported").toString().contains("mcp:read"), metadata::body);
    }

    @Test
    void eachMembersScopeRulesDecideWhatTheCallerListsAndCalls() throws Exception
    {
        String authorization = "Bearer " + token("reader", PUBLIC + "/mcp/fed", "mcp:read");
        String session = initialize(authorization);

        JsonNode list = message(post(authorization, session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}"));
        List<String> tools = new ArrayList<>();
        list.path("result").path("tools").forEach(tool -> tools.add(tool.path("name").asText()));
        assertEquals(List.of("plain__add", "plain__ask", "plain__echo", "plain__progress", "scoped__echo"), tools.stream().sorted().toList(), list::toPrettyString);

        JsonNode refused = message(post(authorization, session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"scoped__add\","
            + "\"arguments\":{\"a\":1,\"b\":2}}}"));
        assertEquals(-32602, refused.path("error").path("code").asInt(), refused::toPrettyString);
        JsonNode echo = message(post(authorization, session, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"scoped__echo\","
            + "\"arguments\":{\"text\":\"hi\"}}}"));
        assertEquals("echo: hi", echo.path("result").path("content").get(0).path("text").asText(), echo::toPrettyString);
    }

    @Test
    void anotherPrincipalsValidTokenCannotUseTheSession() throws Exception
    {
        String session = initialize("Bearer " + token("alice", PUBLIC + "/mcp/fed", "mcp:admin"));
        HttpResponse<String> foreign = post("Bearer " + token("mallory", PUBLIC + "/mcp/fed", "mcp:admin"), session,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}");
        assertEquals(404, foreign.statusCode(), foreign::body);
        assertFalse(foreign.body().contains("alice"), foreign::body);
    }

    /** The answer's response: the JSON body, or the event of an event stream that answers the request. */
    private static JsonNode message(HttpResponse<String> response) throws Exception
    {
        if (!response.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"))
            return JSON.readTree(response.body());
        for (String line : response.body().split("\n"))
        {
            if (line.startsWith("data:") && (line.contains("\"result\"") || line.contains("\"error\"")))
                return JSON.readTree(line.substring(5).strip());
        }
        throw new AssertionError("no response in " + response.body());
    }

    private static String initialize(String authorization) throws Exception
    {
        HttpResponse<String> opened = post(authorization, null, INITIALIZE);
        assertEquals(200, opened.statusCode(), opened::body);
        return opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
    }

    private static HttpResponse<String> post(String authorization, String session, String body) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(gateway.uri("/mcp/fed/mcp").toString()))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .POST(HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null)
            request.header("Authorization", authorization);
        if (session != null)
            request.header("Mcp-Session-Id", session);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
