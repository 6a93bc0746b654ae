package io.sandgate.mcp.federation;

import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.sandgate.config.McpFederation;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FederatedNamesTest
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final FederatedNames ALWAYS = new FederatedNames(new McpFederation("all", List.of("files", "files-2", "search"), McpFederation.Prefix.ALWAYS, "__"));
    private static final FederatedNames WHEN_NEEDED = new FederatedNames(new McpFederation("all", List.of("files", "search"), McpFederation.Prefix.WHEN_NEEDED, "__"));

    @Test
    void aPrefixedNameRoutesToItsMemberWithThePrefixRemoved()
    {
        assertEquals(new FederatedNames.Routed("files", "read"), ALWAYS.route("files__read").orElseThrow());
        assertEquals(new FederatedNames.Routed("files-2", "read__x"), ALWAYS.route("files-2__read__x").orElseThrow());
        assertEquals(new FederatedNames.Routed("files", "file:///a.txt"), ALWAYS.route("files__file:///a.txt").orElseThrow());
        assertTrue(ALWAYS.route("nobody__read").isEmpty());
        assertTrue(ALWAYS.route("files_read").isEmpty());
        assertTrue(ALWAYS.route(null).isEmpty());
    }

    @Test
    void whenNeededPrefixesOnlyClashesAndNamesThatLookPrefixed()
    {
        Set<String> clashing = WHEN_NEEDED.clashing(Map.of("files", List.of("read", "search__x", "only"), "search", List.of("read", "query")));
        assertEquals(Set.of("read", "search__x"), clashing);
        assertEquals("only", WHEN_NEEDED.outward("files", "only", false));
        assertEquals("files__read", WHEN_NEEDED.outward("files", "read", true));
        assertEquals(Set.of(), ALWAYS.clashing(Map.of("files", List.of("read"), "search", List.of("read"))));
        assertEquals("search__query", ALWAYS.outward("search", "query", false));
    }

    @Test
    void membersRequestIdsNeverCollideAndFindTheirWayBack()
    {
        String one = ALWAYS.requestId("files", IntNode.valueOf(0));
        String other = ALWAYS.requestId("search", IntNode.valueOf(0));
        assertFalse(one.equals(other));
        assertEquals(new FederatedNames.MemberId("files", IntNode.valueOf(0)), ALWAYS.memberRequest(TextNode.valueOf(one)).orElseThrow());
        String text = ALWAYS.requestId("search", TextNode.valueOf("abc"));
        assertEquals(new FederatedNames.MemberId("search", TextNode.valueOf("abc")), ALWAYS.memberRequest(TextNode.valueOf(text)).orElseThrow());
        // Ids the federation never gave go nowhere.
        assertTrue(ALWAYS.memberRequest(IntNode.valueOf(0)).isEmpty());
        assertTrue(ALWAYS.memberRequest(TextNode.valueOf("files__{\"a\":1}")).isEmpty());
        assertTrue(ALWAYS.memberRequest(TextNode.valueOf("files__not json")).isEmpty());
    }

    @Test
    void cursorsRoundTripAndRefuseWhatTheFederationDidNotGive()
    {
        Map<String, String> state = new java.util.LinkedHashMap<>();
        state.put("files", "abc");
        state.put("search", null);
        String cursor = FederatedCursor.encode(state);
        assertEquals(state, FederatedCursor.decode(cursor, List.of("files", "search")));
        assertEquals(null, FederatedCursor.encode(Map.of()));
        for (String bad : List.of("", "!!", "e30", cursor + "x", "x".repeat(5000)))
            assertThrows(IllegalArgumentException.class, () -> FederatedCursor.decode(bad, List.of("files", "search")), bad);
        assertThrows(IllegalArgumentException.class, () -> FederatedCursor.decode(cursor, List.of("files")));
    }

    @Test
    void listsMergeInMemberOrderWithTheCursorsOfMembersThatHaveMore() throws Exception
    {
        Map<String, JsonNode> pages = new java.util.LinkedHashMap<>();
        pages.put("files", JSON.readTree("{\"resources\":[{\"uri\":\"file:///a\",\"name\":\"a\"}],\"nextCursor\":\"2\"}"));
        pages.put("search", JSON.readTree("{\"resources\":[{\"uri\":\"s://b\",\"name\":\"b\"},{\"name\":\"no uri\"}]}"));
        JsonNode merged = ListMerge.merge(ALWAYS, ListKind.RESOURCES, pages);
        assertEquals("[{\"uri\":\"files__file:///a\",\"name\":\"files__a\"},{\"uri\":\"search__s://b\",\"name\":\"search__b\"}]", merged.get("resources").toString());
        assertEquals(Map.of("files", "2"), FederatedCursor.decode(merged.get("nextCursor").asText(), List.of("files", "search")));
    }

    @Test
    void aMemberWhoseCursorWouldMakeTheFederationsTooLongIsToldOfAndLeftOutOfTheCursor() throws Exception
    {
        Map<String, JsonNode> pages = new java.util.LinkedHashMap<>();
        pages.put("files", JSON.readTree("{\"tools\":[],\"nextCursor\":\"" + "c".repeat(3100) + "\"}"));
        pages.put("search", JSON.readTree("{\"tools\":[],\"nextCursor\":\"2\"}"));
        List<String> tooLong = new java.util.ArrayList<>();
        JsonNode merged = ListMerge.merge(ALWAYS, ListKind.TOOLS, pages, tooLong::add);
        assertEquals(List.of("files"), tooLong);
        String cursor = merged.get("nextCursor").asText();
        assertTrue(cursor.length() <= FederatedCursor.MAX_LENGTH);
        assertEquals(Map.of("search", "2"), FederatedCursor.decode(cursor, List.of("files", "search")));
    }

    @Test
    void capabilitiesAreTheUnion() throws Exception
    {
        JsonNode union = ListMerge.capabilities(List.of(JSON.readTree("{\"tools\":{\"listChanged\":false},\"logging\":{}}"),
            JSON.readTree("{\"tools\":{\"listChanged\":true},\"resources\":{\"subscribe\":true}}")));
        assertEquals(JSON.readTree("{\"tools\":{\"listChanged\":true},\"logging\":{},\"resources\":{\"subscribe\":true}}"), union);
    }

    @Test
    void membersMessagesGetFederatedRequestIdsAndPrefixedUris()
    {
        MemberMessages.Answering stream = MemberMessages.Answering.NOTHING;
        assertEquals("{\"jsonrpc\":\"2.0\",\"id\":\"files__3\",\"method\":\"sampling/createMessage\"}",
            MemberMessages.toClient(ALWAYS, "files", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sampling/createMessage\"}", stream));
        assertEquals("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"files__file:///a\"}}",
            MemberMessages.toClient(ALWAYS, "files", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"file:///a\"}}", stream));
        assertEquals("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"files__3\"}}",
            MemberMessages.toClient(ALWAYS, "files", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3}}", stream));
    }

    @Test
    void aMemberPassesOnlyTheResponseAndProgressOfTheRequestRoutedToIt() throws Exception
    {
        String response = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}";
        MemberMessages.Answering call = MemberMessages.Answering.request(JSON.readTree(
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"_meta\":{\"progressToken\":\"t\"}}}"));
        assertEquals(response, MemberMessages.toClient(ALWAYS, "files", response, call));
        assertNull(MemberMessages.toClient(ALWAYS, "files", "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}", call));
        assertNull(MemberMessages.toClient(ALWAYS, "files", response, MemberMessages.Answering.NOTHING));
        String progress = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}";
        assertEquals(progress, MemberMessages.toClient(ALWAYS, "files", progress, call));
        assertNull(MemberMessages.toClient(ALWAYS, "files", progress.replace("\"t\"", "\"u\""), call));
        assertNull(MemberMessages.toClient(ALWAYS, "files", progress, MemberMessages.Answering.NOTHING));
        assertNull(MemberMessages.toClient(ALWAYS, "files",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"search__3\"}}", call));
        assertEquals("[" + response + "]", MemberMessages.toClient(ALWAYS, "files", "[" + response + ",{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}]", call));
        assertNull(MemberMessages.toClient(ALWAYS, "files", "not json", call));
    }

    @Test
    void sessionEraResultsGetTheResultTypeModernClientsRequire()
    {
        assertEquals("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[],\"resultType\":\"complete\"}}",
            MemberMessages.completed("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}"));
        String own = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"input_required\"}}";
        assertEquals(own, MemberMessages.completed(own));
        String notification = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}";
        assertEquals(notification, MemberMessages.completed(notification));
    }
}
