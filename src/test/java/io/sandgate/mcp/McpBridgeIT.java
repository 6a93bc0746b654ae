package io.sandgate.mcp;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.InitializeResult;
import io.modelcontextprotocol.spec.McpSchema.ReadResourceRequest;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.modelcontextprotocol.spec.McpSchema.TextResourceContents;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpClients;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.ReferenceMcpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Version bridging, with the MCP Java SDK's client (session era only: Streamable HTTP 2025 and
 * HTTP+SSE 2024-11-05): in front of a server configured as 2026-07-28 only, which then sees
 * nothing but stateless 2026-07-28 requests; and as a Streamable HTTP client in front of a
 * 2024-11-05 HTTP+SSE server.
 */
class McpBridgeIT
{
    private static final ReferenceMcpServer upstream = ReferenceMcpServer.start();
    private static final McpUpstream sseOnly = McpUpstream.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .set("mcp.servers", List.of(Map.of("name", "modern", "url", upstream.url(), "transport", "stateless",
                "tools", Map.of("deny", List.of("test_error_handling"))),
            Map.of("name", "old", "url", sseOnly.sseUrl(), "transport", "sse"))));

    @AfterAll
    static void stop()
    {
        upstream.close();
        sseOnly.close();
    }

    /** The gateway stores what a bridged client says of itself: a client cannot make it store megabytes, and the refusal says why. */
    @Test
    void hugeClientInfo_isRefused_andLeavesNoSession() throws Exception
    {
        String initialize = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
            + "\"capabilities\":{\"pad\":\"" + "x".repeat(StatelessBridge.MAX_CLIENT) + "\"},\"clientInfo\":{\"name\":\"big\",\"version\":\"1\"}}}";
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri("/mcp/modern/mcp"))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(initialize)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(400, response.statusCode(), response.body());
        assertTrue(response.body().contains("-32602") && response.body().contains("at most " + StatelessBridge.MAX_CLIENT), response.body());
        assertTrue(response.headers().firstValue("Mcp-Session-Id").isEmpty());
        // Bridged sessions get their revision once initialize is answered: one without is a reservation left behind.
        assertTrue(gateway.sandgate().store().sessions().list(10_000).stream()
            .noneMatch(session -> session.server().equals("modern") && session.protocolVersion().isEmpty()), "the reserved session was given back");
    }

    /**
     * A Streamable HTTP client in front of a 2024-11-05 HTTP+SSE server: calls, their progress,
     * and the server's request to the client in the middle of one (sampling) all travel.
     */
    @Test
    void streamableClient_worksAgainstAnSseOnlyServer()
    {
        McpClients.Options options = McpClients.options();
        try (McpSyncClient client = McpClients.streamable(gateway.uri("/mcp/old").toString(), "/mcp", options))
        {
            client.initialize();
            assertEquals(McpUpstream.TOOL_NAMES.stream().sorted().toList(), client.listTools().tools().stream().map(Tool::name).sorted().toList());
            assertEquals("echo: hi", McpClients.text(McpClients.call(client, "echo", Map.of("text", "hi"))));
            assertEquals("done", McpClients.text(McpClients.callWithProgress(client, "progress", Map.of("steps", 3), "p-1")));
            // The client hands notifications to its handlers apart from the response.
            await().untilAsserted(() -> assertEquals(3, options.received().progress.size(), "each step's progress, on the call's stream"));
            assertEquals("client said: " + McpClients.SAMPLING_ANSWER, McpClients.text(McpClients.call(client, "ask", Map.of("question", "q?"))));
            assertEquals(List.of("q?"), options.received().samplingQuestions);
        }
        assertTrue(sseOnly.requestsTo(McpUpstream.SSE_PATH).size() > 0, "the server was reached on its SSE transport");
    }

    /**
     * The bridge rewrites each call for the server: the policy must have judged the very call it
     * rewrites. A body with more than one value, or a tool named by anything but a string, never
     * gets that far under the deny-only policy of this server.
     */
    @Test
    void bridgedCall_thatTheServerCouldReadOtherwise_isRefusedBeforeIt() throws Exception
    {
        RawStreamableClient client = new RawStreamableClient(gateway, "modern");
        String session = client.openSession();
        int seenBefore = upstream.observed().size();
        String allowed = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"test_simple_text\"}}";
        String hidden = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"test_error_handling\"}}";

        HttpResponse<String> trailing = client.post(session, allowed + hidden, "MCP-Protocol-Version", "2025-11-25");
        assertEquals(400, trailing.statusCode(), trailing.body());
        assertTrue(trailing.body().contains("-32700"), trailing.body());
        HttpResponse<String> notAString = client.post(session, hidden.replace("\"test_error_handling\"", "[\"test_error_handling\"]"), "MCP-Protocol-Version", "2025-11-25");
        assertEquals(200, notAString.statusCode(), notAString.body());
        assertTrue(notAString.body().contains("-32602") && notAString.body().contains("\"id\":4"), notAString.body());
        assertEquals(seenBefore, upstream.observed().size(), "nothing reached the server");
    }

    @ParameterizedTest
    @ValueSource(strings = {"streamable", "sse"})
    void sessionEraClient_worksAgainstAStatelessOnlyServer(String transport) throws Exception
    {
        int seenBefore = upstream.observed().size();
        String base = gateway.uri("/mcp/modern").toString();
        try (McpSyncClient client = transport.equals("sse") ? McpClients.sse(base, "/sse") : McpClients.streamable(base, "/mcp"))
        {
            InitializeResult initialized = client.initialize();
            assertTrue(initialized.capabilities().tools() != null, "capabilities come from server/discover: " + initialized);
            assertFalse(initialized.serverInfo().name().isBlank());

            List<String> tools = client.listTools().tools().stream().map(Tool::name).toList();
            assertTrue(tools.contains("test_simple_text"), tools.toString());
            assertFalse(tools.contains("test_error_handling"), "the server's tool policy applies through the bridge too");

            CallToolResult result = McpClients.call(client, "test_simple_text", Map.of());
            assertFalse(Boolean.TRUE.equals(result.isError()), result.toString());
            assertFalse(((TextContent)result.content().get(0)).text().isBlank());

            String text = ((TextResourceContents)client.readResource(new ReadResourceRequest("test://static-text")).contents().get(0)).text();
            assertFalse(text.isBlank());
            client.ping();
        }

        JsonNode observed = upstream.observed();
        List<JsonNode> seen = new ArrayList<>();
        for (int i = seenBefore; i < observed.size(); i++)
            seen.add(observed.get(i));
        List<String> methods = seen.stream().map(request -> request.path("mcpMethod").asText()).toList();
        assertTrue(methods.containsAll(List.of("server/discover", "tools/list", "tools/call", "resources/read")), methods.toString());
        assertFalse(methods.contains("ping"), "the session's other end is the gateway: it answers ping");
        for (JsonNode request : seen)
        {
            assertEquals("POST", request.path("method").asText(), request.toString());
            assertEquals("2026-07-28", request.path("protocolVersion").asText(), request.toString());
            assertFalse(request.path("session").asBoolean(), "no session reaches a stateless server: " + request);
        }
    }
}
