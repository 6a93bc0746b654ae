package io.sandgate.mcp;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.HoldingSseMcpServer;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.ReferenceMcpServer;
import io.sandgate.testing.RoundRobinReplicas;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.sandgate.mcp.FederationRequests.message;
import static io.sandgate.mcp.FederationRequests.strings;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A federation member that speaks only the 2024-11-05 HTTP+SSE transport (the MCP Java SDK's
 * servlet SSE server), beside the TypeScript reference server over Streamable HTTP, behind two
 * gateway replicas sharing a real Redis, every request sent to the other replica than the last: the
 * member keeps its transport, and the federation's clients (the TypeScript SDK 2.x client, 2025
 * and 2026-07-28, and raw JSON-RPC) use it as any other member.
 */
class McpFederationSseMemberIT
{

    private static final ReferenceMcpServer reference = ReferenceMcpServer.start();
    private static final McpUpstream legacy = McpUpstream.start();
    private static final HoldingSseMcpServer holding = HoldingSseMcpServer.start();
    private static RoundRobinReplicas replicas;
    private static final FederationRequests requests = new FederationRequests(() -> replicas.baseUrl());

    private static void federation(GatewayConfig config)
    {
        config.set("mcp.servers", List.of(
            Map.of("name", "reference", "url", reference.url()),
            Map.of("name", "old", "url", legacy.sseUrl(), "transport", "sse"),
            Map.of("name", "held", "url", holding.sseUrl().toString(), "transport", "sse")));
        config.set("mcp.federations", List.of(
            Map.of("name", "mixed", "servers", List.of("reference", "old")),
            Map.of("name", "holding", "servers", List.of("held"))));
    }

    @RegisterExtension
    static final GatewayExtension gateways = GatewayExtension.manual(McpFederationSseMemberIT::federation);

    @BeforeAll
    static void startReplicas() throws Exception
    {
        replicas = RoundRobinReplicas.start(gateways);
    }

    @AfterAll
    static void stopAll() throws Exception
    {
        Fixtures.closeInOrder(replicas, reference, legacy, holding);
    }

    @BeforeEach
    void clearRouted()
    {
        replicas.clearRouted();
    }

    private static String endpoint()
    {
        return requests.endpoint("mixed");
    }

