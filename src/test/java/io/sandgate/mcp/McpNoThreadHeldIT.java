package io.sandgate.mcp;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.HoldingMcpServer;
import io.sandgate.testing.McpCalls;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A slow MCP server must not take the gateway's request threads: with 40 threads, 200 tool calls
 * that the upstream holds leave health checks answering at once, and every call completes when
 * the upstream finally answers.
 */
class McpNoThreadHeldIT
{
    private static final int CALLS = 200;
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final HoldingMcpServer slowUpstream = HoldingMcpServer.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("server.max-threads", "40")
        .set("log.access", "false")
        .set("mcp.servers", List.of(Map.of("name", "slow", "url", slowUpstream.url().toString(), "transport", "streamable"))));

    @AfterAll
    static void stop()
    {
        slowUpstream.close();
    }

    @Test
    void slowToolCalls_holdNoRequestThread_andAllCompleteWhenTheUpstreamAnswers() throws Exception
    {
        List<CompletableFuture<HttpResponse<String>>> calls = McpCalls.toolCalls(gateway, CALLS);
        await().atMost(Duration.ofSeconds(30)).until(() -> slowUpstream.held() == CALLS);

        // Every call is now waiting on the upstream: the gateway must still answer at once.
        for (int i = 0; i < 5; i++)
        {
            HttpResponse<String> health = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/healthz")).timeout(Duration.ofSeconds(1)).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode());
        }
        assertTrue(calls.stream().noneMatch(CompletableFuture::isDone), "a call ended before its upstream answered");

        slowUpstream.answerAll();
        McpCalls.assertAllDone(calls);
    }
}
