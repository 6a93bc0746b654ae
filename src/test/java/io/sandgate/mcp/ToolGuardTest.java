package io.sandgate.mcp;

import java.util.List;

import io.sandgate.config.McpConfig.ToolPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

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
        assertEquals("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"read_file\"}],\"ttlMs\":5}}", ToolGuard.cut(POLICY, list));

        String batch = "[" + list + ",{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]";
        assertEquals("[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"read_file\"}],\"ttlMs\":5}},{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]",
            ToolGuard.cut(POLICY, batch));

        String call = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\\\"tools\\\"\"}]}}";
        assertSame(call, ToolGuard.cut(POLICY, call), "other messages pass as they came");
        assertSame(list, ToolGuard.cut(ToolPolicy.ALL, list), "no policy, nothing read");
        assertSame("not json \"tools\"", ToolGuard.cut(POLICY, "not json \"tools\""));
    }

    @Test
    void cutEvents_cutsEachDataLine_andKeepsTheRest()
    {
        String events = "id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"exec\"},{\"name\":\"search\"}]}}\n\n: keepalive\n";
        assertEquals("id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"search\"}]}}\n\n: keepalive\n",
            ToolGuard.cutEvents(POLICY, events));
    }
}
