package io.sandgate.mcp;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.McpConfig;
import io.sandgate.config.McpFederation;
import io.sandgate.mcp.federation.FederatedNames;
import io.sandgate.mcp.federation.ListKind;
import io.sandgate.mcp.federation.ListMerge;
import io.sandgate.web.GatewayException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Streamable HTTP with 2025-era sessions at {@code /mcp/{federation}/mcp} (docs/mcp-federation.md).
 * The federated session is a session record of the federation's name, counted once against its
 * client; its member sessions are ordinary session records of the members ({@link FederationMembers}),
 * so any replica serves any request. {@code initialize} opens the members in parallel and answers
 * with the union of their capabilities; lists go to every member ({@link FederatedLists}); requests
 * about one item go to its member ({@link FederatedCalls}).
 */
final class FederatedTransport
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private final McpConfig config;
    private final RequestChecks checks;
    private final SessionBus bus;
    private final FederationMembers members;
    private final FederatedLists lists;
    private final FederatedCalls calls;
    private final FederatedStream stream;
    private final FederatedStateless stateless;
    private final Map<String, FederatedNames> names = new ConcurrentHashMap<>();

    FederatedTransport(McpConfig config, RequestChecks checks, SessionBus bus, FederationMembers members, FederatedLists lists, FederatedCalls calls,
                       FederatedStream stream, StatelessMembers statelessMembers, Executor workers)
    {
        this.stream = stream;
        this.stateless = new FederatedStateless(members, statelessMembers, lists, calls, new FederatedListen(members, statelessMembers, checks, workers));
        this.config = config;
        this.checks = checks;
        this.bus = bus;
        this.members = members;
        this.lists = lists;
        this.calls = calls;
    }

    /** The federation a path segment names, or null. */
    McpFederation federation(String name)
    {
        return config.federation(name);
    }

    private FederatedNames names(McpFederation federation)
    {
        return names.computeIfAbsent(federation.name(), name -> new FederatedNames(federation));
    }

    void post(HttpServletRequest request, HttpServletResponse response, McpFederation federation, RequestChecks.Caller caller, String body) throws IOException
    {
        JsonRpc rpc = JsonRpc.parse(body);
        JsonRpcErrors.parsed(request, rpc);
        FederationMembers.refuseGatewayIds(rpc);
        if (StatelessTransport.applies(request, rpc))
        {
            stateless.post(request, response, federation, names(federation), caller, rpc);
            return;
        }
        StreamableTransport.checkVersion(request);
        if (!rpc.isSingle())
            throw GatewayException.badRequest("a batch cannot be sent to a federation: send its messages one at a time");
        ObjectNode message = (ObjectNode)rpc.messages().get(0);
        AsyncContext async = request.getAsyncContext();
        FederatedNames named = names(federation);
        String sessionId = request.getHeader(McpHeaders.SESSION_ID);
        if (sessionId == null)
        {
            if (!rpc.isInitialize())
                throw GatewayException.badRequest("no session: initialize first");
            initialize(async, response, federation, caller, message);
            return;
        }
        McpSession federated = checks.session(sessionId, federation.name(), caller);
        response.setHeader(McpHeaders.SESSION_ID, federated.id());
        String method = message.path("method").asText(null);
        if (method == null || !message.has("id"))
        {
            if (method == null)
                calls.answer(federated, named, message);
            else if ("notifications/cancelled".equals(method) || "notifications/roots/list_changed".equals(method))
                calls.notifyAll(federated, named, message);
            response.setStatus(HttpStatus.ACCEPTED_202);
            async.complete();
            return;
        }
        ListKind kind = ListKind.of(method);
        // What the gateway answers itself in a session comes as the SDKs' servers answer a client that
        // takes both: an event stream (one event), so that the federation looks to a client as its members do.
        String accept = request.getHeader(HttpHeader.ACCEPT.asString());
        boolean events = accept != null && accept.contains("text/event-stream");
        if (kind != null)
            answer(async, message, lists.page(members.channel(federated), named, kind, message.path("params"), caller), events);
        else if (FederatedCalls.routes(method))
            calls.call(request, members.channel(federated), named, caller, message);
        else if ("ping".equals(method))
            answer(async, message, CompletableFuture.completedFuture(JSON.createObjectNode()), events);
        else if ("logging/setLevel".equals(method))
            answer(async, message, setLevel(federated, federation, message), events);
        else
            throw new RpcException(HttpStatus.OK_200, JsonRpcErrors.METHOD_NOT_FOUND, "Method not found: " + method, null);
    }

    /** Answers a request with the result the future gives, or the error it fails with. */
    static void answer(AsyncContext async, JsonNode request, CompletableFuture<? extends JsonNode> result)
    {
        answer(async, request, result, false);
    }

    /** As {@link #answer(AsyncContext, JsonNode, CompletableFuture)}; a result comes as an event stream of one event when {@code events}. */
    private static void answer(AsyncContext async, JsonNode request, CompletableFuture<? extends JsonNode> result, boolean events)
    {
        result.whenComplete((value, failure) ->
        {
            if (failure != null)
            {
                McpServlet.end(async, failure);
                return;
            }
            try
            {
                ObjectNode answer = JSON.createObjectNode().put("jsonrpc", "2.0");
                answer.set("id", request.get("id"));
                answer.set("result", value);
                if (events)
                {
                    ClientStream stream = ClientStream.start(async);
                    stream.event(null, null, answer.toString());
                    stream.close();
                }
                else
                {
                    McpServlet.answer(async, answer.toString());
                }
            }
            catch (IOException | RuntimeException x)
            {
                McpServlet.end(async, x);
            }
        });
    }

    /**
     * Stores the federated session with what the client said of itself, opens every member's in
     * parallel and answers with the union of their capabilities. A member that fails is left out
     * (and opened with a later request that needs it).
     */
    private void initialize(AsyncContext async, HttpServletResponse response, McpFederation federation, RequestChecks.Caller caller, ObjectNode message)
    {
        JsonNode params = message.path("params");
        String revision = StatelessBridge.revision(params);
        String said = StatelessBridge.clientSaid(params);
        McpSession federated = checks.newSession(federation.name(), caller).withProtocolVersion(revision).withClient(said);
        bus.update(federated);
        Map<String, CompletableFuture<JsonNode>> opened = new LinkedHashMap<>();
        for (String member : federation.servers())
        {
            opened.put(member, members.open(federated, member)
                .orTimeout(FederatedLists.MEMBER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .exceptionally(failure ->
                {
                    members.leftOut(federation.name(), member, "initialize", failure);
                    return null;
                }));
        }
        CompletableFuture<JsonNode> result = CompletableFuture.allOf(opened.values().toArray(CompletableFuture[]::new)).thenApply(ignored ->
        {
            List<JsonNode> capabilities = new ArrayList<>();
            List<String> instructions = new ArrayList<>();
            JsonNode only = null;
            for (Map.Entry<String, CompletableFuture<JsonNode>> entry : opened.entrySet())
            {
                JsonNode memberResult = entry.getValue().join();
                if (memberResult == null)
                    continue;
                only = memberResult;
                capabilities.add(memberResult.path("capabilities"));
                if (memberResult.path("instructions").isTextual())
                    instructions.add(federation.servers().size() == 1 ? memberResult.get("instructions").asText()
                        : entry.getKey() + ": " + memberResult.get("instructions").asText());
            }
            // A federation of one member is that member to its client: its revision and its name.
            boolean single = federation.servers().size() == 1 && only != null;
            ObjectNode initialized = JSON.createObjectNode()
                .put("protocolVersion", single && only.path("protocolVersion").isTextual() ? only.get("protocolVersion").asText() : revision);
            initialized.set("capabilities", ListMerge.capabilities(capabilities));
            initialized.set("serverInfo", single && only.path("serverInfo").isObject() ? only.get("serverInfo")
                : JSON.createObjectNode().put("name", federation.name()).put("version", "sandgate-federation"));
            if (!instructions.isEmpty())
                initialized.put("instructions", String.join("\n\n", instructions));
            return initialized;
        });
        response.setHeader(McpHeaders.SESSION_ID, federated.id());
        answer(async, message, result);
    }

    /** {@code logging/setLevel} for every member that has a session. */
    private CompletableFuture<JsonNode> setLevel(McpSession federated, McpFederation federation, ObjectNode message)
    {
        List<CompletableFuture<?>> sent = new ArrayList<>();
        for (String member : federation.servers())
        {
            McpConfig.Server server = members.server(member);
            members.find(federated, member).ifPresent(session -> sent.add(members.send(server, session, message)
                .thenAccept(Upstream.Exchange::discard).exceptionally(failure -> null)));
        }
        return CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).thenApply(ignored -> JSON.createObjectNode());
    }

    void get(HttpServletRequest request, McpFederation federation, RequestChecks.Caller caller) throws IOException
    {
        stream.get(request, federation, names(federation), caller);
    }

    void delete(HttpServletRequest request, HttpServletResponse response, McpFederation federation, RequestChecks.Caller caller)
    {
        StreamableTransport.checkVersion(request);
        McpSession federated = checks.session(request.getHeader(McpHeaders.SESSION_ID), federation.name(), caller);
        members.end(federated, federation);
        bus.delete(federated.id());
        response.setStatus(HttpStatus.NO_CONTENT_204);
    }
}
