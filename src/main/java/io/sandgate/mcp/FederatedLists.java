package io.sandgate.mcp;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.McpConfig;
import io.sandgate.mcp.federation.FederatedCursor;
import io.sandgate.mcp.federation.FederatedNames;
import io.sandgate.mcp.federation.ListKind;
import io.sandgate.mcp.federation.ListMerge;
import org.eclipse.jetty.http.HttpStatus;

/**
 * A federation's lists: each page asked of the members in parallel, cut by each member's tool
 * policy, merged ({@link ListMerge}). A member that fails or does not answer in
 * {@link #MEMBER_TIMEOUT} is left out with a warning, not the whole list failed.
 */
final class FederatedLists
{
    /** How long a list waits for a member before it answers without it. */
    static final Duration MEMBER_TIMEOUT = Duration.ofSeconds(10);
    /**
     * The most pages of one member read to find which member has a name: a member that pages
     * forever must not hold a request forever, and any client request (under when-needed) may set
     * a look-up off, so each must cost the members little.
     */
    private static final int MAX_LOOKUP_PAGES = 5;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final FederationMembers members;

    FederatedLists(FederationMembers members)
    {
        this.members = members;
    }

    /**
     * One page of a list for the client.
     *
     * @param params the client's params: its cursor (the federation's), and what else it sent, which each member gets too
     * @throws RpcException invalid params (answered with 200) for a cursor the federation did not give
     */
    CompletableFuture<ObjectNode> page(MemberChannel channel, FederatedNames names, ListKind kind, JsonNode params, RequestChecks.Caller caller)
    {
        List<String> all = names.federation().servers();
        JsonNode cursor = params.path("cursor");
        Map<String, String> state;
        if (cursor.isMissingNode() || cursor.isNull())
            state = FederatedCursor.first(all);
        else if (!cursor.isTextual())
            throw invalidCursor();
        else
        {
            try
            {
                state = FederatedCursor.decode(cursor.asText(), all);
            }
            catch (IllegalArgumentException x)
            {
                throw invalidCursor();
            }
        }
        Map<String, CompletableFuture<JsonNode>> asked = new LinkedHashMap<>();
        state.forEach((member, memberCursor) -> asked.put(member, fetch(channel, member, kind, params, memberCursor, caller)
            .orTimeout(MEMBER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
            .exceptionally(failure ->
            {
                members.leftOut(channel.federation(), member, kind.method(), failure);
                return null;
            })));
        return CompletableFuture.allOf(asked.values().toArray(CompletableFuture[]::new)).thenApply(ignored ->
        {
            Map<String, JsonNode> pages = new LinkedHashMap<>();
            asked.forEach((member, page) ->
            {
                JsonNode result = page.join();
                if (result != null)
                    pages.put(member, result);
            });
            return ListMerge.merge(names, kind, pages, member -> members.leftOut(channel.federation(), member, "the pages of " + kind.method() + " after this one",
                "its cursor is too long for the federation's (" + FederatedCursor.MAX_LENGTH + " characters at most)"));
        });
    }

    private static RpcException invalidCursor()
    {
        return new RpcException(HttpStatus.OK_200, JsonRpcErrors.INVALID_PARAMS, "Invalid params: cursor is not one this federation gave", null);
    }

    /** One page of one member's list, cut by its tool policy for the caller. */
    CompletableFuture<JsonNode> fetch(MemberChannel channel, String member, ListKind kind, JsonNode params, String cursor, RequestChecks.Caller caller)
    {
        McpConfig.Server server = members.server(member);
        ObjectNode request = JSON.createObjectNode().put("jsonrpc", "2.0").put("id", FederationMembers.gatewayRequestId()).put("method", kind.method());
        ObjectNode memberParams = params.isObject() ? ((ObjectNode)params).deepCopy() : JSON.createObjectNode();
        memberParams.remove("cursor");
        if (cursor != null)
            memberParams.put("cursor", cursor);
        request.set("params", memberParams);
        return channel.send(server, request).thenCompose(exchange ->
            {
                if (exchange.status() == HttpStatus.NOT_FOUND_404 && channel.forget(member))
                {
                    exchange.discard();
                    throw FederationMembers.unavailable(channel.federation(), member, "it no longer knew the session (a new one opens with the next request)");
                }
                return members.messages(exchange);
            })
            .thenApply(messages ->
            {
                // Fresh from the member: its pins record the list, then judge it with its policy.
                ToolAccess access = caller.tools(server);
                List<JsonNode> cut = new ArrayList<>();
                for (JsonNode message : messages)
                    cut.add(kind == ListKind.TOOLS ? FederationMembers.parse(ToolGuard.cut(access, message.toString())) : message);
                return FederationMembers.result(cut, channel.federation(), member);
            });
    }

    /**
     * The members whose whole list (every page) has an item of that name or URI: where a name
     * without a member's prefix goes.
     */
    CompletableFuture<List<String>> owners(MemberChannel channel, FederatedNames names, ListKind kind, String key, RequestChecks.Caller caller)
    {
        Map<String, CompletableFuture<Boolean>> asked = new LinkedHashMap<>();
        for (String member : names.federation().servers())
        {
            asked.put(member, has(channel, member, kind, key, null, caller, 0)
                .orTimeout(MEMBER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .exceptionally(failure -> false));
        }
        return CompletableFuture.allOf(asked.values().toArray(CompletableFuture[]::new)).thenApply(ignored ->
        {
            List<String> owners = new ArrayList<>();
            asked.forEach((member, has) ->
            {
                if (has.join())
                    owners.add(member);
            });
            return owners;
        });
    }

    private CompletableFuture<Boolean> has(MemberChannel channel, String member, ListKind kind, String key, String cursor, RequestChecks.Caller caller, int pages)
    {
        return fetch(channel, member, kind, JSON.createObjectNode(), cursor, caller).thenCompose(page ->
        {
            if (ListMerge.keysOf(kind, page).contains(key))
                return CompletableFuture.completedFuture(true);
            if (!page.path("nextCursor").isTextual() || pages + 1 >= MAX_LOOKUP_PAGES)
                return CompletableFuture.completedFuture(false);
            return has(channel, member, kind, key, page.get("nextCursor").asText(), caller, pages + 1);
        });
    }
}
