package io.sandgate.mcp;

import java.net.URI;
import java.util.List;

import io.sandgate.config.McpConfig;
import io.sandgate.config.McpConfig.ToolPolicy;
import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ToolGuardTest
{
    private static final ToolPolicy POLICY = new ToolPolicy(List.of("read_*", "search", "q?"), List.of("read_secret*"));

    @ParameterizedTest
    @CsvSource({
        "read_file, true", "read_, true", "search, true", "qa, true",
        "read_secrets, false", "read_secret, false", "searching, false", "qaa, false", "write_file, false", "'', false"})
    void policy_allowsWhatAnAllowGlobMatchesAndNoDenyGlob(String tool, boolean allowed)
    {
        assertEquals(allowed, POLICY.allows(tool));
    }

    @Test
    void denyOnly_allowsEverythingElse()
    {
        ToolPolicy deny = new ToolPolicy(List.of(), List.of("*delete*"));
        assertEquals(true, deny.allows("read"));
        assertEquals(false, deny.allows("bulk_delete_all"));
    }

    @Test
    void cut_removesHiddenToolsFromListResults_only()
    {
        String list = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"read_file\"},{\"name\":\"read_secret\"},{\"name\":\"exec\"}],\"ttlMs\":5}}";
        assertEquals("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"read_file\"}],\"ttlMs\":5}}", ToolGuard.cut(ToolAccess.of(POLICY), list));

        String batch = "[" + list + ",{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]";
        assertEquals("[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"read_file\"}],\"ttlMs\":5}},{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]",
            ToolGuard.cut(ToolAccess.of(POLICY), batch));

        String call = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\\\"tools\\\"\"}]}}";
        assertSame(call, ToolGuard.cut(ToolAccess.of(POLICY), call), "other messages pass as they came");
        assertSame(list, ToolGuard.cut(ToolAccess.of(ToolPolicy.ALL), list), "no policy, nothing read");
        assertSame("not json \"tools\"", ToolGuard.cut(ToolAccess.of(POLICY), "not json \"tools\""));
    }

    @Test
    void cutEvents_cutsEachDataLine_andKeepsTheRest()
    {
        String events = "id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"exec\"},{\"name\":\"search\"}]}}\n\n: keepalive\n";
        assertEquals("id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"search\"}]}}\n\n: keepalive\n",
            ToolGuard.cutEvents(ToolAccess.of(POLICY), events));
    }

    /** As a client reads events: the data lines of one event joined, whatever ends the lines. */
    @Test
    void cutEvents_cutsTheDataOfEachEvent_asAClientJoinsIt()
    {
        String split = "id: 7\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"exec\"},\r\ndata: {\"name\":\"search\"}]}}\r\n\r\n";
        assertEquals("id: 7\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"search\"}]}}\n\r\n", ToolGuard.cutEvents(ToolAccess.of(POLICY), split));
        String crOnly = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"exec\"}]}}\r\r";
        assertEquals("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\r", ToolGuard.cutEvents(ToolAccess.of(POLICY), crOnly));
        String whole = "retry: 1000\nid: 1\ndata:\n\n";
        assertEquals(whole, ToolGuard.cutEvents(ToolAccess.of(POLICY), whole), "events without tools pass as they came");
    }

    @Test
    void cut_readsEscapedKeys_andDropsToolsWithoutAStringName()
    {
        String escaped = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"\\u0074ools\":[{\"name\":\"exec\"},{\"name\":[\"exec\"]},{\"name\":\"search\"}]}}";
        assertEquals("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"search\"}]}}", ToolGuard.cut(ToolAccess.of(POLICY), escaped));
    }

    private static String call(String name)
    {
        return "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":" + name + "}}";
    }

    @Test
    void refusal_ofAToolNamedByAnythingButAString_withOrWithoutAPolicy()
    {
        McpConfig.Server denyOnly = new McpConfig.Server("s", URI.create("http://127.0.0.1:1/mcp"), McpConfig.Transport.STREAMABLE,
            new ToolPolicy(List.of(), List.of("secret*")));
        McpConfig.Server open = new McpConfig.Server("s", URI.create("http://127.0.0.1:1/mcp"), McpConfig.Transport.STREAMABLE);
        for (McpConfig.Server server : List.of(denyOnly, open))
        {
            for (String name : List.of("[\"secret_tool\"]", "1", "null", "{}"))
            {
                String refusal = ToolGuard.refusal(new ToolAccess(server, server.tools(), null), JsonRpc.parse(call(name)));
                assertTrue(refusal != null && refusal.contains("\"code\":-32602") && refusal.contains("\"id\":4"), name + " -> " + refusal);
            }
            assertTrue(ToolGuard.refusal(new ToolAccess(server, server.tools(), null), JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":[\"secret_tool\"]}")) != null);
            assertNull(ToolGuard.refusal(new ToolAccess(server, server.tools(), null), JsonRpc.parse(call("\"read\""))));
            RpcException batch = assertThrows(RpcException.class, () -> ToolGuard.refusal(new ToolAccess(server, server.tools(), null), JsonRpc.parse("[" + call("\"read\"") + "," + call("[\"x\"]") + "]")));
            assertEquals(JsonRpcErrors.INVALID_PARAMS, batch.rpcCode());
        }
        assertTrue(ToolGuard.refusal(new ToolAccess(denyOnly, denyOnly.tools(), null), JsonRpc.parse(call("\"secret_tool\""))).contains("not available"));
    }

    @Test
    void parse_refusesWhatAServerCouldReadOtherwise()
    {
        String allowed = call("\"read\"");
        String hidden = call("\"secret_tool\"");
        for (String body : List.of(allowed + hidden, allowed + " " + hidden, "[" + allowed + "]" + hidden, allowed + "[]", allowed + " x"))
            assertEquals(JsonRpcErrors.PARSE_ERROR, JsonRpcErrors.code(assertThrows(GatewayException.class, () -> JsonRpc.parse(body))), body);
        assertTrue(assertThrows(GatewayException.class, () -> JsonRpc.parse(allowed + hidden)).getMessage().contains("more follows the first value"));
        assertEquals(JsonRpcErrors.PARSE_ERROR, JsonRpcErrors.code(assertThrows(GatewayException.class,
            () -> JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"name\":\"secret_tool\"}}"))));
        assertEquals(JsonRpcErrors.INVALID_REQUEST, JsonRpcErrors.code(assertThrows(GatewayException.class,
            () -> JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":[\"tools/call\"],\"result\":{},\"params\":{\"name\":\"secret_tool\"}}"))));
        assertEquals(1, JsonRpc.parse(allowed + " \n\t").messages().size(), "white space after the value is no value");
    }
}
