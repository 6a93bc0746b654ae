package io.sandgate.mcp;

import java.util.List;
import java.util.Map;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpClients;
import io.sandgate.testing.McpUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code mcp.servers[].tools} through the gateway, with the MCP Java SDK's client and server on
 * both transports, and a Streamable HTTP client in front of an HTTP+SSE server ({@code bridged}): a
 * hidden tool is not listed and its call never reaches the server.
 */
class McpToolPolicyIT
{
    private static final McpUpstream upstream = McpUpstream.start();
    private static final Map<String, List<String>> POLICY = Map.of("allow", List.of("e*", "add", "progress"), "deny", List.of("add"));

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .set("mcp.servers", List.of(
            Map.of("name", "streamable", "url", upstream.streamableUrl(), "transport", "streamable", "tools", POLICY),
            Map.of("name", "sse", "url", upstream.sseUrl(), "transport", "sse", "tools", POLICY),
            Map.of("name", "bridged", "url", upstream.sseUrl(), "transport", "sse", "tools", POLICY))));

    @AfterAll
    static void stop()
    {
        upstream.close();
    }

    private static McpSyncClient client(String transport)
    {
        String base = gateway.uri("/mcp/" + transport).toString();
        McpSyncClient client = transport.equals("sse") ? McpClients.sse(base, "/sse") : McpClients.streamable(base, "/mcp");
        client.initialize();
        return client;
    }

    @ParameterizedTest
    @ValueSource(strings = {"streamable", "sse", "bridged"})
    void hiddenTools_areNotListed_norCallable(String transport)
    {
        try (McpSyncClient client = client(transport))
        {
            List<String> listed = client.listTools().tools().stream().map(Tool::name).sorted().toList();
            assertEquals(List.of("echo", "progress"), listed, "allowed by a glob and not denied");

            assertEquals("echo: hi", McpClients.call(client, "echo", Map.of("text", "hi")).content().get(0).toString().replaceAll(".*text=(.*?)[,\\]].*", "$1"));
            int before = upstream.callsOf("add").size() + upstream.callsOf("ask").size();
            RuntimeException denied = assertThrows(RuntimeException.class, () -> McpClients.call(client, "add", Map.of("a", 1, "b", 2)));
            assertTrue(String.valueOf(denied.getMessage()).contains("not available"), String.valueOf(denied.getMessage()));
            assertThrows(RuntimeException.class, () -> McpClients.call(client, "ask", Map.of("question", "q")), "not allowed by any glob");
            assertEquals(before, upstream.callsOf("add").size() + upstream.callsOf("ask").size(), "refused before the server");
        }
    }
}
