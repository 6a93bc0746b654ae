package io.sandgate.mcp;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.McpConfig;
import io.sandgate.config.McpFederation;
import io.sandgate.mcp.federation.FederatedNames;
import io.sandgate.mcp.federation.ListKind;
import io.sandgate.mcp.federation.MemberMessages;
import io.sandgate.mcp.federation.ResumeIds;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpStatus;

/**
 * A federation's requests about one item (a tool, a prompt, a resource, a completion): routed to
 * the member the name or URI names, the prefix removed, judged by that member's {@link CallGate},
 * and the member's answer streamed back as it comes, each message rewritten for the federation's
 * client ({@link MemberMessages}).
 */
final class FederatedCalls
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private final FederationMembers members;
    private final FederatedLists lists;
    private final CallGate gate;
    private final Executor workers;

    FederatedCalls(FederationMembers members, FederatedLists lists, CallGate gate, Executor workers)
    {
        this.members = members;
        this.lists = lists;
        this.gate = gate;
        this.workers = workers;
    }

    /** Where a method's item is named: the params object holding it, and the field. */
    private record Target(ObjectNode holder, String field, ListKind kind)
    {
    }

    /** Whether the federation routes this method to one member. */
    static boolean routes(String method)
    {
        return switch (method)
        {
            case "tools/call", "prompts/get", "resources/read", "resources/subscribe", "resources/unsubscribe", "completion/complete" -> true;
            default -> false;
        };
    }

    /** Routes a request of a {@link #routes routed} method; ends the exchange. */
    void call(HttpServletRequest request, MemberChannel channel, FederatedNames names, RequestChecks.Caller caller, ObjectNode message)
    {
        AsyncContext async = request.getAsyncContext();
        ObjectNode rewritten = message.deepCopy();
        Target target = target(rewritten);
        if (target == null)
            throw new RpcException(HttpStatus.OK_200, JsonRpcErrors.INVALID_PARAMS,
                "Invalid params: " + message.path("method").asText() + " names its tool, prompt or resource with a string", null);
        String name = target.holder().get(target.field()).asText();
        resolve(channel, names, caller, target.kind(), name).whenComplete((routed, failure) ->
        {
            if (failure != null)
            {
                McpServlet.end(async, failure);
                return;
            }
            target.holder().put(target.field(), routed.name());
            McpConfig.Server server = members.server(routed.member());
            try
            {
                if (!"tools/call".equals(rewritten.path("method").asText()))
                {
                    send(async, channel, names, server, rewritten, true);
                    return;
                }
                McpServlet.whenAdmitted(async, gate.admit(request, server, caller, JsonRpc.parse(rewritten.toString())),
                    () -> send(async, channel, names, server, rewritten, true));
            }
            catch (RuntimeException x)
            {
                McpServlet.end(async, x);
            }
        });
    }

    private static Target target(ObjectNode message)
    {
        String method = message.path("method").asText();
        JsonNode params = message.path("params");
        if (!(params instanceof ObjectNode object))
            return null;
        Target target = switch (method)
        {
            case "tools/call" -> new Target(object, "name", ListKind.TOOLS);
            case "prompts/get" -> new Target(object, "name", ListKind.PROMPTS);
            case "resources/read", "resources/subscribe", "resources/unsubscribe" -> new Target(object, "uri", ListKind.RESOURCES);
            case "completion/complete" -> object.path("ref") instanceof ObjectNode ref
                ? "ref/prompt".equals(ref.path("type").asText()) ? new Target(ref, "name", ListKind.PROMPTS) : new Target(ref, "uri", ListKind.TEMPLATES)
                : null;
            default -> null;
        };
        return target != null && target.holder().path(target.field()).isTextual() ? target : null;
    }

    /**
     * The member a name goes to: the one whose prefix begins it; in a federation of one member,
     * that member; else the one member whose list has it.
     */
    private CompletableFuture<FederatedNames.Routed> resolve(MemberChannel channel, FederatedNames names, RequestChecks.Caller caller, ListKind kind, String name)
    {
        var prefixed = names.route(name);
        if (prefixed.isPresent())
            return CompletableFuture.completedFuture(prefixed.get());
        List<String> all = names.federation().servers();
        if (all.size() == 1)
            return CompletableFuture.completedFuture(new FederatedNames.Routed(all.get(0), name));
        // Under always, the federation gave every name and URI it listed a prefix. A look-up lists
        // every member, which a client must not set off with any name or URI it makes up.
        if (names.federation().prefix() == McpFederation.Prefix.ALWAYS)
            return CompletableFuture.failedFuture(noMember(names, name));
        return lists.owners(channel, names, kind, name, caller).thenApply(owners ->
        {
            if (owners.size() == 1)
                return new FederatedNames.Routed(owners.get(0), name);
            if (owners.isEmpty())
                throw noMember(names, name);
            throw new RpcException(HttpStatus.OK_200, JsonRpcErrors.INVALID_PARAMS,
                "Invalid params: several members of federation " + names.federation().name() + " have " + name + ": use the name with its member's prefix", null);
        });
    }

    private static RpcException noMember(FederatedNames names, String name)
    {
        return new RpcException(HttpStatus.OK_200, JsonRpcErrors.INVALID_PARAMS, "Invalid params: no member of federation " + names.federation().name() + " has " + name, null);
    }

    /**
     * Sends a message in the member's session and relays the answer. A member that no longer knows
     * the session (404: restarted) gets a new one and the message once more.
     */
    private void send(AsyncContext async, MemberChannel channel, FederatedNames names, McpConfig.Server server, ObjectNode message, boolean again)
    {
        String member = server.name();
        ObjectNode sent = channel.forMember(message);
        MemberMessages.Answering answering = MemberMessages.Answering.request(sent, message);
        channel.send(server, sent)
            .whenComplete((exchange, failure) ->
            {
                if (failure != null)
                {
                    McpServlet.end(async, FederationMembers.unavailable(channel.federation(), member, failure));
                    return;
                }
                if (exchange.status() == HttpStatus.NOT_FOUND_404 && again && channel.forget(member))
                {
                    exchange.discard();
                    send(async, channel, names, server, message, false);
                    return;
                }
                try
                {
                    relay(async, channel, names, member, answering, exchange);
                }
                catch (IOException | RuntimeException x)
                {
                    exchange.discard();
                    McpServlet.end(async, x);
                }
            });
    }

    /**
     * A member's answer to the client, each message rewritten: an event stream event by event as
     * the member sends them (its progress and requests before the response), JSON whole. An answer
     * that is no JSON-RPC message (an error page), or answers another request than the one routed,
     * makes the member unavailable to the client; in an event stream, what the member may not send
     * the client ({@link MemberMessages}) is dropped.
     */
    private void relay(AsyncContext async, MemberChannel channel, FederatedNames names, String member, MemberMessages.Answering answering,
                       Upstream.Exchange exchange) throws IOException
    {
        if (exchange.status() == HttpStatus.ACCEPTED_202)
        {
            exchange.discard();
            ((HttpServletResponse)async.getResponse()).setStatus(HttpStatus.ACCEPTED_202);
            async.complete();
            return;
        }
        if (exchange.isEventStream() && exchange.status() == HttpStatus.OK_200)
        {
            // The member's event ids, under its prefix and the request they answer, and its retry: a client
            // whose stream the member cuts short resumes it with the federated GET stream (FederatedStream).
            String idPrefix = names.federation().prefixOf(member) + ResumeIds.requestPart(answering);
            ClientStream stream = ClientStream.start(async);
            stream.onClose(() -> exchange.abort(new CancellationException("client stream closed")));
            new EventStreamPump(exchange.content(), workers, event ->
            {
                String id = event.id() == null ? null : idPrefix + event.id();
                if (event.data().isBlank() && id == null && event.retry() == null)
                    return EventStreamPump.HANDED_ON;
                // A priming event (an id, no data) passes as it is; a message the member may not send is dropped.
                String forClient = event.data().isBlank() ? "" : forClient(channel, names, member, event.data(), answering);
                if (forClient == null)
                    return EventStreamPump.HANDED_ON;
                try
                {
                    stream.event(id, null, forClient, event.retry());
                    // A client that does not read holds the member's answer back, not the replica's memory.
                    CompletableFuture<Void> room = new CompletableFuture<>();
                    return stream.ready(() -> room.complete(null)) ? EventStreamPump.HANDED_ON : room;
                }
                catch (IOException x)
                {
                    return CompletableFuture.failedFuture(x);
                }
            }, ended -> stream.close()).start();
            return;
        }
        int status = exchange.status();
        exchange.text(members.maxBodySize()).whenComplete((text, failure) ->
        {
            try
            {
                if (failure != null)
                {
                    McpServlet.end(async, FederationMembers.unavailable(channel.federation(), member, failure));
                    return;
                }
                JsonNode answer = FederationMembers.parse(text);
                boolean message = answer.has("jsonrpc") && (answer.has("result") || answer.has("error"));
                if (!message)
                {
                    McpServlet.end(async, FederationMembers.unavailable(channel.federation(), member, "it answered HTTP " + status));
                    return;
                }
                String forClient = forClient(channel, names, member, text, answering);
                if (forClient == null)
                {
                    McpServlet.end(async, FederationMembers.unavailable(channel.federation(), member, "it answered another request"));
                    return;
                }
                // A JSON-RPC error the member gave its own HTTP status (2026-07-28 servers do) is the
                // answer to the request; a session-era client would read the status as its session's end.
                int answered = channel.keepsStatus() ? status : HttpStatus.OK_200;
                McpServlet.answer(async, new CallGate.Verdict(forClient, answered, 0));
            }
            catch (IOException | RuntimeException x)
            {
                McpServlet.end(async, x);
            }
        });
    }

    /** Null when nothing of the message may reach the client. */
    private static String forClient(MemberChannel channel, FederatedNames names, String member, String message, MemberMessages.Answering answering)
    {
        String rewritten = MemberMessages.toClient(names, member, message, answering);
        return rewritten != null && channel.completesResults() ? MemberMessages.completed(rewritten) : rewritten;
    }

    /**
     * A client's answer to a member's request (sampling, elicitation): to the member whose id it
     * carries, under the member's own id. An answer to no request of a member's is dropped, as a
     * server drops an answer it did not ask for.
     */
    void answer(McpSession federated, FederatedNames names, ObjectNode message)
    {
        var memberId = names.memberRequest(message.get("id"));
        if (memberId.isEmpty() || !names.federation().servers().contains(memberId.get().member()))
            return;
        McpConfig.Server server = members.server(memberId.get().member());
        if (server.transport() == McpConfig.Transport.STATELESS)
            return;
        ObjectNode forMember = message.deepCopy();
        forMember.set("id", memberId.get().id());
        members.find(federated, server.name()).ifPresent(session -> members.send(server, session, forMember).thenAccept(Upstream.Exchange::discard));
    }

    /** A notification of the client's every member with a session gets (a cancellation finds the request it is about). */
    void notifyAll(McpSession federated, FederatedNames names, ObjectNode message)
    {
        for (String member : names.federation().servers())
        {
            McpConfig.Server server = members.server(member);
            if (server.transport() == McpConfig.Transport.STATELESS)
                continue;
            members.find(federated, member).ifPresent(session -> members.send(server, session, message).thenAccept(Upstream.Exchange::discard));
        }
    }
}
