package io.sandgate.mcp;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.McpConfig;
import io.sandgate.mcp.federation.FederatedNames;
import io.sandgate.mcp.federation.MemberMessages;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import org.eclipse.jetty.http.HttpStatus;

/**
 * {@code subscriptions/listen} (2026-07-28) at {@code /mcp/{federation}/mcp}: one listen stream of
 * the client's made of one of each member that speaks that revision. The client gets one
 * {@code notifications/subscriptions/acknowledged} first, what the members acknowledged taken
 * together, then what the members send, each notification tagged with the client's subscription
 * id. The gateway holds to the client's filter itself, whatever a member sends: a member cannot
 * push onto the client a notification type the client did not ask for. The client's stream counts
 * against its streams ({@code mcp.max-streams-per-client}) and gets keepalives, as its other
 * streams do: the members' own keepalives do not reach it.
 */
final class FederatedListen
{
    static final String SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
    private static final String ACKNOWLEDGED = "notifications/subscriptions/acknowledged";
    private static final String RESOURCE_UPDATED = "notifications/resources/updated";
    /** The list changes a filter gates, by the filter's field for each. */
    private static final Map<String, String> GATED = Map.of(
        "notifications/tools/list_changed", "toolsListChanged",
        "notifications/prompts/list_changed", "promptsListChanged",
        "notifications/resources/list_changed", "resourcesListChanged");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final FederationMembers members;
    private final StatelessMembers stateless;
    private final RequestChecks checks;
    private final Executor workers;

    FederatedListen(FederationMembers members, StatelessMembers stateless, RequestChecks checks, Executor workers)
    {
        this.members = members;
        this.stateless = stateless;
        this.checks = checks;
        this.workers = workers;
    }

