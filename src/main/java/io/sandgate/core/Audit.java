package io.sandgate.core;

import java.time.Instant;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit log: what an operator must be able to reconstruct after the fact (who called the admin
 * API, which access was opened or revoked, which credential was injected for whom, what was blocked,
 * which nodes left and came back, who leads). Logger {@code sandgate.audit}, one JSON object per
 * line whatever {@code log.format} says, so that it can be shipped and queried on its own.
 * <p>
 * Every field is a name the configuration or the gateway chose (ids, routes, rules, pools, nodes),
 * a method, a path without its query, a status or an address: never a token, a credential value or
 * the text a leak rule matched. Callers pass nothing else.
 */
public final class Audit
{
    private static final Logger AUDIT = LoggerFactory.getLogger("sandgate.audit");
    private static final JsonMapper JSON = new JsonMapper();

    private Audit()
    {
    }

    /** An admin API call and how it ended; the path has no query and the token is never passed. */
    public static void adminCall(String method, String path, int status, String caller)
    {
        write(event("admin.call").put("method", method).put("path", path).put("status", status).put("caller", caller));
    }

    /** A grant link opened a session on a sandbox. */
    public static void grantRedeemed(String sandbox, String subject)
    {
        write(event("grant.redeemed").put("sandbox", sandbox).put("subject", subject));
    }

    /** Every grant and session issued for a sandbox so far was revoked. */
    public static void accessRevoked(String sandbox, int webSocketsClosed)
    {
        write(event("access.revoked").put("sandbox", sandbox).put("webSocketsClosed", webSocketsClosed));
    }

    /** A held credential was put into an agent's request to a target host. */
    public static void credentialInjected(String agent, String credential, String host)
    {
        write(event("credential.injected").put("agent", agent).put("credential", credential).put("host", host));
    }

    /** An agent's call was refused by its policy, or in report mode would have been (reason: domain or a budget's name). */
    public static void agentPolicy(String agent, String reason, String outcome)
    {
        write(event("agent.policy").put("agent", agent).put("reason", reason).put("outcome", outcome));
    }

    /** An agent's policy was set at run time through the admin API; {@code policy} is its JSON, which holds no secret. */
    public static void agentPolicySet(String agent, String policy)
    {
        write(event("agent.policy.set").put("agent", agent).put("policy", policy));
    }

    /** A leak rule stopped a request or cut off an answer on an egress route. */
    public static void leakBlocked(String route, String rule, String direction)
    {
        write(event("leak.blocked").put("route", route).put("rule", rule).put("direction", direction));
    }

    /** An egress node was taken out of selection. */
    public static void nodeEjected(String pool, String node, String reason)
    {
        write(event("node.ejected").put("pool", pool).put("node", node).put("reason", reason));
    }

    /** An ejected egress node was let back in (it ramps up from here). */
    public static void nodeRecovered(String pool, String node, String reason)
    {
        write(event("node.recovered").put("pool", pool).put("node", node).put("reason", reason));
    }

    /** A pool left its preferred region for the others ({@code away}), or came back to it. */
    public static void regionFailover(String pool, String region, boolean away)
    {
        write(event(away ? "region.failover" : "region.restored").put("pool", pool).put("region", region));
    }

    /** This replica became, or stopped being, the one writer of {@code role}. */
    public static void leadership(String role, boolean leading)
    {
        write(event(leading ? "leadership.elected" : "leadership.lost").put("role", role));
    }

    /** A sandbox was asked to resume or pause and its manager did not do it; the reason is the gateway's words, never the manager's body. */
    public static void lifecycleFailed(String sandbox, String action, String reason)
    {
        write(event("sandbox." + action + ".failed").put("sandbox", sandbox).put("reason", reason));
    }

    /**
     * An MCP tool call and what the gateway decided: {@code allowed}, {@code denied} (by the tool
     * policy) or {@code over_quota}; never its arguments or its result.
     *
     * @param caller the principal ({@code subject@issuer}), or the client's address where the server is open
     * @param latencyMillis until the decision for a refusal; until the exchange ended for a call that went
     */
    public static void toolCall(String caller, String server, String tool, String outcome, long latencyMillis)
    {
        write(event("mcp.tool.call").put("caller", caller).put("server", server).put("tool", shortened(tool)).put("outcome", outcome).put("latencyMs", latencyMillis));
    }

    /**
     * A pinned MCP server serves a tool whose definition was never approved: {@code changed} from the
     * approved one, or {@code added} (a new name, a rename included). Digests only: the definition
     * itself is the server's text, shown by the admin API.
     *
     * @param oldDigest the approved definition's, null for an added tool
     */
    public static void toolChanged(String server, String tool, String kind, String oldDigest, String newDigest)
    {
        write(event("mcp.tool.changed").put("server", server).put("tool", shortened(tool)).put("kind", kind).put("oldDigest", oldDigest).put("newDigest", newDigest));
    }

    /** An operator approved the definition a pinned MCP server serves as a tool. */
    public static void toolApproved(String server, String tool, String oldDigest, String newDigest)
    {
        write(event("mcp.tool.approved").put("server", server).put("tool", shortened(tool)).put("oldDigest", oldDigest).put("newDigest", newDigest));
    }

    /** An operator rejected the definition a pinned MCP server serves as a tool; the approved one stays. */
    public static void toolRejected(String server, String tool, String oldDigest, String newDigest)
    {
        write(event("mcp.tool.rejected").put("server", server).put("tool", shortened(tool)).put("oldDigest", oldDigest).put("newDigest", newDigest));
    }

    /** This replica began to drain: it turned not ready and will close its connections and stop. */
    public static void drainStarted(String cause)
    {
        write(event("drain.started").put("cause", cause));
    }

    /** A tool's name as a server chose it: bounded, so that a hostile server cannot fill the log. */
    private static String shortened(String tool)
    {
        return tool.length() > 200 ? tool.substring(0, 200) + "..." : tool;
    }

    private static ObjectNode event(String name)
    {
        return JSON.createObjectNode().put("time", Instant.now().toString()).put("event", name);
    }

    private static void write(ObjectNode line)
    {
        // Jackson escapes control characters, so a hostile path cannot forge a second line.
        AUDIT.info(line.toString());
    }
}
