package io.sandgate.store;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Redis that hangs (stopped with SIGSTOP: connections open, nothing answered) while MCP clients
 * keep calling must not take the gateway's threads: with 40 of them and Redis's timeout far away,
 * half of them wait for Redis and the calls beyond fail at once with 503, ingress on a cached route
 * and health checks answer meanwhile, and the calls that waited complete once Redis answers.
 */
@EachIngressFrontEnd
class HungRedisIT
{
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final int CALLS = 60;
    private static final String SANDBOX = "4242";
    private static final RedisServerProcess redis = RedisServerProcess.start();
    private static final McpUpstream upstream = McpUpstream.start();
    private static final SandboxBackend sandbox = SandboxBackend.start("cached");

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .redisStore(redis)
        // Long enough that a call waiting for the stopped Redis is still waiting when the test looks.
        .set("store.redis.timeout", "30s")
        .set("server.max-threads", "40")
        .set("log.access", "false")
        .set("ingress.static-routes", SANDBOX + "=" + sandbox.hostPort())
        .set("mcp.servers", List.of(Map.of("name", "tools", "url", upstream.streamableUrl(), "transport", "streamable"))));

    @AfterAll
    static void stop()
    {
        redis.thaw();
        upstream.close();
        sandbox.close();
        redis.close();
    }

    @Test
    void callsWaitingForAHungRedis_leaveThreadsForWhatNeedsNoRedis_andCompleteWhenItAnswers() throws Exception
    {
        String session = initialize();
        assertEquals(200, get("/vnc/" + SANDBOX + "/").statusCode(), "the route is cached before Redis hangs");

        redis.freeze();
        try
        {
            whileRedisHangs(session);
        }
        finally
        {
            redis.thaw();
        }
    }

    private static void whileRedisHangs(String session) throws Exception
    {
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < CALLS; i++)
            calls.add(ping(session, i));

        // Twenty may wait (half of 40); the other forty are refused at once, not after the timeout.
        await().atMost(Duration.ofSeconds(15)).until(() -> calls.stream().filter(CompletableFuture::isDone).count() == CALLS - 20);
        List<CompletableFuture<HttpResponse<String>>> waiting = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> call : calls)
        {
            if (!call.isDone())
            {
                waiting.add(call);
                continue;
            }
            HttpResponse<String> refused = call.join();
            assertEquals(503, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("store is unavailable"), refused.body());
        }

        // Nothing that needs no Redis waits for it.
        for (int i = 0; i < 5; i++)
        {
            assertEquals(200, get("/vnc/" + SANDBOX + "/").statusCode());
            assertEquals(200, get("/healthz").statusCode());
        }
        assertTrue(waiting.stream().noneMatch(CompletableFuture::isDone), "a call ended while Redis was stopped");
        String metrics = get("/metrics").body();
        assertTrue(metrics.lines().anyMatch(line -> line.startsWith("sandgate_store_redis_waits_refused_total") && line.endsWith(" 40.0")), metrics);

        redis.thaw();
        for (CompletableFuture<HttpResponse<String>> call : waiting)
        {
            HttpResponse<String> answer = call.get(30, TimeUnit.SECONDS);
            assertEquals(200, answer.statusCode(), answer.body());
            assertTrue(answer.body().contains("\"result\""), answer.body());
        }
        assertEquals(200, ping(session, CALLS).get(30, TimeUnit.SECONDS).statusCode(), "the session still works");
    }

    private static HttpResponse<String> get(String path) throws Exception
    {
        return CLIENT.send(HttpRequest.newBuilder(gateway.uri(path)).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static CompletableFuture<HttpResponse<String>> ping(String session, int id)
    {
        return CLIENT.sendAsync(post(session, "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"ping\"}"), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest post(String session, String body)
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri("/mcp/tools/mcp"))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25").POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null)
            request.header("Mcp-Session-Id", session);
        return request.build();
    }

    private static String initialize() throws Exception
    {
        HttpResponse<String> response = CLIENT.send(post(null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
            + "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"hung-redis\",\"version\":\"1\"}}}"),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        String session = response.headers().firstValue("Mcp-Session-Id").orElse(null);
        assertNotNull(session, "initialize gives a session");
        HttpResponse<String> initialized = CLIENT.send(post(session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(202, initialized.statusCode(), initialized.body());
        return session;
    }
}
