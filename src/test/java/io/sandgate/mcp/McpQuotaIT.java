package io.sandgate.mcp;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code mcp.servers[].quota} with auth off, where a caller is counted by its address (127.0.0.1
 * for every client here): two replicas counting in one real redis-server, on each transport; a
 * replica alone on the in-memory store; and a replica whose Redis dies. Each server below has a
 * quota of its own, so that the tests do not share counts.
 */
class McpQuotaIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SESSION_ERA = "2025-11-25";
    private static final String STATELESS = "2026-07-28";
    private static final Duration SHORT_WINDOW = Duration.ofSeconds(2);

    static RedisServerProcess redis;
    static McpUpstream upstream;
    static RunningGateway replicaA;
    static RunningGateway replicaB;

    @RegisterExtension
    static final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .set("log.access", "false")
        .set("mcp.servers", List.of(
            server("counted", upstream.streamableUrl(), "streamable", Map.of("calls", 5, "window", "1m")),
            server("stateless", upstream.streamableUrl(), "streamable", Map.of("calls", 3, "window", "1m")),
            server("legacy", upstream.sseUrl(), "sse", Map.of("calls", 3, "window", "1m")),
            server("bridged", upstream.sseUrl(), "sse", Map.of("calls", 2, "window", "1m")),
            server("per-tool", upstream.streamableUrl(), "streamable", Map.of("tools", Map.of("echo", 2), "window", "1m")),
            server("short", upstream.streamableUrl(), "streamable", Map.of("calls", 2, "window", SHORT_WINDOW.toMillis() + "ms")),
            server("listing", upstream.streamableUrl(), "streamable", Map.of("calls", 1, "window", "1m")),
            server("batched", upstream.streamableUrl(), "streamable", Map.of("calls", 3, "window", "1m")),
            server("spoofed", upstream.streamableUrl(), "streamable", Map.of("calls", 3, "window", "1m")),
            server("raced", upstream.streamableUrl(), "streamable", Map.of("calls", 4, "window", "1m")),
            server("open", upstream.streamableUrl(), "streamable", null))));

    private static Map<String, Object> server(String name, String url, String transport, Map<String, Object> quota)
    {
        return quota == null ? Map.of("name", name, "url", url, "transport", transport) : Map.of("name", name, "url", url, "transport", transport, "quota", quota);
    }

    @BeforeAll
    static void startReplicas() throws Exception
    {
        redis = RedisServerProcess.start();
        upstream = McpUpstream.start();
        replicaA = gateways.startAnother(config -> config.redisStore(redis));
        replicaB = gateways.startAnother(config -> config.redisStore(redis));
    }

    @AfterAll
    static void stopReplicas() throws Exception
    {
        Fixtures.closeInOrder(replicaA, replicaB, upstream, redis);
    }

    private static String echo(int id, String text)
    {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"" + text + "\"}}}";
    }

    private static String statelessEcho(int id, String text)
    {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"" + text + "\"},"
            + "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" + STATELESS + "\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
    }

    /** A session-era POST in the session (opened on either replica: the store shares it). */
    private static HttpResponse<String> post(Gateway replica, String server, String session, String body) throws Exception
    {
        return new RawStreamableClient(replica, server).post(session, body, "MCP-Protocol-Version", SESSION_ERA);
    }

    private static HttpResponse<String> statelessCall(Gateway replica, String server, int id, String text) throws Exception
    {
        return new RawStreamableClient(replica, server).post(null, statelessEcho(id, text),
            "MCP-Protocol-Version", STATELESS, "Mcp-Method", "tools/call", "Mcp-Name", "echo");
    }

    /** The calls of echo the upstream ran whose text starts with {@code prefix}. */
    private static long ranWith(String prefix)
    {
        return upstream.callsOf("echo").stream().filter(call -> String.valueOf(call.arguments().get("text")).startsWith(prefix)).count();
    }

    /** The stateless tool calls that reached the upstream. */
    private static long statelessReached()
    {
        return upstream.requestsTo(McpUpstream.STREAMABLE_PATH).stream().filter(seen -> STATELESS.equals(seen.header("mcp-protocol-version"))).count();
    }

    private static void assertWent(HttpResponse<String> response, String text)
    {
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().contains("echo: " + text), response.body());
    }

    /**
     * The gateway's own answer to a call over its quota, on a POST: 429 and {@code Retry-After},
     * and a JSON-RPC error whose {@code data.retryAfter} says the same.
     */
    private static void assertOverQuota(HttpResponse<String> response, int id, Duration window) throws Exception
    {
        String what = response.statusCode() + " " + response.headers().map() + " " + response.body();
        assertEquals(429, response.statusCode(), what);
        long retryAfter = Long.parseLong(response.headers().firstValue("Retry-After").orElseThrow(() -> new AssertionError("no Retry-After: " + what)));
        JsonNode answer = JSON.readTree(response.body());
        assertEquals(id, answer.path("id").asInt(), what);
        assertOverQuota(answer.path("error"), window, what);
        assertEquals(retryAfter, answer.path("error").path("data").path("retryAfter").asLong(), what);
    }

    private static void assertOverQuota(JsonNode error, Duration window, String what)
    {
        assertEquals(CallGate.OVER_QUOTA, error.path("code").asInt(), what);
        assertEquals(-32029, error.path("code").asInt(), what);
        JsonNode retryAfter = error.path("data").path("retryAfter");
        assertTrue(retryAfter.isIntegralNumber(), "retryAfter is a whole number of seconds: " + what);
        assertTrue(retryAfter.asLong() >= 1 && retryAfter.asLong() <= window.toSeconds(), "retryAfter within the window: " + what);
    }

    @Test
    void sessionEraCalls_onBothReplicas_shareOneQuota_andTheRefusedNeverReachTheUpstream() throws Exception
    {
        String session = new RawStreamableClient(replicaA, "counted").openSession();
        for (int i = 1; i <= 5; i++)
            assertWent(post(i % 2 == 0 ? replicaA : replicaB, "counted", session, echo(i, "counted-" + i)), "counted-" + i);

        assertOverQuota(post(replicaB, "counted", session, echo(6, "counted-6")), 6, Duration.ofMinutes(1));
        assertOverQuota(post(replicaA, "counted", session, echo(7, "counted-7")), 7, Duration.ofMinutes(1));
        assertEquals(5, ranWith("counted-"), "5 calls in all, not 5 per replica");

        // Another session of the same caller counts against the same quota.
        String another = new RawStreamableClient(replicaB, "counted").openSession();
        assertOverQuota(post(replicaB, "counted", another, echo(8, "counted-8")), 8, Duration.ofMinutes(1));
        assertEquals(5, ranWith("counted-"));
    }

    @Test
    void statelessCalls_onBothReplicas_shareOneQuota() throws Exception
    {
        long before = statelessReached();
        for (int i = 1; i <= 3; i++)
        {
            HttpResponse<String> response = statelessCall(i % 2 == 0 ? replicaA : replicaB, "stateless", i, "stateless-" + i);
            assertNotEquals(429, response.statusCode(), response.body());
        }
        assertEquals(before + 3, statelessReached());

        assertOverQuota(statelessCall(replicaA, "stateless", 4, "stateless-4"), 4, Duration.ofMinutes(1));
        assertOverQuota(statelessCall(replicaB, "stateless", 5, "stateless-5"), 5, Duration.ofMinutes(1));
        assertEquals(before + 3, statelessReached(), "refused before the upstream");
    }

    /** On the HTTP+SSE transport the POST is answered 202 whatever happens; the refusal travels on the stream, as an answer would. */
    @Test
    void legacySseCalls_onBothReplicas_shareOneQuota_andTheRefusalComesOnTheStream() throws Exception
    {
        RawSseClient sse = new RawSseClient("legacy");
        RawSseClient.Stream stream = sse.stream(replicaA, "", null);
        String session = sse.openSession(stream, replicaB);
        long before = upstream.calls.stream().filter(call -> call.transport().equals(McpUpstream.TRANSPORT_SSE)).count();
        for (int i = 1; i <= 3; i++)
        {
            assertEquals(202, sse.post(i % 2 == 0 ? replicaA : replicaB, session, RawSseClient.call(i)));
            JsonNode answer = nextMessage(stream);
            assertEquals(i, answer.path("id").asInt(), answer.toString());
            assertTrue(answer.path("result").toString().contains("echo: m" + i), answer.toString());
        }

        assertEquals(202, sse.post(replicaB, session, RawSseClient.call(4)));
        JsonNode refused = nextMessage(stream);
        assertEquals(4, refused.path("id").asInt(), refused.toString());
        assertOverQuota(refused.path("error"), Duration.ofMinutes(1), refused.toString());
        assertEquals(before + 3, upstream.calls.stream().filter(call -> call.transport().equals(McpUpstream.TRANSPORT_SSE)).count());
    }

    /** A Streamable HTTP client in front of an HTTP+SSE server: each call's answer is a stream of the gateway's making. */
    @Test
    void bridgedCalls_onBothReplicas_shareOneQuota() throws Exception
    {
        twoCallsThenRefused("bridged", Duration.ofMinutes(1));
        assertEquals(2, ranWith("bridged-"));
    }

    /**
     * Opens a session on a server whose quota allows two calls of echo, makes them on either
     * replica, and sees the third refused; the session. The calls' texts start with the server's name.
     */
    private static String twoCallsThenRefused(String server, Duration window) throws Exception
    {
        String session = new RawStreamableClient(replicaA, server).openSession();
        assertWent(post(replicaB, server, session, echo(1, server + "-1")), server + "-1");
        assertWent(post(replicaA, server, session, echo(2, server + "-2")), server + "-2");
        assertOverQuota(post(replicaB, server, session, echo(3, server + "-3")), 3, window);
        return session;
    }

    private static JsonNode nextMessage(RawSseClient.Stream stream) throws Exception
    {
        for (RawSseClient.Event event = stream.next(); event.name() != null; event = stream.next())
        {
            if ("message".equals(event.name()))
                return JSON.readTree(event.data());
        }
        throw new AssertionError("the stream ended");
    }

    @Test
    void aToolsLimit_limitsThatToolOnly() throws Exception
    {
        String session = twoCallsThenRefused("per-tool", Duration.ofMinutes(1));
        int added = upstream.callsOf("add").size();
        for (int i = 4; i <= 7; i++)
        {
            HttpResponse<String> response = post(i % 2 == 0 ? replicaA : replicaB, "per-tool", session,
                "{\"jsonrpc\":\"2.0\",\"id\":" + i + ",\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}}");
            assertEquals(200, response.statusCode(), response.body());
            assertTrue(response.body().contains("\"5\""), response.body());
        }
        assertEquals(added + 4, upstream.callsOf("add").size(), "a tool without a limit of its own is not limited");
        assertEquals(2, ranWith("per-tool-"));

        // The name as the server reads it is what is counted: an escape is the same name, and what
        // is no name at all never runs the tool.
        int echoes = upstream.callsOf("echo").size();
        String escaped = "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"ech\\u006f\",\"arguments\":{\"text\":\"per-tool-8\"}}}";
        assertOverQuota(post(replicaB, "per-tool", session, escaped), 8, Duration.ofMinutes(1));
        for (String name : List.of("[\"echo\"]", "{\"name\":\"echo\"}", "\"echo \"", "null"))
            post(replicaA, "per-tool", session, echo(9, "per-tool-9").replace("\"echo\"", name));
        assertEquals(echoes, upstream.callsOf("echo").size(), "no call of echo beyond its limit");
    }

    @Test
    void afterTheWindowEnds_callsGoAgain() throws Exception
    {
        String session = twoCallsThenRefused("short", SHORT_WINDOW);

        // Refused calls count against nothing: the window ends when it would have without them.
        await().atMost(SHORT_WINDOW.multipliedBy(3)).pollInterval(Duration.ofMillis(200))
            .until(() -> post(replicaB, "short", session, echo(4, "short-4")).statusCode() == 200);
        assertEquals(3, ranWith("short-"));
        assertWent(post(replicaA, "short", session, echo(5, "short-5")), "short-5");
        assertOverQuota(post(replicaB, "short", session, echo(6, "short-6")), 6, SHORT_WINDOW);
    }

    @Test
    void requestsWithoutAToolCall_neverCount() throws Exception
    {
        String session = new RawStreamableClient(replicaA, "listing").openSession();
        new RawStreamableClient(replicaB, "listing").openSession();
        for (int i = 1; i <= 4; i++)
        {
            Gateway replica = i % 2 == 0 ? replicaA : replicaB;
            HttpResponse<String> listed = post(replica, "listing", session, "{\"jsonrpc\":\"2.0\",\"id\":" + i + ",\"method\":\"tools/list\"}");
            assertEquals(200, listed.statusCode(), listed.body());
            assertTrue(listed.body().contains("echo"), listed.body());
            assertEquals(200, post(replica, "listing", session, "{\"jsonrpc\":\"2.0\",\"id\":" + (10 + i) + ",\"method\":\"ping\"}").statusCode());
        }
        assertWent(post(replicaB, "listing", session, echo(20, "listing-1")), "listing-1");
        assertOverQuota(post(replicaA, "listing", session, echo(21, "listing-2")), 21, Duration.ofMinutes(1));
    }

    /** A batch whose calls would pass the quota is refused whole, and what it would have used is still there. */
    @Test
    void batchOverTheQuota_isRefusedWhole_andTakesNothing() throws Exception
    {
        String session = new RawStreamableClient(replicaA, "batched").openSession();
        assertWent(post(replicaA, "batched", session, echo(1, "batched-1")), "batched-1");

        HttpResponse<String> batch = post(replicaB, "batched", session, "[" + echo(2, "batched-2") + "," + echo(3, "batched-3") + "," + echo(4, "batched-4") + "]");
        assertEquals(429, batch.statusCode(), batch.body());
        assertTrue(Long.parseLong(batch.headers().firstValue("Retry-After").orElseThrow()) >= 1, batch.headers().map().toString());
        assertEquals(1, ranWith("batched-"), "refused before the upstream");

        assertWent(post(replicaB, "batched", session, echo(5, "batched-5")), "batched-5");
        assertWent(post(replicaA, "batched", session, echo(6, "batched-6")), "batched-6");
        assertOverQuota(post(replicaB, "batched", session, echo(7, "batched-7")), 7, Duration.ofMinutes(1));
    }

    /**
     * A caller of an open server is its address as the gateway trusts it: headers naming another
     * address (no proxy is trusted here) or another credential do not make another caller.
     */
    @Test
    void madeUpForwardedAddressesOrCredentials_doNotMakeAFreshQuota() throws Exception
    {
        long before = statelessReached();
        for (int i = 1; i <= 5; i++)
        {
            HttpResponse<String> response = new RawStreamableClient(i % 2 == 0 ? replicaA : replicaB, "spoofed").post(null, statelessEcho(i, "spoofed-" + i),
                "MCP-Protocol-Version", STATELESS, "Mcp-Method", "tools/call", "Mcp-Name", "echo",
                "X-Forwarded-For", "10.0.0." + i, "X-Real-IP", "10.0.1." + i, "Forwarded", "for=10.0.2." + i, "Authorization", "Bearer made-up-" + i);
            if (i <= 3)
                assertNotEquals(429, response.statusCode(), response.body());
            else
                assertOverQuota(response, i, Duration.ofMinutes(1));
        }
        assertEquals(before + 3, statelessReached());
    }

    /** Replicas racing for the last calls of a window: the count is checked and taken in one step, so no more go than the quota. */
    @Test
    void concurrentCallsOnBothReplicas_neverExceedTheQuota() throws Exception
    {
        long before = statelessReached();
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        for (int i = 1; i <= 12; i++)
        {
            Gateway replica = i % 2 == 0 ? replicaA : replicaB;
            HttpRequest request = HttpRequest.newBuilder(replica.uri("/mcp/raced/mcp")).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", STATELESS).header("Mcp-Method", "tools/call").header("Mcp-Name", "echo")
                .POST(HttpRequest.BodyPublishers.ofString(statelessEcho(i, "raced-" + i))).build();
            sent.add(HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
        }
        int went = 0;
        for (CompletableFuture<HttpResponse<String>> response : sent)
        {
            if (response.get().statusCode() != 429)
                went++;
        }
        assertEquals(4, went);
        assertEquals(before + 4, statelessReached());
    }

    @Test
    void serverWithoutAQuota_isNotLimited() throws Exception
    {
        String session = new RawStreamableClient(replicaA, "open").openSession();
        for (int i = 1; i <= 8; i++)
            assertWent(post(i % 2 == 0 ? replicaA : replicaB, "open", session, echo(i, "open-" + i)), "open-" + i);
    }

    @Test
    void memoryStore_keepsTheSameLimit() throws Exception
    {
        RunningGateway alone = gateways.startAnother();
        String session = new RawStreamableClient(alone, "counted").openSession();
        long before = ranWith("memory-");
        for (int i = 1; i <= 5; i++)
            assertWent(post(alone, "counted", session, echo(i, "memory-" + i)), "memory-" + i);
        assertOverQuota(post(alone, "counted", session, echo(6, "memory-6")), 6, Duration.ofMinutes(1));
        assertEquals(before + 5, ranWith("memory-"));

        long stateless = statelessReached();
        for (int i = 1; i <= 3; i++)
            assertNotEquals(429, statelessCall(alone, "stateless", i, "memory-stateless-" + i).statusCode());
        assertOverQuota(statelessCall(alone, "stateless", 4, "memory-stateless-4"), 4, Duration.ofMinutes(1));
        assertEquals(stateless + 3, statelessReached());
    }

    /** A quota is a budget: with Redis gone, calls go uncounted, and the meter says how many. */
    @Test
    void redisDown_callsGoUncounted_andAreMetered() throws Exception
    {
        RedisServerProcess doomed = RedisServerProcess.start();
        try
        {
            RunningGateway replica = gateways.startAnother(config -> config.redisStore(doomed).set("store.redis.timeout", "300ms"));
            assertNotEquals(429, statelessCall(replica, "listing", 1, "doomed-1").statusCode());
            assertOverQuota(statelessCall(replica, "listing", 2, "doomed-2"), 2, Duration.ofMinutes(1));
            double unchecked = unchecked(replica);

            doomed.kill();
            long before = statelessReached();
            for (int i = 3; i <= 4; i++)
            {
                HttpResponse<String> response = statelessCall(replica, "listing", i, "doomed-" + i);
                assertNotEquals(429, response.statusCode(), response.body());
                assertTrue(response.statusCode() < 500, "the call went: " + response.statusCode() + " " + response.body());
            }
            assertEquals(before + 2, statelessReached(), "both reached the upstream");
            assertEquals(unchecked + 2, unchecked(replica));
        }
        finally
        {
            doomed.close();
        }
    }

    private static double unchecked(RunningGateway replica)
    {
        return replica.sandgate().metrics().get("sandgate.mcp.quota.unchecked").counter().count();
    }
}
