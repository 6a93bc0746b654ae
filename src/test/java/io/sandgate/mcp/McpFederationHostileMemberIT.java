package io.sandgate.mcp;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.HostileMcpServer;
import io.sandgate.testing.LogCapture;
import io.sandgate.testing.McpUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static io.sandgate.mcp.FederationRequests.message;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A federation member that attacks the gateway ({@link HostileMcpServer}, beside the MCP Java SDK
 * server as an honest member): what it may send the federation's client, which ids it sees, how
 * much of its answers the gateway reads, and what it can make the gateway do or log.
 */
class McpFederationHostileMemberIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = FederationRequests.HTTP;
    private static final FederationRequests requests = new FederationRequests(McpFederationHostileMemberIT::baseUrl);

    private static final HostileMcpServer hostile = HostileMcpServer.start();
    private static final HostileMcpServer pager = HostileMcpServer.start();
    private static final McpUpstream javaSdk = McpUpstream.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("mcp.max-body-size", "65536")
        .set("mcp.servers", List.of(
            Map.of("name", "hostile", "url", hostile.url()),
            Map.of("name", "pager", "url", pager.url()),
            Map.of("name", "java", "url", javaSdk.streamableUrl()),
            Map.of("name", "watched", "url", hostile.url(), "pin", "enforce")))
        .set("mcp.federations", List.of(
            Map.of("name", "pair", "servers", List.of("hostile", "java")),
            Map.of("name", "loose", "servers", List.of("hostile", "java"), "prefix", "when-needed"),
            Map.of("name", "cursors", "servers", List.of("hostile", "pager")),
            Map.of("name", "pinned", "servers", List.of("watched", "java")))));

    @AfterAll
    static void stop() throws Exception
    {
        Fixtures.closeInOrder(hostile, pager, javaSdk);
    }

    @BeforeEach
    void reset()
    {
        for (HostileMcpServer server : List.of(hostile, pager))
        {
            server.received.clear();
            server.onGet.clear();
            server.beforeCallAnswer.clear();
            server.onResume.clear();
            server.cutCallAnswers = false;
            server.listAnswer = HostileMcpServer.ListAnswer.NORMAL;
            server.cursor = null;
            server.errorText = "failed";
        }
    }

    @Test
    void onItsGetStreamAMemberCannotForgeResponsesNorTouchOtherMembersRequestsOrProgress() throws Exception
    {
        hostile.onGet.addAll(List.of(
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"forged\",\"inputSchema\":{\"type\":\"object\"}}]}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"java__1\"}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p1\",\"progress\":1}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"marker\"}}"));
        String session = initialize("pair");

        List<String> events = getStreamUntil("pair", session, "marker");

        assertTrue(events.stream().noneMatch(event -> event.contains("forged") || event.contains("\"result\"")), events::toString);
        assertTrue(events.stream().noneMatch(event -> event.contains("notifications/progress")), events::toString);
        assertTrue(events.stream().noneMatch(event -> event.contains("java__1")), events::toString);
        // Its own cancellation names its own request as the client knows it.
        assertTrue(events.stream().anyMatch(event -> event.contains("\"requestId\":\"hostile__7\"")), events::toString);
    }

    @Test
    void aListAMemberSendsOnItsGetStream_isNotTakenForItsTools_byThePins() throws Exception
    {
        // Dropped unseen by the client; before, the pins took it for the member's first listing,
        // and the tool it then really listed counted as new (hidden under enforce).
        hostile.onGet.addAll(List.of(
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"forged\",\"inputSchema\":{\"type\":\"object\"}}]}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"marker\"}}"));
        String session = initialize("pinned");
        getStreamUntil("pinned", session, "marker");

        JsonNode listed = message(post("pinned", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}"));

        List<String> names = new ArrayList<>();
        listed.path("result").path("tools").forEach(tool -> names.add(tool.path("name").asText()));
        assertTrue(names.contains("watched__tool") && !names.contains("watched__forged"), listed::toString);
    }

    @Test
    void resumingACallsAnswerItCutShort_aMemberPassesOnlyThatCallsResponseAndProgress() throws Exception
    {
        hostile.cutCallAnswers = true;
        hostile.onResume.addAll(List.of(
            "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{\"tools\":[{\"name\":\"forged\",\"inputSchema\":{\"type\":\"object\"}}]}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"another-call\",\"progress\":1}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":$TOKEN,\"progress\":2}}"));
        String session = initialize("pair");
        HttpResponse<String> cut = post("pair", session,
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"hostile__tool\",\"_meta\":{\"progressToken\":\"mine\"}}}");
        String eventId = cut.body().lines().filter(line -> line.startsWith("id:")).map(line -> line.substring(3).strip()).findFirst()
            .orElseThrow(() -> new AssertionError("no event id in " + cut.body()));
        assertTrue(eventId.startsWith("hostile__"), eventId);

        List<String> events = getStreamUntil("pair", session, "hostile answer", eventId);

        assertTrue(events.stream().noneMatch(event -> event.contains("forged") || event.contains("\"id\":99")), events::toString);
        assertTrue(events.stream().noneMatch(event -> event.contains("another-call")), events::toString);
        assertTrue(events.stream().anyMatch(event -> event.contains("\"progressToken\":\"mine\"")), events::toString);
        assertTrue(events.get(events.size() - 1).contains("\"id\":5"), events::toString);
    }

    @Test
    void inTheAnswerToACallRoutedToItAMemberPassesOnlyThatCallsResponseAndProgress() throws Exception
    {
        hostile.beforeCallAnswer.addAll(List.of(
            "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{\"tools\":[{\"name\":\"forged\",\"inputSchema\":{\"type\":\"object\"}}]}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"another-call\",\"progress\":1}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":$TOKEN,\"progress\":2}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"java__1\"}}"));
        String session = initialize("pair");

        HttpResponse<String> call = post("pair", session, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"hostile__tool\","
            + "\"arguments\":{},\"_meta\":{\"progressToken\":\"mine\"}}}");

        List<JsonNode> messages = messages(call);
        List<JsonNode> responses = messages.stream().filter(message -> !message.has("method")).toList();
        assertEquals(1, responses.size(), call::body);
        assertEquals(5, responses.get(0).path("id").asInt(), call::body);
        assertEquals("hostile answer", responses.get(0).path("result").path("content").get(0).path("text").asText(), call::body);
        List<JsonNode> progress = messages.stream().filter(message -> "notifications/progress".equals(message.path("method").asText())).toList();
        assertEquals(1, progress.size(), call::body);
        assertEquals("mine", progress.get(0).path("params").path("progressToken").asText(), call::body);
        assertFalse(call.body().contains("java__1"), call::body);
    }

    @Test
    void everyRequestTheGatewayMakesInAMemberSessionHasAnIdOfItsOwnThatNoClientCanUse() throws Exception
    {
        String session = initialize("pair");
        List<CompletableFuture<HttpResponse<String>>> lists = new ArrayList<>();
        for (String method : List.of("tools/list", "prompts/list", "resources/list", "resources/templates/list", "tools/list"))
            lists.add(postAsync("pair", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"" + method + "\"}"));
        for (CompletableFuture<HttpResponse<String>> list : lists)
            assertEquals(200, list.get(30, TimeUnit.SECONDS).statusCode());

        List<String> ids = hostile.received.stream().filter(message -> message.has("id")).map(message -> message.get("id").asText()).toList();
        assertEquals(6, ids.size(), ids::toString);
        assertEquals(ids.size(), Set.copyOf(ids).size(), ids::toString);

        HttpResponse<String> refused = post("pair", session, "{\"jsonrpc\":\"2.0\",\"id\":\"sandgate-federation:made-up\",\"method\":\"tools/call\",\"params\":{\"name\":\"hostile__tool\"}}");
        assertEquals(-32600, response(refused).path("error").path("code").asInt(), refused::body);
        assertEquals(6, hostile.received.stream().filter(message -> message.has("id")).count());
    }

    @Test
    void aMemberFloodingItsListAnswerIsCutAtTheBodyLimitAndLeftOut() throws Exception
    {
        String session = initialize("pair");
        hostile.endlessAnswerCut.set(false);
        hostile.listAnswer = HostileMcpServer.ListAnswer.FLOOD;
        double before = leftOut("pair", "hostile");

        HttpResponse<String> list = post("pair", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");

        assertEquals(200, list.statusCode(), list::body);
        assertTrue(response(list).path("result").path("tools").toString().contains("java__echo"), list::body);
        // Cut at 64 KiB, long before the member's time is up.
        await().atMost(Duration.ofSeconds(5)).until(hostile.endlessAnswerCut::get);
        assertEquals(before + 1, leftOut("pair", "hostile"));
    }

    @Test
    void aMemberTricklingItsListAnswerIsCutWhenItsTimeIsUp() throws Exception
    {
        String session = initialize("pair");
        hostile.endlessAnswerCut.set(false);
        hostile.listAnswer = HostileMcpServer.ListAnswer.TRICKLE;

        HttpResponse<String> list = post("pair", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");

        assertTrue(response(list).path("result").path("tools").toString().contains("java__echo"), list::body);
        await().atMost(Duration.ofSeconds(15)).until(hostile.endlessAnswerCut::get);
    }

    @Test
    void aMemberWhoseCursorWouldMakeTheFederationsTooLongIsLeftOutOfTheNextPagesAndTheOthersPageOn() throws Exception
    {
        String session = initialize("cursors");
        hostile.cursor = "c".repeat(3100);
        pager.cursor = "next";
        double before = leftOut("cursors", "hostile");

        JsonNode first = response(post("cursors", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}"));
        assertEquals(List.of("hostile__tool", "pager__tool"), names(first.path("result").path("tools")), first::toString);
        String cursor = first.path("result").path("nextCursor").asText();
        assertFalse(cursor.isEmpty(), first::toString);

        JsonNode second = response(post("cursors", session,
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{\"cursor\":\"" + cursor + "\"}}"));
        assertEquals(List.of("pager__tool"), names(second.path("result").path("tools")), second::toString);
        assertEquals(1, hostile.received("tools/list").size());
        assertEquals(2, pager.received("tools/list").size());
        assertEquals(before + 1, leftOut("cursors", "hostile"));
    }

    @Test
    void underAlwaysAnUnprefixedUriOrCompletionRefIsUnknownAtOnceWithoutListingAnyMember() throws Exception
    {
        String session = initialize("pair");
        hostile.received.clear();

        for (String request : List.of(
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///made-up\"}}",
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"file:///made-up\"}}",
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/resource\",\"uri\":\"file:///{x}\"},"
                + "\"argument\":{\"name\":\"x\",\"value\":\"\"}}}"))
        {
            HttpResponse<String> answered = post("pair", session, request);
            assertEquals(-32602, response(answered).path("error").path("code").asInt(), answered::body);
        }
        assertEquals(List.of(), hostile.received, hostile.received::toString);
    }

    @Test
    void underWhenNeededALookUpReadsFewPagesOfAMemberThatPagesForever() throws Exception
    {
        String session = initialize("loose");
        hostile.cursor = "more";

        HttpResponse<String> read = post("loose", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///made-up\"}}");

        assertEquals(-32602, response(read).path("error").path("code").asInt(), read::body);
        assertEquals(5, hostile.received("resources/list").size());
    }

    @Test
    void aMemberLeftOutCannotWriteLinesOfItsOwnIntoTheLog() throws Exception
    {
        String session = initialize("pair");
        hostile.listAnswer = HostileMcpServer.ListAnswer.ERROR;
        hostile.errorText = "broken\r\n12:00:00.000 ERROR io.sandgate.Sandgate - forged line\u2028" + "x".repeat(5000);

        try (LogCapture log = new LogCapture(FederationMembers.class.getName()))
        {
            HttpResponse<String> list = post("pair", session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
            assertEquals(200, list.statusCode(), list::body);

            List<String> lines = log.lines().stream().filter(line -> line.contains("hostile left out")).toList();
            assertEquals(1, lines.size(), lines::toString);
            assertTrue(lines.get(0).contains("broken??12:00:00.000 ERROR io.sandgate.Sandgate - forged line?"), lines::toString);
            assertTrue(lines.get(0).length() < 1000, () -> "a line of " + lines.get(0).length());
        }
    }

    /** Reads the federated session's GET stream until an event holds {@code marker}; the events' data. */
    private static List<String> getStreamUntil(String federation, String session, String marker) throws Exception
    {
        return getStreamUntil(federation, session, marker, null);
    }

    /** @param lastEventId the Last-Event-ID to resume after, or null */
    private static List<String> getStreamUntil(String federation, String session, String marker, String lastEventId) throws Exception
    {
        HttpRequest.Builder get = HttpRequest.newBuilder(gateway.uri("/mcp/" + federation + "/mcp")).GET()
            .header("Accept", "text/event-stream").header("MCP-Protocol-Version", "2025-11-25").header("Mcp-Session-Id", session);
        if (lastEventId != null)
            get.header("Last-Event-ID", lastEventId);
        HttpRequest request = get.build();
        HttpResponse<InputStream> response = HTTP.send(request, HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, response.statusCode());
        List<String> events = new ArrayList<>();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8)))
        {
            assertTimeoutPreemptively(Duration.ofSeconds(10), () ->
            {
                for (String line; (line = lines.readLine()) != null; )
                {
                    if (!line.startsWith("data:"))
                        continue;
                    events.add(line.substring(5).strip());
                    if (line.contains(marker))
                        return;
                }
            }, () -> "no " + marker + " after " + events);
        }
        return events;
    }

    private static String baseUrl()
    {
        return gateway.uri().toString();
    }

    private static String initialize(String federation) throws Exception
    {
        return requests.initialize(federation);
    }

    private static HttpResponse<String> post(String federation, String session, String body) throws Exception
    {
        return requests.post(federation, session, body);
    }

    private static CompletableFuture<HttpResponse<String>> postAsync(String federation, String session, String body)
    {
        return requests.postAsync(federation, session, body);
    }

    /** The messages of an answer: its JSON body, or its event stream's events. */
    private static List<JsonNode> messages(HttpResponse<String> response) throws Exception
    {
        List<JsonNode> messages = new ArrayList<>();
        if (!response.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"))
        {
            messages.add(JSON.readTree(response.body()));
            return messages;
        }
        for (String line : response.body().split("\n"))
        {
            if (line.startsWith("data:") && !line.substring(5).isBlank())
                messages.add(JSON.readTree(line.substring(5).strip()));
        }
        return messages;
    }

    private static List<String> names(JsonNode items)
    {
        List<String> names = new ArrayList<>();
        items.forEach(item -> names.add(item.path("name").asText()));
        return names;
    }

    /** How often the gateway left the member out of an answer of the federation, by its metrics. */
    private static double leftOut(String federation, String member) throws Exception
    {
        String metrics = HTTP.send(HttpRequest.newBuilder(gateway.uri("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        double sum = 0;
        for (String line : metrics.split("\n"))
        {
            if (line.startsWith("sandgate_mcp_federation_members_left_out_total{") && line.contains("federation=\"" + federation + "\"")
                && line.contains("member=\"" + member + "\""))
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
        return sum;
    }

    /** The answer's response (its result or error). */
    private static JsonNode response(HttpResponse<String> response) throws Exception
    {
        return messages(response).stream().filter(message -> !message.has("method")).findFirst()
            .orElseThrow(() -> new AssertionError("no response in " + response.body()));
    }
}
