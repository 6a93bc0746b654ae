package io.sandgate.mcp;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The member sessions a federation holds for 2026-07-28 callers of a session-era member count
 * against {@code mcp.max-sessions-per-client} like sessions a client opens: a client that makes up
 * a new credential for every request cannot have the gateway open member sessions without end.
 */
class McpFederationSessionCapIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final McpUpstream javaSdk = McpUpstream.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("mcp.max-sessions-per-client", "2")
        .set("mcp.servers", List.of(Map.of("name", "java", "url", javaSdk.streamableUrl())))
        .set("mcp.federations", List.of(Map.of("name", "fed", "servers", List.of("java")))));

    @AfterAll
    static void stop() throws Exception
    {
        Fixtures.closeInOrder(javaSdk);
    }

    @Test
    void madeUpCredentialsOpenNoMoreMemberSessionsThanTheClientMayHold() throws Exception
    {
        int opened = javaSdk.streamableSessions.size();
        for (int i = 0; i < 2; i++)
            assertEquals(200, call("Bearer made-up-" + i).statusCode());
        HttpResponse<String> third = call("Bearer made-up-2");
        assertEquals(429, third.statusCode(), third::body);
        assertTrue(third.body().contains("mcp.max-sessions-per-client"), third::body);
        assertEquals(opened + 2, javaSdk.streamableSessions.size());

        // The same credential again reuses what is held for it.
        assertEquals(200, call("Bearer made-up-0").statusCode());
        assertEquals(opened + 2, javaSdk.streamableSessions.size());
    }

    private static HttpResponse<String> call(String authorization) throws Exception
    {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"java__echo\",\"arguments\":{\"text\":\"x\"},\"_meta\":{"
            + "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
        HttpRequest request = HttpRequest.newBuilder(URI.create(gateway.uri("/mcp/fed/mcp").toString()))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", "tools/call").header("Mcp-Name", "java__echo")
            .header("Authorization", authorization)
            .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