    /** Serves one {@code subscriptions/listen}; ends the exchange. */
    void listen(HttpServletRequest request, MemberChannel channel, FederatedNames names, RequestChecks.Caller caller, String version, ObjectNode message)
    {
        if (!(message.path("params").path("notifications") instanceof ObjectNode filter))
            throw new RpcException(HttpStatus.OK_200, JsonRpcErrors.INVALID_PARAMS, "Invalid params: 'notifications' is required and must be a SubscriptionFilter", null);
        AsyncContext async = request.getAsyncContext();
        JsonNode id = message.get("id");
        // Before any member hears of it.
        ClientStreams.Place place = checks.reserveStream(caller, McpServlet.streamOpened(request));
        Listen listen = new Listen(async, names, id, filter, place);
        Map<String, CompletableFuture<MemberListen>> opened = new LinkedHashMap<>();
        try
        {
            for (String member : names.federation().servers())
            {
                McpConfig.Server server = members.server(member);
                MemberListen part = listen.part(member);
                // A session-era member has no listen of its own: its list changes reach session clients only.
                opened.put(member, stateless.speaksStateless(server, caller.owner(), version)
                    .thenCompose(speaks -> speaks ? channel.send(server, part.request(message)).thenCompose(part::open) : CompletableFuture.completedFuture(null))
                    .orTimeout(FederatedLists.MEMBER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .exceptionally(failure ->
                    {
                        part.abort();
                        members.leftOut(names.federation().name(), member, "subscriptions/listen", failure);
                        return null;
                    }));
            }
        }
        catch (RuntimeException x)
        {
            // The place is given back with whatever was opened: the request ends here.
            listen.abortAll();
            place.cancel();
            throw x;
        }
        CompletableFuture.allOf(opened.values().toArray(CompletableFuture[]::new)).whenComplete((ignored, failure) ->
        {
            try
            {
                List<MemberListen> parts = new ArrayList<>();
                opened.values().forEach(part -> parts.add(part.join()));
                listen.start(parts.stream().filter(part -> part != null && part.acknowledged != null).toList(), parts);
            }
            catch (IOException | RuntimeException x)
            {
                listen.abortAll();
                place.cancel();
                McpServlet.end(async, x);
            }
        });
    }

    /** The client's listen stream and the members' behind it. */
    private final class Listen
    {
        private final AsyncContext async;
        private final FederatedNames names;
        private final JsonNode id;
        private final ObjectNode filter;
        private final ClientStreams.Place place;
        private final List<MemberListen> all = new ArrayList<>();
        /** Completes with the client's stream once the acknowledgement is on it: members' notifications wait for it. */
        private final CompletableFuture<ClientStream> started = new CompletableFuture<>();
        /** The member streams acknowledged and not ended, plus one held until the client's stream has begun. */
        private final AtomicInteger streaming = new AtomicInteger(1);
        private final AtomicBoolean graceful = new AtomicBoolean();

        Listen(AsyncContext async, FederatedNames names, JsonNode id, ObjectNode filter, ClientStreams.Place place)
        {
            this.async = async;
            this.names = names;
            this.id = id;
            this.filter = filter;
            this.place = place;
        }

        synchronized MemberListen part(String member)
        {
            MemberListen part = new MemberListen(this, member);
            all.add(part);
            return part;
        }

        synchronized void abortAll()
        {
            all.forEach(MemberListen::abort);
            started.completeExceptionally(new CancellationException("listen ended"));
        }

        /**
         * Answers the client: with one acknowledgement of what the members acknowledged; or, when no
         * member listens, with the first member's own answer (a federation of one member answers as
         * it does), else as a method the federation cannot serve.
         */
        void start(List<MemberListen> listening, List<MemberListen> parts) throws IOException
        {
            if (listening.isEmpty())
            {
                for (MemberListen part : parts)
                {
                    if (part != null && part.answer != null)
                    {
                        place.cancel();
                        McpServlet.answer(async, new CallGate.Verdict(part.answer, part.status, 0));
                        return;
                    }
                }
                throw new RpcException(HttpStatus.NOT_FOUND_404, JsonRpcErrors.METHOD_NOT_FOUND,
                    "Method not found: no member of federation " + names.federation().name() + " serves subscriptions/listen", null);
            }
            ClientStream stream = ClientStream.start(async);
            place.open(stream);
            stream.onClose(this::abortAll);
            ObjectNode ack = JSON.createObjectNode().put("jsonrpc", "2.0").put("method", ACKNOWLEDGED);
            ObjectNode params = ack.putObject("params");
            params.set("notifications", acknowledged(listening));
            params.putObject("_meta").set(SUBSCRIPTION_ID, id);
            stream.event(null, null, ack.toString());
            started.complete(stream);
            release();
        }

        /**
         * What the members acknowledged, together: a change type any of them honours, the client's
         * URIs any of them took; never more than the client asked for, whatever a member says.
         */
        private ObjectNode acknowledged(List<MemberListen> listening)
        {
            ObjectNode honoured = JSON.createObjectNode();
            Set<String> uris = new LinkedHashSet<>();
            for (MemberListen part : listening)
            {
                for (String field : GATED.values())
                {
                    if (part.acknowledged.path(field).asBoolean(false) && filter.path(field).asBoolean(false))
                        honoured.put(field, true);
                }
                part.acknowledged.path("resourceSubscriptions").forEach(uri ->
                {
                    String original = part.uris.get(uri.asText());
                    if (original != null)
                        uris.add(original);
                });
            }
            if (!uris.isEmpty())
            {
                ArrayNode list = honoured.putArray("resourceSubscriptions");
                uris.forEach(list::add);
            }
            return honoured;
        }

        /** A member's stream ended; the client's ends with the last, with the listen's result when a member ended its own so. */
        void ended(boolean memberGraceful)
        {
            if (memberGraceful)
                graceful.set(true);
            release();
        }

        private void release()
        {
            if (streaming.decrementAndGet() != 0)
                return;
            started.thenAccept(stream ->
            {
                if (graceful.get())
                {
                    ObjectNode result = JSON.createObjectNode().put("jsonrpc", "2.0");
                    result.set("id", id);
                    result.putObject("result").put("resultType", "complete").putObject("_meta").set(SUBSCRIPTION_ID, id);
                    try
                    {
                        stream.event(null, null, result.toString());
                    }
                    catch (IOException x)
                    {
                        // The client is gone already.
                    }
                }
                stream.close();
            });
        }

        /**
         * A member's notification as the client gets it, or null when the client did not ask for
         * it: a list change of a type outside the filter, an update of a resource the client did
         * not name to this member, anything that is not a notification.
         */
        String forClient(MemberListen part, JsonNode message)
        {
            if (!(message instanceof ObjectNode notification) || !message.path("method").isTextual() || message.has("id"))
                return null;
            String method = message.get("method").asText();
            if (ACKNOWLEDGED.equals(method) || GATED.containsKey(method) && !filter.path(GATED.get(method)).asBoolean(false))
                return null;
            ObjectNode params = notification.path("params") instanceof ObjectNode given ? given : notification.putObject("params");
            if (RESOURCE_UPDATED.equals(method))
            {
                // Under the URI the client named it by.
                String original = part.uris.get(params.path("uri").asText());
                if (original == null)
                    return null;
                params.put("uri", original);
            }
            (params.path("_meta") instanceof ObjectNode meta ? meta : params.putObject("_meta")).set(SUBSCRIPTION_ID, id);
            return RESOURCE_UPDATED.equals(method) ? notification.toString()
                : MemberMessages.toClient(names, part.member, notification.toString(), MemberMessages.Answering.NOTHING);
        }
    }

    /** One member's listen stream behind the client's. */
    private final class MemberListen
    {
        private final Listen listen;
        private final String member;
        /** The URIs of the client's filter this member was asked for, as the member knows them, to the client's. */
        private final Map<String, String> uris = new HashMap<>();
        private volatile Upstream.Exchange exchange;
        private volatile boolean aborted;
        /** What the member acknowledged: the filter it honours; null until it has. */
        private volatile JsonNode acknowledged;
        /** The member's answer when it gave no stream, and its status. */
        private String answer;
        private int status;
        private boolean graceful;

        MemberListen(Listen listen, String member)
        {
            this.listen = listen;
            this.member = member;
        }

        /** The client's listen as this member gets it: the resources the client named that are its, without its prefix. */
        ObjectNode request(ObjectNode message)
        {
            ObjectNode copy = message.deepCopy();
            ObjectNode filter = (ObjectNode)copy.get("params").get("notifications");
            if (filter.path("resourceSubscriptions") instanceof ArrayNode named)
            {
                ArrayNode own = filter.putArray("resourceSubscriptions");
                for (JsonNode uri : named)
                {
                    String original = uri.asText();
                    var routed = listen.names.route(original);
                    // Without a prefix, a URI is for whichever member has it.
                    String bare = routed.isEmpty() ? original : routed.get().member().equals(member) ? routed.get().name() : null;
                    if (bare != null)
                    {
                        uris.put(bare, original);
                        own.add(bare);
                    }
                }
            }
            return copy;
        }

        /** Reads the member's answer up to its acknowledgement; completes with this part once it is there, or the member answered otherwise. */
        CompletableFuture<MemberListen> open(Upstream.Exchange exchange)
        {
            this.exchange = exchange;
            if (aborted)
                abort();
            CompletableFuture<MemberListen> acked = new CompletableFuture<>();
            if (exchange.status() != HttpStatus.OK_200 || !exchange.isEventStream())
            {
                int answered = exchange.status();
                return exchange.text().thenApply(text ->
                {
                    JsonNode parsed = FederationMembers.parse(text);
                    if (!parsed.has("jsonrpc") || !(parsed.has("result") || parsed.has("error")))
                        throw FederationMembers.unavailable(listen.names.federation().name(), member, "it answered HTTP " + answered);
                    // A JSON body answers the listen request it was sent for, whatever id it names.
                    answer = MemberMessages.toClient(listen.names, member, text, new MemberMessages.Answering(parsed.get("id"), null));
                    status = answered;
                    return this;
                });
            }
            new EventStreamPump(exchange.content(), workers, event ->
            {
                if (event.data().isBlank())
                    return EventStreamPump.HANDED_ON;
                JsonNode message = FederationMembers.parse(event.data());
                if (acknowledged == null)
                {
                    if (!ACKNOWLEDGED.equals(message.path("method").asText()))
                        return CompletableFuture.failedFuture(new IllegalStateException("the listen stream did not begin with its acknowledgement"));
                    acknowledged = message.path("params").path("notifications");
                    listen.streaming.incrementAndGet();
                    acked.complete(this);
                    return EventStreamPump.HANDED_ON;
                }
                if (message.has("id") && message.has("result"))
                {
                    graceful = true;
                    return EventStreamPump.HANDED_ON;
                }
                String forClient = listen.forClient(this, message);
                if (forClient == null)
                    return EventStreamPump.HANDED_ON;
                // The client's stream begins once every member has acknowledged.
                return listen.started.thenCompose(stream -> deliver(stream, forClient));
            }, failure ->
            {
                acked.completeExceptionally(failure != null ? failure : new IllegalStateException("the listen stream ended before its acknowledgement"));
                if (acknowledged != null)
                    listen.ended(graceful);
            }).start();
            return acked;
        }

        private CompletableFuture<Void> deliver(ClientStream stream, String message)
        {
            try
            {
                stream.event(null, null, message);
                // A client that does not read holds the member's stream back, not the replica's memory.
                CompletableFuture<Void> room = new CompletableFuture<>();
                return stream.ready(() -> room.complete(null)) ? CompletableFuture.completedFuture(null) : room;
            }
            catch (IOException x)
            {
                return CompletableFuture.failedFuture(x);
            }
        }

        void abort()
        {
            aborted = true;
            Upstream.Exchange held = exchange;
            if (held != null)
                held.abort(new CancellationException("listen ended"));
        }
    }
}
