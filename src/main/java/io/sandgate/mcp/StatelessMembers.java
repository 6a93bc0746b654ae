package io.sandgate.mcp;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.McpConfig;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The members of a federation for 2026-07-28 requests. A member that speaks that revision (a
 * {@code stateless} one, or a {@code streamable} one whose {@code server/discover} offers it) gets
 * each request as its own 2026-07-28 request. A member of the session era only is reached in a
 * member session the gateway holds for the caller, under a session record of the federation that
 * every replica derives from the caller and the federation (counted against
 * {@code mcp.max-sessions-per-client}, expiring after {@code mcp.session-ttl} unused), its results
 * given the {@code resultType} 2026-07-28 clients require.
 */
final class StatelessMembers
{
    /** How long what a member's {@code server/discover} said is believed before it is asked again. */
    private static final Duration ERA_TTL = Duration.ofMinutes(5);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String META_PREFIX = "io.modelcontextprotocol/";
    /**
     * How the ids and progress tokens of the caller's requests begin as members get them: the
     * member sessions held for a caller are shared by every caller of its owner (one address, one
     * credential), whose own ids may be alike.
     */
    private static final String CALL_ID_PREFIX = "sandgate-call:";

    private record Era(boolean stateless, Instant until)
    {
    }

    private final McpConfig config;
    private final SessionBus bus;
    private final Upstream upstream;
    private final FederationMembers members;
    private final Clock clock;
    /** By member: a replica's own knowledge, asked again after {@link #ERA_TTL}; nothing any other replica needs. */
    private final Map<String, Era> eras = new ConcurrentHashMap<>();

    StatelessMembers(McpConfig config, SessionBus bus, Upstream upstream, FederationMembers members, Clock clock)
    {
        this.config = config;
        this.bus = bus;
        this.upstream = upstream;
        this.members = members;
        this.clock = clock;
    }

    /**
     * The members for one 2026-07-28 request.
     *
     * @param request the client's message: its {@code _meta} says what the client is, should a member session be opened for it
     * @param accept the client's {@code Accept}, or null
     * @param toolHeaders the client's {@code Mcp-Param-*} headers, which carry a tool's arguments and
     *        which a member checks against the body as the gateway relays it (the prefix is not in them)
     */
    MemberChannel channel(String federation, RequestChecks.Caller caller, String version, String accept, Map<String, String> toolHeaders, JsonNode request)
    {
        return new MemberChannel()
        {
            private McpSession holder;

            @Override
            public String federation()
            {
                return federation;
            }

            @Override
            public CompletableFuture<Upstream.Exchange> send(McpConfig.Server member, ObjectNode message)
            {
                return speaksStateless(member, caller.owner(), version).thenCompose(stateless ->
                {
                    if (stateless)
                        return sendStateless(member, caller.owner(), version, accept, toolHeaders, message);
                    return members.channel(holder()).send(member, sessionEra(message));
                });
            }

            @Override
            public ObjectNode forMember(ObjectNode message)
            {
                ObjectNode copy = message.deepCopy();
                if (copy.hasNonNull("id"))
                    copy.put("id", CALL_ID_PREFIX + UUID.randomUUID());
                if (copy.path("params").path("_meta") instanceof ObjectNode meta && meta.hasNonNull("progressToken"))
                    meta.put("progressToken", CALL_ID_PREFIX + UUID.randomUUID());
                return copy;
            }

            private synchronized McpSession holder()
            {
                if (holder == null)
                    holder = StatelessMembers.this.holder(federation, caller, request);
                return holder;
            }

            @Override
            public boolean forget(String member)
            {
                Era era = eras.get(member);
                if (era == null || era.stateless())
                    return false;
                members.forget(holder(), member);
                return true;
            }

            @Override
            public boolean keepsStatus()
            {
                return true;
            }

            @Override
            public boolean completesResults()
            {
                return true;
            }
        };
    }

    private CompletableFuture<Upstream.Exchange> sendStateless(McpConfig.Server member, String owner, String version, String accept,
                                                               Map<String, String> toolHeaders, ObjectNode message)
    {
        Map<String, String> headers = FederationMembers.headers(null);
        headers.putAll(toolHeaders);
        if (accept != null)
            headers.put(HttpHeader.ACCEPT.asString(), accept);
        String method = message.path("method").asText();
        headers.put(McpHeaders.PROTOCOL_VERSION, version);
        headers.put(McpHeaders.METHOD, method);
        headers.put(McpHeaders.NAME, StatelessTransport.name(method, message.path("params")));
        return upstream.exchange(new Upstream.On(member, owner), HttpMethod.POST, member.url(), headers, message.toString());
    }

