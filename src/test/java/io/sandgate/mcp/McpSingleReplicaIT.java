package io.sandgate.mcp;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.modelcontextprotocol.client.McpSyncClient;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpClients;
import io.sandgate.testing.McpUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** With no Redis (the in-memory store) one replica serves both transports fully. */
class McpSingleReplicaIT
{
    private static McpUpstream upstream;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("mcp.session-ttl", "2s")
        .set("mcp.servers", List.of(
            Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable"),
            Map.of("name", "legacy", "url", upstream.sseUrl(), "transport", "sse"))));

    @BeforeAll
    static void start()
    {
        upstream = McpUpstream.start();
    }

    @AfterAll
    static void stop()
    {
        upstream.close();
    }

    private static void talk(McpSyncClient client, McpClients.Options options)
    {
        client.initialize();
        assertEquals(4, client.listTools().tools().size());
        for (int i = 0; i < 20; i++)
            assertEquals("echo: " + i, McpClients.text(McpClients.call(client, "echo", Map.of("text", Integer.toString(i)))));
        assertEquals("client said: forty-two", McpClients.text(McpClients.call(client, "ask", Map.of("question", "q"))));
        assertTrue(options.received().samplingQuestions.contains("q"));
    }

    @Test
    void streamableClient() throws Exception
    {
        McpClients.Options options = McpClients.options();
        try (McpSyncClient client = McpClients.streamable(gateway.uri().toString(), "/mcp/stream/mcp", options))
        {
            talk(client, options);
        }
    }

    @Test
    void sseClient() throws Exception
    {
        McpClients.Options options = McpClients.options();
        try (McpSyncClient client = McpClients.sse(gateway.uri().toString(), "/mcp/legacy/sse", options))
        {
            talk(client, options);
        }
    }

    @Test
    void idleSessions_expire() throws Exception
    {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        String init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
            + "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}";
        HttpResponse<String> initialized = http.send(HttpRequest.newBuilder(gateway.uri().resolve("/mcp/stream/mcp"))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(init)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, initialized.statusCode(), initialized.body());
        String session = initialized.headers().firstValue("Mcp-Session-Id").orElseThrow();
        assertTrue(session.matches("[0-9a-f]{32}"), "the client sees the gateway's session id, not the upstream's: " + session);

        String ping = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
        // Every request renews the session, so each check waits longer than the TTL (2 s) first.
        await().pollDelay(Duration.ofMillis(3500)).pollInterval(Duration.ofMillis(3500)).atMost(Duration.ofSeconds(15)).until(() -> http.send(HttpRequest.newBuilder(gateway.uri().resolve("/mcp/stream/mcp"))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream").header("Mcp-Session-Id", session)
            .POST(HttpRequest.BodyPublishers.ofString(ping)).build(), HttpResponse.BodyHandlers.ofString()).statusCode() == 404);
    }
}
