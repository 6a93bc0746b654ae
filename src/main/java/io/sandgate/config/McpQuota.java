package io.sandgate.config;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * How many tool calls one principal may make on one server ({@code mcp.servers[].quota}), counted
 * across the replicas in fixed windows.
 *
 * @param calls calls of any tool per window; 0 for no limit but the tools'
 * @param window the length of a window
 * @param tools calls of one tool per window, by tool name
 */
public record McpQuota(int calls, Duration window, Map<String, Integer> tools)
{
    static final String SHAPE = "{calls, window, tools: {name: calls}}";

    public McpQuota
    {
        tools = Map.copyOf(tools);
    }

    /** The limit on one tool's calls, if it has one. */
    public Optional<Integer> limitOf(String tool)
    {
        return Optional.ofNullable(tools.get(tool));
    }

    static Optional<McpQuota> parse(Object raw, String where)
    {
        if (raw == null)
            return Optional.empty();
        ConfigTable table = ConfigTable.of(raw, where, SHAPE, Set.of("calls", "window", "tools"));
        int calls = table.get("calls", ValueParser.integer(0, Integer.MAX_VALUE), 0);
        Duration window = table.get("window", ValueParser.positiveDuration(), Duration.ofMinutes(1));
        Map<String, Integer> tools = new LinkedHashMap<>();
        Object perTool = table.raw("tools");
        if (perTool != null)
        {
            if (!(perTool instanceof Map<?, ?> map))
                throw new IllegalArgumentException(table.at("tools") + ": " + perTool + " (expected: {tool name: calls per window})");
            ValueParser<Integer> count = ValueParser.integer(1, Integer.MAX_VALUE);
            map.forEach((tool, limit) ->
            {
                try
                {
                    tools.put(tool.toString(), count.parse(limit));
                }
                catch (IllegalArgumentException x)
                {
                    throw new IllegalArgumentException(table.at("tools") + "." + tool + ": " + limit + " (expected: " + x.getMessage() + ")");
                }
            });
        }
        if (calls == 0 && tools.isEmpty())
            throw new IllegalArgumentException(where + ": no limit (expected: calls, or tools with a limit each)");
        return Optional.of(new McpQuota(calls, window, tools));
    }
}
