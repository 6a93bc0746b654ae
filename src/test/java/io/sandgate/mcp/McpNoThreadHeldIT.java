package io.sandgate.mcp;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import io.sandgate.testing.GatewayExtension;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
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

    private static Server slowUpstream;
    private static final Queue<Held> held = new ConcurrentLinkedQueue<>();
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** A request the upstream has read and not yet answered. */
    private record Held(String id, Response response, Callback callback)
    {
    }

    @BeforeAll
    static void start() throws Exception
    {
        slowUpstream = new Server();
        ServerConnector connector = new ServerConnector(slowUpstream);
        connector.setHost("127.0.0.1");
        slowUpstream.addConnector(connector);
        // Answers nothing until released; holds no thread while it waits.
        slowUpstream.setHandler(new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                Content.Source.asStringAsync(request, StandardCharsets.UTF_8).thenAccept(body ->
                {
                    String id = body.replaceAll("(?s).*\"id\"\\s*:\\s*(\\d+).*", "$1");
                    held.add(new Held(id, response, callback));
                });
                return true;
            }
        });
        slowUpstream.start();
    }

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("server.max-threads", "40")
        .set("log.access", "false")
        .set("mcp.servers", List.of(Map.of("name", "slow", "url", slowUpstream.getURI().resolve("/mcp").toString(), "transport", "streamable"))));

    @AfterAll
    static void stop() throws Exception
    {
        slowUpstream.stop();
    }

    @Test
    void slowToolCalls_holdNoRequestThread_andAllCompleteWhenTheUpstreamAnswers() throws Exception
    {
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < CALLS; i++)
        {
            String body = "{\"jsonrpc\":\"2.0\",\"id\":" + i + ",\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{}}}";
            calls.add(CLIENT.sendAsync(HttpRequest.newBuilder(gateway.uri("/mcp/slow/mcp"))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString()));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> held.size() == CALLS);

        // Every call is now waiting on the upstream: the gateway must still answer at once.
        for (int i = 0; i < 5; i++)
        {
            HttpResponse<String> health = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/healthz")).timeout(Duration.ofSeconds(1)).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode());
        }
        assertTrue(calls.stream().noneMatch(CompletableFuture::isDone), "a call ended before its upstream answered");

        for (Held call : held)
        {
            call.response().setStatus(200);
            call.response().getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            Content.Sink.write(call.response(), true,
                "{\"jsonrpc\":\"2.0\",\"id\":" + call.id() + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done " + call.id() + "\"}]}}",
                call.callback());
        }
        for (int i = 0; i < CALLS; i++)
        {
            HttpResponse<String> answer = calls.get(i).get(30, TimeUnit.SECONDS);
            assertEquals(200, answer.statusCode());
            assertTrue(answer.body().contains("\"done " + i + "\""), answer.body());
        }
    }
}