    /** Whether the member speaks 2026-07-28: {@code stateless} ones do; a {@code streamable} one is asked with {@code server/discover}. */
    CompletableFuture<Boolean> speaksStateless(McpConfig.Server member, String owner, String version)
    {
        if (member.transport() == McpConfig.Transport.STATELESS)
            return CompletableFuture.completedFuture(true);
        if (member.transport() == McpConfig.Transport.SSE)
            return CompletableFuture.completedFuture(false);
        Era known = eras.get(member.name());
        if (known != null && known.until().isAfter(clock.instant()))
            return CompletableFuture.completedFuture(known.stateless());
        ObjectNode discover = JSON.createObjectNode().put("jsonrpc", "2.0").put("id", FederationMembers.gatewayRequestId()).put("method", "server/discover");
        ObjectNode meta = discover.putObject("params").putObject("_meta");
        meta.put(StatelessTransport.META_PROTOCOL_VERSION, version);
        meta.putObject(StatelessTransport.META_CLIENT_CAPABILITIES);
        return sendStateless(member, owner, version, null, Map.of(), discover)
            .thenCompose(members::messages)
            .thenApply(messages ->
            {
                boolean stateless = messages.stream().anyMatch(message -> message.path("result").path("supportedVersions").toString().contains("\"" + version + "\""));
                eras.put(member.name(), new Era(stateless, clock.instant().plus(ERA_TTL)));
                return stateless;
            });
    }

    /**
     * What a member says to {@code server/discover}: its own answer where it speaks 2026-07-28; for
     * a session-era member, the capabilities it gives at initialize, its member session for the
     * caller opened anew to ask.
     */
    CompletableFuture<JsonNode> discover(String federation, RequestChecks.Caller caller, String version, String accept, McpConfig.Server member, ObjectNode request)
    {
        return speaksStateless(member, caller.owner(), version).thenCompose(stateless -> stateless
            ? sendStateless(member, caller.owner(), version, accept, Map.of(), request)
                .thenCompose(members::messages)
                .thenApply(messages -> FederationMembers.result(messages, federation, member.name()))
            : members.reopen(holder(federation, caller, request), member.name()).thenApply(initialized ->
            {
                ObjectNode result = JSON.createObjectNode();
                result.set("capabilities", initialized.path("capabilities"));
                if (initialized.path("serverInfo").isObject())
                    result.putObject("_meta").set("io.modelcontextprotocol/serverInfo", initialized.get("serverInfo"));
                return result;
            }));
    }

    /** The session record a caller's member sessions hang from, made the first time. */
    private McpSession holder(String federation, RequestChecks.Caller caller, JsonNode request)
    {
        String id = FederationMembers.memberSessionId("2026-07-28/" + caller.owner(), federation);
        McpSession found = bus.find(id).filter(session -> session.owner().equals(caller.owner())).orElse(null);
        if (found != null)
        {
            bus.touch(id);
            return found;
        }
        JsonNode meta = request.path("params").path("_meta");
        ObjectNode said = JSON.createObjectNode();
        said.set("capabilities", meta.path(StatelessTransport.META_CLIENT_CAPABILITIES).isObject() ? meta.get(StatelessTransport.META_CLIENT_CAPABILITIES) : JSON.createObjectNode());
        if (meta.path(StatelessBridge.META_CLIENT_INFO).isObject())
            said.set("clientInfo", meta.get(StatelessBridge.META_CLIENT_INFO));
        McpSession holder = McpSession.create(id, federation, caller.owner()).withProtocolVersion(StatelessBridge.NEWEST_SESSION_REVISION)
            .withClient(StatelessBridge.clientSaid(said));
        if (!bus.create(holder, caller.limitKey(), config.maxSessionsPerClient()))
            throw new GatewayException(HttpStatus.TOO_MANY_REQUESTS_429, "too_many_sessions",
                "too many MCP sessions for this client (at most " + config.maxSessionsPerClient() + ", mcp.max-sessions-per-client)");
        return holder;
    }

    /** A 2026-07-28 message as a session-era member reads it: without that revision's {@code _meta} keys. */
    private static ObjectNode sessionEra(ObjectNode message)
    {
        ObjectNode copy = message.deepCopy();
        if (copy.path("params").path("_meta") instanceof ObjectNode meta)
        {
            meta.properties().removeIf(entry -> entry.getKey().startsWith(META_PREFIX));
            if (meta.isEmpty())
                ((ObjectNode)copy.get("params")).remove("_meta");
        }
        return copy;
    }
}
