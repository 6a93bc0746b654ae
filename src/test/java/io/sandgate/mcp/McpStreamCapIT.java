package io.sandgate.mcp;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.HoldingSseMcpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code mcp.max-streams-per-client} on the bridge from Streamable HTTP clients to a 2024-11-05
 * HTTP+SSE server, where each pending call holds a client stream: a call over the cap is refused
 * before it is relayed, so the server never runs it.
 */
class McpStreamCapIT
{
    private static final int CAP = 3;
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HoldingSseMcpServer upstream = HoldingSseMcpServer.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .set("mcp.max-streams-per-client", String.valueOf(CAP))
        .set("mcp.servers", List.of(Map.of("name", "held", "url", upstream.sseUrl().toString(), "transport", "sse"))));

    @AfterAll
    static void stop()
    {
        upstream.close();
    }

    private static HttpRequest post(String body, String session)
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri("/mcp/held/mcp")).timeout(Duration.ofSeconds(20))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null)
            request.header("Mcp-Session-Id", session);
        return request.build();
    }

    private static String toolCall(int id)
    {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"work\",\"arguments\":{}}}";
    }

    private static String initialize() throws Exception
    {
        HttpResponse<String> initialized = CLIENT.send(post("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
            + "\"capabilities\":{},\"clientInfo\":{\"name\":\"cap\",\"version\":\"1\"}}}", null), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, initialized.statusCode(), initialized.body());
        assertTrue(initialized.body().contains("serverInfo"), initialized.body());
        return initialized.headers().firstValue("Mcp-Session-Id").orElseThrow();
    }

    @Test
    void callOverTheStreamCap_is429_andNeverReachesTheServer() throws Exception
    {
        String session = initialize();
        List<CompletableFuture<HttpResponse<String>>> pending = new ArrayList<>();
        for (int i = 0; i < CAP; i++)
            pending.add(CLIENT.sendAsync(post(toolCall(10 + i), session), HttpResponse.BodyHandlers.ofString()));
        await().atMost(Duration.ofSeconds(10)).until(() -> upstream.toolCalls() == CAP);

        HttpResponse<String> refused = CLIENT.send(post(toolCall(99), session), HttpResponse.BodyHandlers.ofString());
        assertEquals(429, refused.statusCode(), refused.body());
        assertTrue(refused.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), refused.body());
        JsonNode error = JSON.readTree(refused.body());
        assertEquals(99, error.path("id").asInt(), refused.body());
        assertEquals(JsonRpcErrors.TRANSPORT_ERROR, error.path("error").path("code").asInt(), refused.body());
        assertTrue(error.path("error").path("message").asText().contains("mcp.max-streams-per-client"), refused.body());
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> upstream.toolCalls() == CAP);

        // The held calls end with their results, and give their places back.
        upstream.answerAll();
        for (int i = 0; i < CAP; i++)
        {
            HttpResponse<String> answered = pending.get(i).get(20, TimeUnit.SECONDS);
            assertEquals(200, answered.statusCode());
            assertTrue(answered.body().contains("done " + (10 + i)), answered.body());
        }
        CompletableFuture<HttpResponse<String>> next = CLIENT.sendAsync(post(toolCall(100), session), HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(10)).until(() -> upstream.toolCalls() == CAP + 1);
        upstream.answerAll();
        assertTrue(next.get(20, TimeUnit.SECONDS).body().contains("done 100"));
    }
}
