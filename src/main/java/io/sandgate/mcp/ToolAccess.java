package io.sandgate.mcp;

import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandgate.config.McpConfig;

/**
 * What of a server's tools one caller may list and call: the server's tool policy as it applies to
 * the caller, and the server's pinned definitions ({@link ToolPins}) where it pins them.
 *
 * @param server null only for a policy judged on its own (no pins)
 * @param policy the policy as it applies to the caller ({@link RequestChecks.Caller#tools})
 * @param pins null where nothing is pinned
 * @param records whether the lists judged are fresh from the server, and so checked into the pins
 */
record ToolAccess(McpConfig.Server server, McpConfig.ToolPolicy policy, ToolPins pins, boolean records)
{
    ToolAccess(McpConfig.Server server, McpConfig.ToolPolicy policy, ToolPins pins)
    {
        this(server, policy, pins, true);
    }

    /** A policy alone. */
    static ToolAccess of(McpConfig.ToolPolicy policy)
    {
        return new ToolAccess(null, policy, null);
    }

    /**
     * The same access for lists that may not be fresh from the server (a session's log, replayed
     * to a client that resumes): the pins judge them, and record nothing of them.
     */
    ToolAccess judging()
    {
        return new ToolAccess(server, policy, pins, false);
    }

    private boolean pinned()
    {
        return pins != null && server != null && server.pin() != McpConfig.PinMode.OFF;
    }

    /** Whether {@code tools/list} answers must be read: to cut them, or to check them against the pins. */
    boolean readsLists()
    {
        return !policy.allowsAll() || pinned();
    }

    /** Whether a call of the tool may go. */
    boolean allows(String tool)
    {
        return policy.allows(tool) && (!pinned() || pins.callable(server, tool));
    }

    /** Checks a listed {@code tools} array against the pins, recording it when fresh; the names the pins hide. */
    Set<String> hiddenOf(JsonNode tools)
    {
        if (!pinned())
            return Set.of();
        return records ? pins.observe(server, tools) : pins.judge(server, tools);
    }
}
