package io.sandgate.testing;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Tool calls to the {@link HoldingMcpServer} named {@code slow} behind a gateway, and what they must answer. */
public final class McpCalls
{
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private McpCalls()
    {
    }

    /** A Streamable HTTP tool call with JSON-RPC id {@code id}; completes when the upstream answers. */
    public static CompletableFuture<HttpResponse<String>> toolCall(Gateway gateway, int id)
    {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{}}}";
        return CLIENT.sendAsync(HttpRequest.newBuilder(gateway.internalUri("/mcp/slow/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** {@code count} tool calls with the ids 0 to count - 1, in that order, as {@link #assertAllDone} expects them. */
    public static List<CompletableFuture<HttpResponse<String>>> toolCalls(Gateway gateway, int count)
    {
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < count; i++)
            calls.add(toolCall(gateway, i));
        return calls;
    }

    /** Call {@code i} of the list answered 200 with the result {@code done i}. */
    public static void assertAllDone(List<CompletableFuture<HttpResponse<String>>> calls) throws Exception
    {
        for (int i = 0; i < calls.size(); i++)
        {
            HttpResponse<String> answer = calls.get(i).get(30, TimeUnit.SECONDS);
            assertEquals(200, answer.statusCode());
            assertTrue(answer.body().contains("\"done " + i + "\""), answer.body());
        }
    }
}