    @Test
    void typeScriptClient_listsAndCallsTheSseMember_withProgressAndSampling() throws Exception
    {
        int sseCalls = legacy.toolCalls.get();
        JsonNode result = runClient("[{\"name\":\"old__echo\",\"arguments\":{\"text\":\"hi\"}},"
            + "{\"name\":\"old__progress\",\"arguments\":{\"steps\":2}},"
            + "{\"name\":\"old__ask\",\"arguments\":{\"question\":\"why?\"}},"
            + "{\"name\":\"reference__test_simple_text\"}]");

        List<String> tools = strings(result.path("tools"));
        assertEquals(McpUpstream.TOOL_NAMES.stream().map(name -> "old__" + name).sorted().toList(),
            tools.stream().filter(name -> name.startsWith("old__")).sorted().toList());
        assertTrue(tools.contains("reference__test_simple_text"), tools::toString);
        JsonNode calls = result.path("calls");
        assertEquals("echo: hi", calls.get(0).path("text").asText(), result::toPrettyString);
        assertEquals(2, calls.get(1).path("progress").size(), result::toPrettyString);
        assertEquals("client said: forty-two", calls.get(2).path("text").asText(), result::toPrettyString);
        assertEquals(List.of("why?"), strings(result.path("sampling")), result::toPrettyString);
        assertEquals("This is a simple text response for testing.", calls.get(3).path("text").asText(), result::toPrettyString);
        // The member heard the calls over its own transport, not a Streamable one it does not have.
        assertEquals(3, legacy.toolCalls.get() - sseCalls);
        assertTrue(legacy.calls.stream().anyMatch(call -> call.transport().equals(McpUpstream.TRANSPORT_SSE) && call.tool().equals("ask")), legacy.calls::toString);
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    @Test
    void typeScriptClientOf2026_callsTheSseMemberThroughAMemberSessionHeldForIt() throws Exception
    {
        JsonNode result = runClient("[{\"name\":\"old__add\",\"arguments\":{\"a\":2,\"b\":3}},{\"name\":\"old__progress\",\"arguments\":{\"steps\":3}}]", "auto");

        assertEquals("2026-07-28", result.path("protocolVersion").asText(), result::toPrettyString);
        assertTrue(strings(result.path("tools")).contains("old__add"), result::toPrettyString);
        JsonNode calls = result.path("calls");
        assertEquals("5", calls.get(0).path("text").asText().replaceAll("\\.0$", "").replaceAll("^add: ", ""), result::toPrettyString);
        assertEquals(3, calls.get(1).path("progress").size(), result::toPrettyString);
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    @Test
    void theSseMembersListChange_reachesTheFederatedGetStream() throws Exception
    {
        String session = initialize();
        // The member session is opened by the first request that needs it.
        JsonNode listed = message(post(session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"));
        assertTrue(listed.path("result").path("tools").toString().contains("old__echo"), listed::toString);
        try (SseEvents stream = SseEvents.open(endpoint(), session, null))
        {
            legacy.redefine("echo", "echo", "Echoes its text, now louder.", Map.of("text", "string"));
            SseEvents.Event event = stream.next();
            assertTrue(event.data().contains("notifications/tools/list_changed"), event::toString);
            assertTrue(event.id() != null, "a federated log event, resumable: " + event);
        }
        finally
        {
            legacy.redefine("echo", "echo", "Echoes its text.", Map.of("text", "string"));
        }
    }

    @Test
    void aCallTheSseMemberFails_answersAJsonRpcError_andTheSessionGoesOn() throws Exception
    {
        String session = initialize();
        JsonNode unknown = message(post(session, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"old__nothing\",\"arguments\":{}}}"));
        assertEquals(7, unknown.path("id").asInt(), unknown::toString);
        assertTrue(unknown.has("error") || unknown.path("result").path("isError").asBoolean(), unknown::toString);
        JsonNode echoed = message(post(session, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"old__echo\",\"arguments\":{\"text\":\"still\"}}}"));
        assertEquals(8, echoed.path("id").asInt(), echoed::toString);
        assertEquals("echo: still", echoed.path("result").path("content").get(0).path("text").asText(), echoed::toString);
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    @Test
    void aMemberThatForgotTheSession_getsANewOne_andTheCallGoesThrough() throws Exception
    {
        String session = initialize("holding");
        await().atMost(Duration.ofSeconds(10)).until(() -> holding.sessions() >= 1);
        // As a member restarted behind a proxy: it answers the old session's messages 404 (or 400).
        holding.forgetSessions();
        int calls = holding.toolCalls();
        CompletableFuture<HttpResponse<String>> call = requests.postAsync("holding", session,
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"held__work\",\"arguments\":{}}}");
        await().atMost(Duration.ofSeconds(10)).until(() -> holding.held() == 1);
        assertEquals(1, holding.sessions(), "the call went in a new member session");
        holding.answerAll();
        JsonNode answer = message(call.get(10, TimeUnit.SECONDS));
        assertEquals(5, answer.path("id").asInt(), answer::toString);
        assertEquals("done 5", answer.path("result").path("content").get(0).path("text").asText(), answer::toString);
        assertEquals(calls + 1, holding.toolCalls(), "the member got the call once");
    }

    @Test
    void twoCallersOfOneOwner_sharingTheHeldMemberSession_withTheSameRequestId_eachGetTheirOwnAnswer() throws Exception
    {
        // Two 2026-07-28 clients behind one address: the gateway holds one member session for both.
        int held = holding.held();
        CompletableFuture<HttpResponse<String>> first = call2026("A");
        CompletableFuture<HttpResponse<String>> second = call2026("B");
        await().atMost(Duration.ofSeconds(10)).until(() -> holding.held() == held + 2);
        holding.answerAll();
        JsonNode a = message(first.get(10, TimeUnit.SECONDS));
        JsonNode b = message(second.get(10, TimeUnit.SECONDS));
        assertEquals(1, a.path("id").asInt(), a::toString);
        assertEquals(1, b.path("id").asInt(), b::toString);
        assertTrue(a.path("result").path("content").get(0).path("text").asText().endsWith(" for A"), a::toString);
        assertTrue(b.path("result").path("content").get(0).path("text").asText().endsWith(" for B"), b::toString);
    }

    /** A 2026-07-28 {@code tools/call} with id 1 and a progress token of 1, as any two clients might send. */
    private static CompletableFuture<HttpResponse<String>> call2026(String tag)
    {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"held__work\",\"arguments\":{\"tag\":\"" + tag + "\"},"
            + "\"_meta\":{\"progressToken\":1,\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
        HttpRequest request = HttpRequest.newBuilder(URI.create(requests.endpoint("holding")))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", "tools/call").header("Mcp-Name", "held__work")
            .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return FederationRequests.HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    private static String initialize() throws Exception
    {
        return requests.initialize("mixed");
    }

    private static String initialize(String federation) throws Exception
    {
        return requests.initialize(federation);
    }

    private static HttpResponse<String> post(String session, String body) throws Exception
    {
        return requests.post("mixed", session, body);
    }

    private static JsonNode runClient(String calls, String... mode) throws Exception
    {
        return FederationRequests.runClient(endpoint(), calls, "0", mode);
    }
}
