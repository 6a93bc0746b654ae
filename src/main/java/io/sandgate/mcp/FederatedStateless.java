package io.sandgate.mcp;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.McpFederation;
import io.sandgate.mcp.federation.FederatedNames;
import io.sandgate.mcp.federation.ListKind;
import io.sandgate.mcp.federation.ListMerge;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;

/**
 * 2026-07-28 requests at {@code /mcp/{federation}/mcp}: no session, so nothing is kept; each
 * request goes to the members as a 2026-07-28 request of its own ({@link FederationMembers#stateless}).
 * {@code server/discover} answers the union of the members' capabilities; lists and requests about
 * one item go as for a session. Members that speak only the session era answer an error and are
 * left out, as a member that is down.
 */
final class FederatedStateless
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
    /** Methods of the session era that this revision dropped (subscriptions/listen took over resource updates): as its servers do, not found. */
    private static final Set<String> REMOVED = Set.of("resources/subscribe", "resources/unsubscribe");

    private final FederationMembers members;
    private final StatelessMembers stateless;
    private final FederatedLists lists;
    private final FederatedCalls calls;
    private final FederatedListen listen;

    FederatedStateless(FederationMembers members, StatelessMembers stateless, FederatedLists lists, FederatedCalls calls, FederatedListen listen)
    {
        this.listen = listen;
        this.members = members;
        this.stateless = stateless;
        this.lists = lists;
        this.calls = calls;
    }

    void post(HttpServletRequest request, HttpServletResponse response, McpFederation federation, FederatedNames names, RequestChecks.Caller caller, JsonRpc rpc)
    {
        StatelessTransport.check(request, rpc);
        ObjectNode message = (ObjectNode)rpc.messages().get(0);
        AsyncContext async = request.getAsyncContext();
        String method = rpc.method();
        if (!message.has("id"))
        {
            response.setStatus(HttpStatus.ACCEPTED_202);
            async.complete();
            return;
        }
        String version = request.getHeader(McpHeaders.PROTOCOL_VERSION).strip();
        String accept = request.getHeader(HttpHeader.ACCEPT.asString());
        Map<String, String> toolHeaders = new HashMap<>();
        for (String name : Collections.list(request.getHeaderNames()))
        {
            if (name.toLowerCase(Locale.ROOT).startsWith("mcp-param-"))
                toolHeaders.put(name, request.getHeader(name));
        }
        MemberChannel channel = stateless.channel(federation.name(), caller, version, accept, toolHeaders, message);
        ListKind kind = ListKind.of(method);
        if (kind != null)
            FederatedTransport.answer(async, message, lists.page(channel, names, kind, message.path("params"), caller).thenApply(page ->
            {
                // Required in this revision; a page of session-era members only has none.
                if (!page.has("resultType"))
                    page.put("resultType", "complete");
                return page;
            }));
        else if (REMOVED.contains(method))
            throw new RpcException(HttpStatus.NOT_FOUND_404, JsonRpcErrors.METHOD_NOT_FOUND, "Method not found: " + method + " is not of " + version, null);
        else if ("subscriptions/listen".equals(method))
            listen.listen(request, channel, names, caller, version, message);
        else if (FederatedCalls.routes(method))
            calls.call(request, channel, names, caller, message);
        else if ("server/discover".equals(method))
            FederatedTransport.answer(async, message, discover(federation, caller, version, accept, message));
        else
            throw new RpcException(HttpStatus.NOT_FOUND_404, JsonRpcErrors.METHOD_NOT_FOUND, "Method not found: " + method, null);
    }

    /**
     * The members' {@code server/discover} results as one: the first answer's shape, the union of
     * the capabilities, and the federation as the server (a federation of one member is that member).
     */
    private CompletableFuture<JsonNode> discover(McpFederation federation, RequestChecks.Caller caller, String version, String accept, ObjectNode message)
    {
        Map<String, CompletableFuture<JsonNode>> asked = new LinkedHashMap<>();
        for (String member : federation.servers())
        {
            asked.put(member, stateless.discover(federation.name(), caller, version, accept, members.server(member), message)
                .orTimeout(FederatedLists.MEMBER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .exceptionally(failure ->
                {
                    members.leftOut(federation.name(), member, "server/discover", failure);
                    return null;
                }));
        }
        return CompletableFuture.allOf(asked.values().toArray(CompletableFuture[]::new)).thenApply(ignored ->
        {
            List<JsonNode> results = new ArrayList<>();
            asked.values().forEach(result ->
            {
                if (result.join() != null)
                    results.add(result.join());
            });
            if (results.isEmpty())
                throw FederationMembers.unavailable(federation.name(), String.join(", ", federation.servers()), "none answered server/discover");
            // The shape of a member's own answer; session-era members give capabilities only.
            ObjectNode discovered = results.stream().filter(result -> result.has("supportedVersions")).findFirst()
                .map(result -> (ObjectNode)result.deepCopy()).orElseGet(() ->
                {
                    ObjectNode made = JSON.createObjectNode().put("resultType", "complete");
                    made.putArray("supportedVersions").add(version);
                    return made;
                });
            discovered.set("capabilities", ListMerge.capabilities(results.stream().map(result -> result.path("capabilities")).toList()));
            if (federation.servers().size() > 1 || !discovered.path("_meta").has(META_SERVER_INFO))
            {
                ObjectNode meta = discovered.path("_meta").isObject() ? (ObjectNode)discovered.get("_meta") : discovered.putObject("_meta");
                meta.set(META_SERVER_INFO, JSON.createObjectNode().put("name", federation.name()).put("version", "sandgate-federation"));
                discovered.remove("instructions");
            }
            return discovered;
        });
    }
}
