package io.sandgate.mcp;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.McpConfig;
import io.sandgate.config.McpFederation;
import io.sandgate.core.LogText;
import io.sandgate.mcp.federation.FederatedNames;
import io.sandgate.mcp.federation.MemberMessages;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The member sessions of federated sessions, and the messages sent in them. A member session is an
 * ordinary session record of the member's server, so a member is reached exactly as a client of
 * {@code /mcp/{member}/mcp} would reach it: through {@link Upstream} with the member's credential,
 * and through {@link StatelessBridge} when the member speaks only 2026-07-28. Its id is derived
 * from the federated session's and the member's name, so every replica finds it without a mapping.
 */
final class FederationMembers
{
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * How the ids of the requests the gateway makes itself in member sessions (list pages,
     * look-ups, initialize, probes) begin; the client never sees their answers, and may not use
     * such an id itself ({@link #refuseGatewayIds}).
     */
    static final String GATEWAY_REQUEST_ID_PREFIX = "sandgate-federation:";

    private static final Logger LOG = LoggerFactory.getLogger(FederationMembers.class);
    /** The most of a left-out member's reason logged: enough for a member's error message. */
    private static final int MAX_LOGGED_REASON = 512;

    private final McpConfig config;
    private final SessionBus bus;
    private final Upstream upstream;
    private final StatelessBridge bridge;
    private final SseMembers sse;
    private final MeterRegistry registry;

    FederationMembers(McpConfig config, SessionBus bus, Upstream upstream, StatelessBridge bridge, SseMembers sse, MeterRegistry registry)
    {
        this.config = config;
        this.bus = bus;
        this.upstream = upstream;
        this.bridge = bridge;
        this.sse = sse;
        this.registry = registry;
    }

    /**
     * A member left out of an answer (a list, a new session's capabilities, {@code server/discover})
     * because it failed or did not answer in time: the answer goes on without it, and the operator
     * sees it in the log and in {@code sandgate.mcp.federation.members.left.out}.
     *
     * @param what the method whose answer goes without the member
     */
    void leftOut(String federation, String member, String what, Throwable failure)
    {
        leftOut(federation, member, what, unavailable(federation, member, failure).getMessage());
    }

    /** As {@link #leftOut(String, String, String, Throwable)}, for a reason the gateway found itself. */
    void leftOut(String federation, String member, String what, String why)
    {
        // The reason may hold the member's own words (its error message): kept from forging log lines.
        LOG.warn("MCP federation {}: {} left out of {}: {}", federation, member, what, LogText.printable(why, MAX_LOGGED_REASON));
        Counter.builder("sandgate.mcp.federation.members.left.out").description("Answers of a federation given without a member that failed or did not answer in time")
            .tag("federation", federation).tag("member", member).register(registry).increment();
    }

    /**
     * A new id for a request of the gateway's own: each its own, so that a member never sees two
     * requests in flight with one id (parallel list pages of one session), and random, so that no
     * one can name it (a client's cancellation of it).
     */
    static String gatewayRequestId()
    {
        return GATEWAY_REQUEST_ID_PREFIX + UUID.randomUUID();
    }

    /**
     * Refuses a client's message whose id begins as the gateway's own ids do: in a member session
     * it could be taken for one of them.
     */
    static void refuseGatewayIds(JsonRpc rpc)
    {
        for (JsonNode message : rpc.messages())
        {
            JsonNode id = message.get("id");
            if (id != null && id.isTextual() && id.asText().startsWith(GATEWAY_REQUEST_ID_PREFIX))
                throw new RpcException(HttpStatus.OK_200, JsonRpcErrors.INVALID_REQUEST,
                    "Invalid request: ids beginning with " + GATEWAY_REQUEST_ID_PREFIX + " are the gateway's own", null);
        }
    }

    /** The most bytes of a member's answer read whole ({@code mcp.max-body-size}). */
    int maxBodySize()
    {
        return config.maxBodySize();
    }

    /** The member's server. */
    McpConfig.Server server(String member)
    {
        return config.server(member);
    }

    /**
     * The id of a federated session's member session: 128 bits of SHA-256 over both, as
     * unguessable as the federated id, which the client holds and never shares with the members.
     */
    static String memberSessionId(String federatedId, String member)
    {
        try
        {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest((federatedId + "/" + member).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 16);
        }
        catch (NoSuchAlgorithmException x)
        {
            throw new IllegalStateException(x);
        }
    }

    /** The member session, when it is open. */
    Optional<McpSession> find(McpSession federated, String member)
    {
        McpConfig.Server server = server(member);
        return bus.find(memberSessionId(federated.id(), member)).filter(session -> isOpen(server, session));
    }

    /**
     * Whether the member answered its initialize: a revision is recorded then. (A Streamable server
     * need not make sessions: one that gave no {@code Mcp-Session-Id} gets requests without one.)
     */
    private static boolean isOpen(McpConfig.Server server, McpSession session)
    {
        return server.transport() == McpConfig.Transport.STATELESS ? session.client().isPresent() : session.protocolVersion().isPresent();
    }

    /** The member session, opened first when it is not (the member was down at initialize, or it expired). */
    CompletableFuture<McpSession> session(McpSession federated, String member)
    {
        Optional<McpSession> open = find(federated, member);
        if (open.isPresent())
        {
            bus.touch(open.get().id());
            return CompletableFuture.completedFuture(open.get());
        }
        return open(federated, member).thenApply(result -> find(federated, member)
            .orElseThrow(() -> unavailable(federated.server(), member, "it opened no session")));
    }

    /**
     * Opens the member's session with what the client said at {@code initialize} (kept in the
     * federated record); completes with the member's initialize result.
     */
    CompletableFuture<JsonNode> open(McpSession federated, String member)
    {
        McpConfig.Server server = server(member);
        McpSession created = McpSession.create(memberSessionId(federated.id(), member), member, federated.owner());
        bus.create(created);
        ObjectNode initialize = JSON.createObjectNode().put("jsonrpc", "2.0").put("id", gatewayRequestId()).put("method", "initialize");
        ObjectNode params = initialize.putObject("params").put("protocolVersion", federated.protocolVersion().orElse(StatelessBridge.NEWEST_SESSION_REVISION));
        JsonNode client = client(federated);
        params.set("capabilities", client.path("capabilities").isObject() ? client.get("capabilities") : JSON.createObjectNode());
        params.set("clientInfo", client.path("clientInfo").isObject() ? client.get("clientInfo")
            : JSON.createObjectNode().put("name", "sandgate-federation").put("version", "1"));
        if (server.transport() == McpConfig.Transport.STATELESS)
            return bridge.initialize(server, created, initialize).thenApply(answer -> result(List.of(parse(answer)), federated.server(), member));
        if (server.transport() == McpConfig.Transport.SSE)
            return openSse(federated, server, created, initialize);
        Map<String, String> headers = headers(null);
        headers.put(McpHeaders.PROTOCOL_VERSION, params.get("protocolVersion").asText());
        return upstream.exchange(new Upstream.On(server, federated.owner()), HttpMethod.POST, server.url(), headers, initialize.toString())
            .thenCompose(exchange -> messages(exchange).thenApply(messages ->
            {
                String upstreamSession = exchange.header(McpHeaders.SESSION_ID);
                JsonNode result = result(messages, federated.server(), member);
                if (exchange.status() / 100 != 2)
                    throw unavailable(federated.server(), member, "it answered initialize with " + exchange.status());
                McpSession negotiated = created.withProtocolVersion(result.path("protocolVersion").asText(params.get("protocolVersion").asText()));
                McpSession opened = upstreamSession == null ? negotiated : negotiated.withUpstreamSessionId(upstreamSession);
                bus.update(opened);
                ObjectNode initialized = JSON.createObjectNode().put("jsonrpc", "2.0").put("method", "notifications/initialized");
                send(server, opened, initialized).thenAccept(Upstream.Exchange::discard);
                return result;
            }));
    }

    /**
     * A 2024-11-05 member's session: its event stream opened and held on this replica, then its
     * initialize sent, answered in the member session's log.
     */
    private CompletableFuture<JsonNode> openSse(McpSession federated, McpConfig.Server server, McpSession created, ObjectNode initialize)
    {
        String member = server.name();
        FederatedNames names = new FederatedNames(config.federation(federated.server()));
        return sse.open(server, created, federated.id(), message -> MemberMessages.toClient(names, member, message, MemberMessages.Answering.NOTHING))
            .thenCompose(ready -> sse.send(server, ready, initialize).thenCompose(this::messages).thenApply(messages ->
            {
                JsonNode result = result(messages, federated.server(), member);
                McpSession opened = ready.withProtocolVersion(result.path("protocolVersion").asText("2024-11-05"));
                bus.update(opened);
                ObjectNode initialized = JSON.createObjectNode().put("jsonrpc", "2.0").put("method", "notifications/initialized");
                sse.send(server, opened, initialized).thenAccept(Upstream.Exchange::discard);
                return result;
            }))
            .whenComplete((result, failure) ->
            {
                // The member's stream, if open, ends with the record: the next request opens both anew.
                if (failure != null)
                    forget(federated, member);
            });
    }

    /** Sends one message in a member session; the answer is the caller's to read. */
    CompletableFuture<Upstream.Exchange> send(McpConfig.Server server, McpSession session, JsonNode message)
    {
        if (server.transport() == McpConfig.Transport.STATELESS)
            return bridge.send(server, session, message);
        if (server.transport() == McpConfig.Transport.SSE)
            return sse.send(server, session, message);
        Map<String, String> headers = headers(session);
        return upstream.exchange(Upstream.On.session(server, session), HttpMethod.POST, server.url(), headers, message.toString());
    }

    /** The members of a federated session, each in its member session. */
    MemberChannel channel(McpSession federated)
    {
        return new MemberChannel()
        {
            @Override
            public String federation()
            {
                return federated.server();
            }

            @Override
            public CompletableFuture<Upstream.Exchange> send(McpConfig.Server member, ObjectNode message)
            {
                return session(federated, member.name()).thenCompose(session -> FederationMembers.this.send(member, session, message));
            }

            @Override
            public boolean forget(String member)
            {
                FederationMembers.this.forget(federated, member);
                return true;
            }

            @Override
            public boolean keepsStatus()
            {
                return false;
            }
        };
    }

    /** Ends a federated session's member sessions, upstream (best effort) and in the store. */
    void end(McpSession federated, McpFederation federation)
    {
        for (String member : federation.servers())
        {
            McpConfig.Server server = server(member);
            find(federated, member).ifPresent(session ->
            {
                if (server.transport() == McpConfig.Transport.STREAMABLE && session.upstreamSessionId().isPresent())
                {
                    Map<String, String> headers = headers(session);
                    upstream.exchange(Upstream.On.session(server, session), HttpMethod.DELETE, server.url(), headers, null)
                        .whenComplete((exchange, failure) ->
                        {
                            if (exchange != null)
                                exchange.discard();
                        });
                }
            });
            bus.delete(memberSessionId(federated.id(), member));
        }
    }

    /**
     * Opens the member session again, ending the one it had (best effort): what the member says at
     * initialize is asked for anew.
     */
    CompletableFuture<JsonNode> reopen(McpSession federated, String member)
    {
        McpConfig.Server server = server(member);
        // A 2024-11-05 member's session ends with its stream, which the end of the record closes.
        if (server.transport() == McpConfig.Transport.SSE)
            forget(federated, member);
        find(federated, member).filter(session -> session.upstreamSessionId().isPresent()).ifPresent(session ->
            upstream.exchange(Upstream.On.session(server, session), HttpMethod.DELETE, server.url(), headers(session), null)
                .whenComplete((exchange, failure) ->
                {
                    if (exchange != null)
                        exchange.discard();
                }));
        return open(federated, member);
    }

    /** Forgets a member session its upstream no longer knows (404), so that the next request opens another. */
    void forget(McpSession federated, String member)
    {
        bus.delete(memberSessionId(federated.id(), member));
    }

    static Map<String, String> headers(McpSession session)
    {
        Map<String, String> headers = new HashMap<>();
        headers.put(HttpHeader.CONTENT_TYPE.asString(), "application/json");
        headers.put(HttpHeader.ACCEPT.asString(), "application/json, text/event-stream");
        if (session != null)
        {
            headers.put(McpHeaders.SESSION_ID, session.upstreamSessionId().orElse(null));
            headers.put(McpHeaders.PROTOCOL_VERSION, session.protocolVersion().orElse(null));
        }
        return headers;
    }

    /**
     * The messages of a whole answer, JSON or an event stream, read without blocking: at most
     * {@code mcp.max-body-size} bytes, and in {@link FederatedLists#MEMBER_TIMEOUT}, else the
     * exchange is aborted and the member is unavailable. The answers read whole are the gateway's
     * own requests' (lists, initialize), which a member must not make it buffer without end.
     */
    CompletableFuture<List<JsonNode>> messages(Upstream.Exchange exchange)
    {
        boolean events = exchange.isEventStream();
        return exchange.text(config.maxBodySize()).orTimeout(FederatedLists.MEMBER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).thenApply(text ->
        {
            List<JsonNode> messages = new ArrayList<>();
            if (events)
            {
                new SseParser().feed(ByteBuffer.wrap((text + "\n\n").getBytes(StandardCharsets.UTF_8)), event ->
                {
                    if (!event.data().isBlank())
                        messages.add(parse(event.data()));
                });
            }
            else
            {
                JsonRpc.split(text).forEach(message -> messages.add(parse(message)));
            }
            return messages;
        });
    }

    /** The result of the response among an answer's messages; a member's error or no response fails as the member being unavailable. */
    static JsonNode result(List<JsonNode> messages, String federation, String member)
    {
        for (JsonNode message : messages)
        {
            if (message.path("result").isObject())
                return message.get("result");
            if (message.path("error").isObject())
                throw unavailable(federation, member, "it answered an error: " + message.get("error").path("message").asText());
        }
        throw unavailable(federation, member, "it gave no answer");
    }

    static JsonNode parse(String json)
    {
        try
        {
            JsonNode node = JSON.readTree(json);
            return node == null ? JSON.createObjectNode() : node;
        }
        catch (JsonProcessingException x)
        {
            return JSON.createObjectNode();
        }
    }

    private static JsonNode client(McpSession federated)
    {
        return federated.client().map(FederationMembers::parse).orElseGet(JSON::createObjectNode);
    }

    /** A member that could not serve a request: the client hears which (never its address). */
    static GatewayException unavailable(String federation, String member, String why)
    {
        return new RpcException(HttpStatus.OK_200, JsonRpcErrors.TRANSPORT_ERROR,
            "MCP server " + member + " (member of federation " + federation + ") is unavailable: " + why, null);
    }

    /** The same, for a failure of the exchange itself (unreachable, timed out). */
    static GatewayException unavailable(String federation, String member, Throwable failure)
    {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        if (cause instanceof RpcException rpc && rpc.getMessage().contains("(member of federation "))
            return rpc;
        // The client's own limit, not the member's trouble: it hears it as such.
        if (cause instanceof GatewayException refused && refused.status() == HttpStatus.TOO_MANY_REQUESTS_429)
            return refused;
        String why = cause instanceof GatewayException || cause instanceof BoundedText.TooLarge ? cause.getMessage()
            : cause instanceof java.util.concurrent.TimeoutException ? "it did not answer in time" : "it could not be reached";
        return unavailable(federation, member, why);
    }
}
