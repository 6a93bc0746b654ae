package io.sandgate.mcp;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RedisServerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * {@code mcp.max-sessions-per-client} on the Redis store, where a client's sessions are counted in a
 * set of their ids beside the session records, with a short {@code mcp.session-ttl} so that time
 * can pass it.
 */
class McpSessionLimitRedisIT
{
    private static final Duration TTL = Duration.ofSeconds(2);
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final RedisServerProcess redis = RedisServerProcess.start();
    private static final McpUpstream upstream = McpUpstream.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .redisStore(redis)
        .set("mcp.session-ttl", TTL.toMillis() + "ms")
        .set("mcp.max-sessions-per-client", "2")
        .set("mcp.servers", List.of(Map.of("name", "tools", "url", upstream.streamableUrl(), "transport", "streamable"))));

    @AfterAll
    static void stop()
    {
        upstream.close();
        redis.close();
    }

    private static HttpResponse<String> post(String session, String body) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri("/mcp/tools/mcp")).timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25").POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null)
            request.header("Mcp-Session-Id", session);
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> initializing() throws Exception
    {
        return post(null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
            + "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"limit\",\"version\":\"1\"}}}");
    }

    private static String initialize() throws Exception
    {
        HttpResponse<String> response = initializing();
        assertEquals(200, response.statusCode(), response.body());
        String session = response.headers().firstValue("Mcp-Session-Id").orElse(null);
        assertNotNull(session, "initialize gives a session");
        assertEquals(202, post(session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}").statusCode());
        return session;
    }

    private static int ping(String session) throws Exception
    {
        return post(session, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}").statusCode();
    }

    private static void end(String session) throws Exception
    {
        CLIENT.send(HttpRequest.newBuilder(gateway.uri("/mcp/tools/mcp")).header("Mcp-Session-Id", session).DELETE().build(),
            HttpResponse.BodyHandlers.discarding());
    }

    /**
     * A client at its limit that keeps its sessions alive by using them must stay at its limit once
     * the TTL they were created with has passed: were the count to expire while the sessions live,
     * the client could open as many again, and again after every TTL.
     */
    @Test
    void sessionsKeptInUsePastTheirTtl_stillCountAgainstTheLimit() throws Exception
    {
        List<String> sessions = new ArrayList<>(List.of(initialize(), initialize()));
        try
        {
            // The passage of time is what is under test: both sessions in use for longer than the TTL.
            await().during(TTL.plusSeconds(1)).atMost(TTL.multipliedBy(3)).until(() -> ping(sessions.get(0)) == 200 && ping(sessions.get(1)) == 200);

            HttpResponse<String> third = initializing();
            if (third.statusCode() == 200)
                third.headers().firstValue("Mcp-Session-Id").ifPresent(sessions::add);
            assertEquals(429, third.statusCode(), "a third session while two are in use: " + third.body());
        }
        finally
        {
            for (String session : sessions)
                end(session);
        }
    }
}
