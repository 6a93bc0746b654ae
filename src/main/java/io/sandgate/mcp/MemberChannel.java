package io.sandgate.mcp;

import java.util.concurrent.CompletableFuture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.McpConfig;
import io.sandgate.mcp.federation.MemberMessages;

/**
 * How one request of a federation's client reaches its members: in the member sessions of a
 * federated session (2025 era), or as 2026-07-28 requests of their own, which need none.
 */
interface MemberChannel
{
    /** The federation's name, as errors name it. */
    String federation();

    /** Sends one message to the member; the answer is the caller's to read. */
    CompletableFuture<Upstream.Exchange> send(McpConfig.Server member, ObjectNode message);

    /**
     * The member answered 404. In a session that means it no longer knows the session, which is
     * forgotten so that the next request opens another: true, send again. A 2026-07-28 404 is the
     * answer itself: false.
     */
    boolean forget(String member);

    /**
     * A routed request as the member gets it. By default as it is; a channel whose member sessions
     * several callers share (2026-07-28 callers of one owner) gives it an id and progress token of
     * its own, unguessable, so that two callers' requests never meet under one id in a member
     * session, and the answer goes back under the client's ({@link MemberMessages.Answering#request(JsonNode, JsonNode)}).
     */
    default ObjectNode forMember(ObjectNode message)
    {
        return message;
    }

    /** Whether a member's HTTP status reaches the client as it is (2026-07-28), or a JSON-RPC error goes with 200 (a session's). */
    boolean keepsStatus();

    /**
     * Whether results reach the client with {@code resultType} where a session-era member gave
     * none: 2026-07-28 clients require it, and a session-era member's result is complete.
     */
    default boolean completesResults()
    {
        return false;
    }
}
