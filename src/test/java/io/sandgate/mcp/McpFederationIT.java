package io.sandgate.mcp;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.PagedMcpServer;
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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Federations of real MCP servers (the TypeScript reference server, the MCP Java SDK server, and
 * two paging servers on the TypeScript SDK) behind two gateway replicas sharing a real Redis, every
 * request sent to the other replica than the last: the TypeScript SDK 2.x client
 * ({@code src/test/mcp-ts/federation-client.mjs}) and raw JSON-RPC requests.
 */
class McpFederationIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = FederationRequests.HTTP;
    private static final String INITIALIZE = FederationRequests.INITIALIZE;

    private static final ReferenceMcpServer reference = ReferenceMcpServer.start();
    private static final McpUpstream javaSdk = McpUpstream.start();
    private static final PagedMcpServer alpha = PagedMcpServer.start("alpha", 7, 3);
    private static final PagedMcpServer beta = PagedMcpServer.start("beta", 5, 2);
    private static final PagedMcpServer gamma = PagedMcpServer.start("gamma", 4, 10, true);
    private static RoundRobinReplicas replicas;
    private static final FederationRequests requests = new FederationRequests(() -> replicas.baseUrl());

    private static void federations(GatewayConfig config)
    {
        config.set("mcp.servers", List.of(
            Map.of("name", "reference", "url", reference.url()),
            Map.of("name", "java", "url", javaSdk.streamableUrl()),
            Map.of("name", "alpha", "url", alpha.url()),
            Map.of("name", "beta", "url", beta.url()),
            Map.of("name", "guarded", "url", alpha.url(), "tools", Map.of("deny", List.of("tool_*"))),
            // Nothing listens on port 1: a member that is down.
            Map.of("name", "gone", "url", "http://127.0.0.1:1/mcp"),
            Map.of("name", "gamma", "url", gamma.url()),
            // The reference server, told to the gateway as one that speaks only 2026-07-28.
            Map.of("name", "modern", "url", reference.url(), "transport", "stateless")));
        config.set("mcp.federations", List.of(
            Map.of("name", "all", "servers", List.of("reference", "java")),
            Map.of("name", "all-loose", "servers", List.of("reference", "java"), "prefix", "when-needed"),
            Map.of("name", "paged", "servers", List.of("alpha", "beta")),
            Map.of("name", "with-down", "servers", List.of("alpha", "gone")),
            Map.of("name", "policy", "servers", List.of("guarded", "beta")),
            Map.of("name", "one", "servers", List.of("java"), "prefix", "when-needed"),
            Map.of("name", "mixed", "servers", List.of("modern", "java")),
            Map.of("name", "modern-pair", "servers", List.of("reference", "modern")),
            Map.of("name", "three", "servers", List.of("reference", "java", "modern")),
            Map.of("name", "loose", "servers", List.of("gamma", "alpha"))));
    }

    @RegisterExtension
    static final GatewayExtension gateways = GatewayExtension.manual(McpFederationIT::federations);

    @BeforeAll
    static void startReplicas() throws Exception
    {
        replicas = RoundRobinReplicas.start(gateways);
    }

    @AfterAll
    static void stopAll() throws Exception
    {
        Fixtures.closeInOrder(replicas, reference, javaSdk, alpha, beta, gamma);
    }

    @BeforeEach
    void clearRouted()
    {
        replicas.clearRouted();
    }

    private static String endpoint(String federation)
    {
        return replicas.baseUrl() + "/mcp/" + federation + "/mcp";
    }

    @Test
    void typeScriptClient_listsEveryMembersToolsPrefixedAndCallsOneOnEach() throws Exception
    {
        JsonNode result = runClient(endpoint("all"), "[{\"name\":\"reference__test_simple_text\"},{\"name\":\"java__echo\",\"arguments\":{\"text\":\"hi\"}}]");

        List<String> tools = strings(result.path("tools"));
        assertTrue(tools.contains("reference__test_simple_text") && tools.contains("reference__test_tool_with_progress"), tools::toString);
        assertEquals(McpUpstream.TOOL_NAMES.stream().map(name -> "java__" + name).sorted().toList(),
            tools.stream().filter(name -> name.startsWith("java__")).sorted().toList());
        assertTrue(tools.stream().allMatch(name -> name.startsWith("reference__") || name.startsWith("java__")), tools::toString);
        assertEquals("This is a simple text response for testing.", result.path("calls").get(0).path("text").asText(), result::toPrettyString);
        assertEquals("echo: hi", result.path("calls").get(1).path("text").asText(), result::toPrettyString);
        assertEquals("all", result.path("serverName").asText());
        assertTrue(result.path("capabilities").has("tools") && result.path("capabilities").has("prompts") && result.path("capabilities").has("resources"),
            result::toPrettyString);
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    @Test
    void typeScriptClient_usesThreeMembersOfTwoErasWithProgressSamplingAndElicitation() throws Exception
    {
        JsonNode result = runClient(endpoint("three"), "["
            + "{\"name\":\"reference__test_sampling\",\"arguments\":{\"prompt\":\"what?\"}},"
            + "{\"name\":\"reference__test_elicitation\",\"arguments\":{\"message\":\"who are you?\"}},"
            + "{\"name\":\"java__ask\",\"arguments\":{\"question\":\"why?\"}},"
            + "{\"name\":\"java__progress\",\"arguments\":{\"steps\":2}},"
            + "{\"name\":\"modern__test_tool_with_progress\"}]");

        List<String> tools = strings(result.path("tools"));
        for (String member : List.of("reference__", "java__", "modern__"))
            assertTrue(tools.stream().anyMatch(name -> name.startsWith(member)), tools::toString);
        JsonNode calls = result.path("calls");
        assertEquals("LLM response: forty-two", calls.get(0).path("text").asText(), result::toPrettyString);
        assertTrue(calls.get(1).path("text").asText().contains("sandgate@example.com"), result::toPrettyString);
        assertEquals("client said: forty-two", calls.get(2).path("text").asText(), result::toPrettyString);
        assertEquals(2, calls.get(3).path("progress").size(), result::toPrettyString);
        assertEquals(List.of("0", "50", "100"), strings(calls.get(4).path("progress")), result::toPrettyString);
        assertEquals(List.of("who are you?"), strings(result.path("elicitation")), result::toPrettyString);
        assertEquals(2, result.path("sampling").size(), result::toPrettyString);
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    @Test
    void typeScriptClient_pagesThroughMembersWhoseListsTakeSeveralPages() throws Exception
    {
        JsonNode result = runClient(endpoint("paged"), "[{\"name\":\"alpha__tool_02\"},{\"name\":\"beta__echo\"}]");

        List<String> expected = Stream.concat(pagedTools("alpha", 7), pagedTools("beta", 5)).toList();
        List<String> tools = strings(result.path("tools"));
        assertEquals(expected.stream().sorted().toList(), tools.stream().sorted().toList());
        assertEquals("alpha:tool_02", result.path("calls").get(0).path("text").asText(), result::toPrettyString);
        assertEquals("beta:echo", result.path("calls").get(1).path("text").asText(), result::toPrettyString);
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    @Test
    void pagesComposeTheMembersCursors() throws Exception
    {
        List<List<String>> pages = toolPages("paged", initialize("paged"));
        // alpha: 3 pages of 3, beta: 3 pages of 2, asked together: 3 pages, each member's in order.
        assertEquals(List.of(
            List.of("alpha__ask", "alpha__confirm", "alpha__progress", "beta__ask", "beta__confirm"),
            List.of("alpha__echo", "alpha__tool_00", "alpha__tool_01", "beta__progress", "beta__echo"),
            List.of("alpha__tool_02", "beta__tool_00")), pages);
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    private static Stream<String> pagedTools(String member, int count)
    {
        return Stream.concat(Stream.of("ask", "confirm", "progress", "echo"), IntStream.range(0, count - 4).mapToObj(i -> String.format("tool_%02d", i)))
            .map(tool -> member + "__" + tool);
    }

    @Test
    void typeScriptClient_answersSamplingAndElicitationOfMembersAndGetsProgress() throws Exception
    {
        JsonNode result = runClient(endpoint("paged"),
            "[{\"name\":\"alpha__ask\"},{\"name\":\"beta__confirm\"},{\"name\":\"beta__ask\"},{\"name\":\"alpha__progress\"}]");

        JsonNode calls = result.path("calls");
        assertEquals("alpha:ask:forty-two", calls.get(0).path("text").asText(), result::toPrettyString);
        assertEquals("beta:confirm:accept:{\"ok\":true}", calls.get(1).path("text").asText(), result::toPrettyString);
        assertEquals("beta:ask:forty-two", calls.get(2).path("text").asText(), result::toPrettyString);
        assertEquals(List.of("1", "2", "3"), strings(calls.get(3).path("progress")), result::toPrettyString);
        assertEquals(List.of("question from alpha", "question from beta"), strings(result.path("sampling")), result::toPrettyString);
        assertEquals(List.of("confirm for beta"), strings(result.path("elicitation")), result::toPrettyString);
    }

    @Test
    void typeScriptClient_getsWhatMembersSendOnTheirOwnStreams() throws Exception
    {
        JsonNode result = runClient(endpoint("paged"),
            "[{\"name\":\"alpha__ask_aside\"},{\"name\":\"beta__broadcast\",\"arguments\":{\"count\":2}},{\"name\":\"alpha__broadcast\",\"arguments\":{\"count\":1}}]",
            "3");

        assertEquals("alpha:ask_aside:forty-two", result.path("calls").get(0).path("text").asText(), result::toPrettyString);
        assertEquals(List.of("aside from alpha"), strings(result.path("sampling")), result::toPrettyString);
        assertEquals(List.of("alpha note 1", "beta note 1", "beta note 2"), strings(result.path("logs")).stream().sorted().toList(), result::toPrettyString);
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    @Test
    void aCutStreamResumesOnTheOtherReplicaWithNothingLostOrDoubled() throws Exception
    {
        String session = initialize("paged");
        List<String> first = new ArrayList<>();
        String lastSeen;
        try (SseEvents stream = SseEvents.open(endpoint("paged"), session, null))
        {
            // Members' GET streams are opened with the client's: wait until alpha's carries messages.
            await().atMost(Duration.ofSeconds(10)).until(() ->
            {
                post("paged", session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"alpha__broadcast\",\"arguments\":{\"count\":0}}}");
                return stream.poll(200) != null;
            });
            while (stream.poll(300) != null)
            {
                // Earlier tries' notifications.
            }
            post("paged", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"alpha__broadcast\",\"arguments\":{\"count\":3}}}");
            SseEvents.Event event = stream.next();
            first.add(event.data());
            lastSeen = event.id();
        }
        assertTrue(first.get(0).contains("alpha note 1"), first::toString);
        // Whatever else the member sent is in the federated log; the client read none of it. The front
        // sends each request to the other replica than the last: the resumption goes to the one that
        // did not hold the stream.
        List<String> routed = replicas.routedList();
        String streamPort = port(routed.stream().filter(r -> r.startsWith("GET ")).findFirst().orElseThrow());
        if (!port(routed.get(routed.size() - 1)).equals(streamPort))
            post("paged", session, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
        try (SseEvents resumed = SseEvents.open(endpoint("paged"), session, lastSeen))
        {
            List<String> rest = new ArrayList<>();
            for (int i = 0; i < 3; i++)
                rest.add(resumed.next().data());
            assertTrue(rest.get(0).contains("alpha note 2") && rest.get(1).contains("alpha note 3") && rest.get(2).contains("notifications/tools/list_changed"),
                rest::toString);
            assertEquals(null, resumed.poll(500), "nothing is delivered twice");
        }
        List<String> streams = new ArrayList<>();
        for (String request : replicas.routedList())
        {
            if (request.startsWith("GET "))
                streams.add(port(request));
        }
        assertEquals(2, streams.size(), replicas::routed);
        assertFalse(streams.get(0).equals(streams.get(1)), "the stream resumed on the other replica: " + streams);
    }

    @Test
    void typeScriptClient_reachesA2026OnlyMemberThroughTheBridge() throws Exception
    {
        JsonNode result = runClient(endpoint("mixed"),
            "[{\"name\":\"modern__test_tool_with_progress\"},{\"name\":\"java__add\",\"arguments\":{\"a\":2,\"b\":3}}]");

        List<String> tools = strings(result.path("tools"));
        assertTrue(tools.contains("modern__test_simple_text") && tools.contains("java__echo"), tools::toString);
        JsonNode calls = result.path("calls");
        assertEquals("Progress tool finished", calls.get(0).path("text").asText(), result::toPrettyString);
        assertEquals(List.of("0", "50", "100"), strings(calls.get(0).path("progress")), result::toPrettyString);
        assertEquals("5", calls.get(1).path("text").asText(), result::toPrettyString);
        // The reference server saw the bridge's stateless requests only.
        List<JsonNode> seen = new ArrayList<>();
        reference.observed().forEach(seen::add);
        assertTrue(seen.stream().anyMatch(r -> "tools/call".equals(r.path("mcpMethod").asText()) && "2026-07-28".equals(r.path("protocolVersion").asText())),
            seen::toString);
    }

    @Test
    void typeScriptClientOf2026_speaksStatelessToTheFederationAndItsMembers() throws Exception
    {
        int seenBefore = reference.observed().size();
        JsonNode result = runClient(endpoint("modern-pair"),
            "[{\"name\":\"modern__test_tool_with_progress\"},{\"name\":\"reference__test_simple_text\"}]", "0", "auto");

        assertEquals("2026-07-28", result.path("protocolVersion").asText(), result::toPrettyString);
        assertEquals("modern-pair", result.path("serverName").asText(), result::toPrettyString);
        List<String> tools = strings(result.path("tools"));
        assertTrue(tools.contains("modern__test_simple_text") && tools.contains("reference__test_simple_text"), tools::toString);
        assertTrue(tools.stream().allMatch(name -> name.startsWith("modern__") || name.startsWith("reference__")), tools::toString);
        JsonNode calls = result.path("calls");
        assertEquals(List.of("0", "50", "100"), strings(calls.get(0).path("progress")), result::toPrettyString);
        assertEquals("This is a simple text response for testing.", calls.get(1).path("text").asText(), result::toPrettyString);
        // Every request the members saw was a 2026-07-28 one, without a session, naming the member's own tool.
        List<JsonNode> seen = new ArrayList<>();
        reference.observed().forEach(seen::add);
        List<JsonNode> ours = seen.subList(seenBefore, seen.size());
        assertTrue(ours.stream().allMatch(r -> "2026-07-28".equals(r.path("protocolVersion").asText()) && !r.path("session").asBoolean()), ours::toString);
        assertTrue(ours.stream().anyMatch(r -> "tools/call".equals(r.path("mcpMethod").asText())), ours::toString);
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    @Test
    void typeScriptClientOf2026_reachesSessionEraMembersThroughMemberSessionsHeldForIt() throws Exception
    {
        int javaCalls = javaSdk.toolCalls.get();
        JsonNode result = runClient(endpoint("three"), "[{\"name\":\"java__echo\",\"arguments\":{\"text\":\"modern\"}},"
            + "{\"name\":\"java__progress\",\"arguments\":{\"steps\":2}},{\"name\":\"modern__test_simple_text\"},{\"name\":\"reference__test_simple_text\"}]",
            "0", "auto");

        assertEquals("2026-07-28", result.path("protocolVersion").asText(), result::toPrettyString);
        List<String> tools = strings(result.path("tools"));
        for (String member : List.of("reference__", "java__", "modern__"))
            assertTrue(tools.stream().anyMatch(name -> name.startsWith(member)), tools::toString);
        JsonNode calls = result.path("calls");
        assertEquals("echo: modern", calls.get(0).path("text").asText(), result::toPrettyString);
        assertEquals(2, calls.get(1).path("progress").size(), result::toPrettyString);
        assertEquals("This is a simple text response for testing.", calls.get(2).path("text").asText(), result::toPrettyString);
        assertEquals("This is a simple text response for testing.", calls.get(3).path("text").asText(), result::toPrettyString);
        assertEquals(javaCalls + 2, javaSdk.toolCalls.get());
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    @Test
    void a2026CallCarriesTheToolsOwnHeadersToItsMember() throws Exception
    {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"modern__test_simple_text\",\"_meta\":{"
            + "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
        HttpRequest request = HttpRequest.newBuilder(URI.create(endpoint("modern-pair")))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", "tools/call").header("Mcp-Name", "modern__test_simple_text")
            .header("Mcp-Param-Region", "eu")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> answered = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answered.statusCode(), answered::body);
        JsonNode seen = reference.observed();
        JsonNode last = seen.get(seen.size() - 1);
        assertEquals("tools/call", last.path("mcpMethod").asText(), seen::toString);
        assertEquals("[\"mcp-param-region\"]", last.path("paramHeaders").toString(), seen::toString);
    }

    @Test
    void a2026RequestNamingAnotherToolInItsHeaderThanInItsBodyIsRefused() throws Exception
    {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"reference__test_simple_text\",\"_meta\":{"
            + "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
        HttpRequest request = HttpRequest.newBuilder(URI.create(endpoint("modern-pair")))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", "tools/call").header("Mcp-Name", "modern__test_error_handling")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> refused = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        assertEquals(400, refused.statusCode(), refused::body);
        assertEquals(-32020, JSON.readTree(refused.body()).path("error").path("code").asInt(), refused::body);
    }

    @Test
    void promptsResourcesTemplatesAndCompletionsAreListedPrefixedAndRoutedBack() throws Exception
    {
        String session = initialize("all");

        JsonNode prompts = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/list\",\"params\":{}}"));
        assertTrue(names(prompts.path("result").path("prompts")).contains("reference__test_simple_prompt"), prompts::toPrettyString);
        JsonNode prompt = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{\"name\":\"reference__test_simple_prompt\"}}"));
        assertEquals("This is a simple prompt for testing.", prompt.path("result").path("messages").get(0).path("content").path("text").asText(), prompt::toPrettyString);

        JsonNode resources = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/list\",\"params\":{}}"));
        List<String> uris = new ArrayList<>();
        resources.path("result").path("resources").forEach(r -> uris.add(r.path("uri").asText()));
        assertTrue(uris.contains("reference__test://static-text"), resources::toPrettyString);
        assertTrue(names(resources.path("result").path("resources")).contains("reference__static-text"), resources::toPrettyString);
        JsonNode read = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":\"reference__test://static-text\"}}"));
        assertEquals("This is the content of the static text resource.", read.path("result").path("contents").get(0).path("text").asText(), read::toPrettyString);

        JsonNode templates = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/templates/list\",\"params\":{}}"));
        assertEquals("reference__test://template/{id}/data", templates.path("result").path("resourceTemplates").get(0).path("uriTemplate").asText(), templates::toPrettyString);
        JsonNode templated = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{\"uri\":\"reference__test://template/5/data\"}}"));
        assertTrue(templated.path("result").path("contents").get(0).path("text").asText().contains("Data for ID: 5"), templated::toPrettyString);

        JsonNode completed = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\","
            + "\"name\":\"reference__test_prompt_with_arguments\"},\"argument\":{\"name\":\"arg1\",\"value\":\"par\"}}}"));
        assertEquals("[\"paris\",\"park\",\"party\"]", completed.path("result").path("completion").path("values").toString(), completed::toPrettyString);

        // Under always, a URI without a prefix is none the federation gave: no member is asked.
        JsonNode refused = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/read\",\"params\":{\"uri\":\"test://static-text\"}}"));
        assertEquals(-32602, refused.path("error").path("code").asInt(), refused::toPrettyString);
        // Under when-needed, a resource link a member gave (its own URI) is routed to the member that lists it.
        JsonNode unprefixed = message(post("all-loose", initialize("all-loose"),
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/read\",\"params\":{\"uri\":\"test://static-text\"}}"));
        assertEquals("This is the content of the static text resource.", unprefixed.path("result").path("contents").get(0).path("text").asText(), unprefixed::toPrettyString);
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    @Test
    void sessionsOfAFederationAndOfItsMembersDoNotOpenEachOther() throws Exception
    {
        String federated = initialize("paged");
        HttpRequest onMember = HttpRequest.newBuilder(URI.create(replicas.baseUrl() + "/mcp/alpha/mcp"))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream").header("Mcp-Session-Id", federated)
            .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}")).build();
        assertEquals(404, HTTP.send(onMember, HttpResponse.BodyHandlers.ofString()).statusCode());

        HttpRequest memberInitialize = HttpRequest.newBuilder(URI.create(replicas.baseUrl() + "/mcp/alpha/mcp"))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(INITIALIZE)).build();
        String single = HTTP.send(memberInitialize, HttpResponse.BodyHandlers.ofString()).headers().firstValue("Mcp-Session-Id").orElseThrow();
        assertEquals(404, post("paged", single, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{}}").statusCode());
    }

    @Test
    void malformedRequestsAreRefusedBeforeAnyMemberHearsOfThem() throws Exception
    {
        String session = initialize("all");
        int callsBefore = javaSdk.toolCalls.get();

        JsonNode notAString = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":[\"java__echo\"]}}"));
        assertEquals(-32602, notAString.path("error").path("code").asInt(), notAString::toPrettyString);
        HttpResponse<String> batch = post("all", session, "[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"java__echo\"}}]");
        assertEquals(400, batch.statusCode(), batch::body);
        JsonNode unknown = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"sandgate/anything\",\"params\":{}}"));
        assertEquals(-32601, unknown.path("error").path("code").asInt(), unknown::toPrettyString);
        // An answer to a request no member made goes nowhere.
        assertEquals(202, post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":\"java__{}\",\"result\":{}}").statusCode());
        assertEquals(202, post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":\"elsewhere__1\",\"result\":{}}").statusCode());
        assertEquals(callsBefore, javaSdk.toolCalls.get());
    }

    @Test
    void aMemberDown_listsAnswerWithTheOthersAndItsCallsNameIt() throws Exception
    {
        String session = initialize("with-down");

        JsonNode list = message(post("with-down", session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}"));
        List<String> tools = names(list.path("result").path("tools"));
        assertEquals(List.of("alpha__ask", "alpha__confirm", "alpha__progress"), tools, list::toPrettyString);
        assertTrue(list.path("result").has("nextCursor"), list::toPrettyString);
        assertTrue(leftOut("with-down", "gone") >= 1, "counted in sandgate_mcp_federation_members_left_out_total");

        HttpResponse<String> call = post("with-down", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"gone__echo\"}}");
        assertEquals(200, call.statusCode(), call::body);
        JsonNode error = message(call);
        assertEquals(3, error.path("id").asInt(), call::body);
        assertEquals(-32000, error.path("error").path("code").asInt(), call::body);
        assertTrue(error.path("error").path("message").asText().contains("MCP server gone (member of federation with-down) is unavailable"), call::body);
        assertFalse(call.body().contains("127.0.0.1:1"), call::body);

        // The session lives on: the other member still answers.
        JsonNode echo = message(post("with-down", session, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"alpha__echo\"}}"));
        assertEquals("alpha:echo", echo.path("result").path("content").get(0).path("text").asText(), echo::toPrettyString);
        assertTrue(replicas.bothServed(), replicas::routed);
    }

    @Test
    void anUnknownPrefixAMalformedCursorAndAnUnknownSessionAreClearErrorsThatChangeNothing() throws Exception
    {
        String session = initialize("all");
        int callsBefore = javaSdk.toolCalls.get();

        JsonNode unknown = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"nobody__echo\",\"arguments\":{\"text\":\"x\"}}}"));
        assertEquals(-32602, unknown.path("error").path("code").asInt(), unknown::toPrettyString);
        assertTrue(unknown.path("error").path("message").asText().contains("no member of federation all has nobody__echo"), unknown::toPrettyString);
        // Unprefixed, under always: unknown at once, no member asked for its list.
        int seenBefore = reference.observed().size();
        JsonNode unprefixed = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}"));
        assertEquals(-32602, unprefixed.path("error").path("code").asInt(), unprefixed::toPrettyString);
        assertEquals(seenBefore, reference.observed().size());

        for (String cursor : List.of("\"not base64 !\"", "\"eyJ2IjoxLCJtIjp7Im90aGVyIjpudWxsfX0\"", "42"))
        {
            JsonNode bad = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\",\"params\":{\"cursor\":" + cursor + "}}"));
            assertEquals(-32602, bad.path("error").path("code").asInt(), bad::toPrettyString);
            assertTrue(bad.path("error").path("message").asText().contains("cursor"), bad::toPrettyString);
        }

        HttpResponse<String> ended = post("all", "0123456789abcdef0123456789abcdef", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\",\"params\":{}}");
        assertEquals(404, ended.statusCode(), ended::body);
        assertEquals(-32001, message(ended).path("error").path("code").asInt(), ended::body);

        // Nothing reached the member, and the session still serves.
        assertEquals(callsBefore, javaSdk.toolCalls.get());
        JsonNode echo = message(post("all", session, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"java__echo\",\"arguments\":{\"text\":\"still\"}}}"));
        assertEquals("echo: still", echo.path("result").path("content").get(0).path("text").asText(), echo::toPrettyString);
    }

    @Test
    void anotherClientsCredentialCannotUseTheSession() throws Exception
    {
        String session = initialize("paged", "Authorization", "Bearer mine");

        HttpResponse<String> foreign = post("paged", session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"alpha__echo\"}}",
            "Authorization", "Bearer someone-else");
        assertEquals(404, foreign.statusCode(), foreign::body);

        HttpResponse<String> own = post("paged", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"alpha__echo\"}}",
            "Authorization", "Bearer mine");
        assertEquals("alpha:echo", message(own).path("result").path("content").get(0).path("text").asText(), own::body);
    }

    @Test
    void aMembersToolPolicyStillHidesAndRefusesItsTools() throws Exception
    {
        String session = initialize("policy");
        List<String> tools = toolPages("policy", session).stream().flatMap(List::stream).toList();
        assertEquals(List.of("guarded__ask", "guarded__confirm", "guarded__echo", "guarded__progress"),
            tools.stream().filter(name -> name.startsWith("guarded__")).sorted().toList());

        JsonNode refused = message(post("policy", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"guarded__tool_00\"}}"));
        assertEquals(-32602, refused.path("error").path("code").asInt(), refused::toPrettyString);
        assertTrue(refused.path("error").path("message").asText().contains("not available on MCP server guarded"), refused::toPrettyString);
    }

    @Test
    void aFederationOfOneMemberWhenNeededIsThatMember() throws Exception
    {
        HttpResponse<String> opened = post("one", null, INITIALIZE);
        JsonNode initialized = message(opened);
        assertEquals("sandgate-mcp-upstream", initialized.path("result").path("serverInfo").path("name").asText(), opened::body);
        HttpRequest direct = HttpRequest.newBuilder(URI.create(javaSdk.streamableUrl())).header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream").POST(HttpRequest.BodyPublishers.ofString(INITIALIZE)).build();
        JsonNode member = message(HTTP.send(direct, HttpResponse.BodyHandlers.ofString()));
        assertEquals(member.path("result").path("protocolVersion"), initialized.path("result").path("protocolVersion"), opened::body);
        assertEquals(member.path("result").path("capabilities"), initialized.path("result").path("capabilities"), opened::body);
        String session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();

        JsonNode list = message(post("one", session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}"));
        assertEquals(McpUpstream.TOOL_NAMES.stream().sorted().toList(), names(list.path("result").path("tools")).stream().sorted().toList(), list::toPrettyString);
        assertFalse(list.path("result").has("nextCursor"), list::toPrettyString);
        JsonNode echo = message(post("one", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"one\"}}}"));
        assertEquals("echo: one", echo.path("result").path("content").get(0).path("text").asText(), echo::toPrettyString);
    }

    @Test
    void aMemberThatForgotItsSessionGetsANewOneAndTheCallGoesThrough() throws Exception
    {
        String session = initialize("paged");
        JsonNode forgot = message(post("paged", session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"beta__forget_sessions\"}}"));
        assertEquals("beta:forget_sessions", forgot.path("result").path("content").get(0).path("text").asText(), forgot::toPrettyString);

        // beta answers 404 for the member session: the gateway opens another and sends the call again.
        JsonNode echo = message(post("paged", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"beta__echo\"}}"));
        assertEquals("beta:echo", echo.path("result").path("content").get(0).path("text").asText(), echo::toPrettyString);
        // The federated session lived on through it, alpha's member session too.
        List<String> tools = toolPages("paged", session).stream().flatMap(List::stream).toList();
        assertTrue(tools.contains("alpha__echo") && tools.contains("beta__echo"), tools::toString);
    }

    @Test
    void aMemberThatMakesNoSessionsIsServedWithout() throws Exception
    {
        JsonNode result = runClient(endpoint("loose"), "[{\"name\":\"gamma__echo\"},{\"name\":\"alpha__echo\"}]");

        List<String> tools = strings(result.path("tools"));
        assertTrue(tools.containsAll(List.of("gamma__ask", "gamma__confirm", "gamma__progress", "gamma__echo", "alpha__echo")), tools::toString);
        assertEquals("gamma:echo", result.path("calls").get(0).path("text").asText(), result::toPrettyString);
        assertEquals("alpha:echo", result.path("calls").get(1).path("text").asText(), result::toPrettyString);
    }

    @Test
    void deleteEndsTheFederatedSessionOnEveryReplica() throws Exception
    {
        String session = initialize("paged");
        HttpRequest delete = HttpRequest.newBuilder(URI.create(endpoint("paged"))).header("Mcp-Session-Id", session).DELETE().build();
        assertEquals(204, HTTP.send(delete, HttpResponse.BodyHandlers.ofString()).statusCode());
        for (int i = 0; i < 2; i++)
            assertEquals(404, post("paged", session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}").statusCode());
    }

    // --- helpers

    /** The names of each page of a federation's tools, following its cursors (at most 10 pages). */
    private static List<List<String>> toolPages(String federation, String session) throws Exception
    {
        List<List<String>> pages = new ArrayList<>();
        String cursor = null;
        do
        {
            String params = cursor == null ? "{}" : "{\"cursor\":\"" + cursor + "\"}";
            JsonNode page = message(post(federation, session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":" + params + "}"));
            pages.add(names(page.path("result").path("tools")));
            cursor = page.path("result").path("nextCursor").asText(null);
        }
        while (cursor != null && pages.size() < 10);
        return pages;
    }

    /** How often both replicas left the member out of an answer of the federation, by their metrics. */
    private static double leftOut(String federation, String member) throws Exception
    {
        double sum = 0;
        // The front alternates: two scrapes read both replicas.
        for (int i = 0; i < 2; i++)
        {
            String metrics = HTTP.send(HttpRequest.newBuilder(URI.create(replicas.baseUrl() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            for (String line : metrics.split("\n"))
            {
                if (line.startsWith("sandgate_mcp_federation_members_left_out_total{") && line.contains("federation=\"" + federation + "\"")
                    && line.contains("member=\"" + member + "\""))
                    sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** The replica's port a routed request went to. */
    private static String port(String routed)
    {
        return routed.substring(routed.lastIndexOf(' ') + 1);
    }

    private static List<String> names(JsonNode items)
    {
        List<String> names = new ArrayList<>();
        items.forEach(item -> names.add(item.path("name").asText()));
        return names;
    }

    private static String initialize(String federation, String... headers) throws Exception
    {
        return requests.initialize(federation, headers);
    }

    private static HttpResponse<String> post(String federation, String session, String body, String... headers) throws Exception
    {
        return requests.post(federation, session, body, headers);
    }

    private static JsonNode runClient(String url, String calls, String logs, String... mode) throws Exception
    {
        return FederationRequests.runClient(url, calls, logs, mode);
    }

    private static JsonNode runClient(String url, String calls) throws Exception
    {
        return FederationRequests.runClient(url, calls, "0");
    }
}
