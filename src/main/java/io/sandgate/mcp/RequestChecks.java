package io.sandgate.mcp;

import java.util.Objects;
import java.util.Set;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.McpConfig;
import io.sandgate.config.McpFederation;
import io.sandgate.core.Digests;
import io.sandgate.mcp.identity.Authenticator;
import io.sandgate.mcp.identity.Principal;
import io.sandgate.mcp.identity.UpstreamCredentials;
import io.sandgate.net.Origins;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;

/**
 * What the MCP face decides about a request before anything of it is relayed: whether its origin
 * may drive the gateway, which server it names, whether it may use the session it names, and
 * whether its client may open one more session or stream. Takes the values the servlet glue read
 * from the request, so a test calls it without a server.
 */
final class RequestChecks
{
    private static final String CREDENTIAL = "credential:";
    private static final String ADDRESS = "address:";

    private final McpConfig config;
    private final SessionBus bus;
    private final ClientInfo clients;
    private final Origins origins;
    private final ClientStreams streams;
    private final Counter sessionsRefused;
    private final Counter foreign;
    private final Authenticator authenticator;
    private final UpstreamCredentials credentials;
    private final ToolPins pins;

    /**
     * @param origins the browser origins the deployment allows ({@code server.public-origins}); the
     *        face adds {@code mcp.allowed-origins}
     * @param streams the client streams this replica holds, whose number per client is capped
     */
    RequestChecks(McpConfig config, SessionBus bus, ClientInfo clients, Origins origins, ClientStreams streams, MeterRegistry registry,
                  Authenticator authenticator, UpstreamCredentials credentials, ToolPins pins)
    {
        this.pins = pins;
        this.authenticator = authenticator;
        this.credentials = credentials;
        this.config = config;
        this.bus = bus;
        this.clients = clients;
        this.origins = origins.and(config.allowedOrigins());
        this.streams = streams;
        this.sessionsRefused = Counter.builder("sandgate.mcp.sessions.refused").description("Sessions refused: their client held too many").register(registry);
        this.foreign = Counter.builder("sandgate.mcp.sessions.foreign").description("Requests naming a session with another client's credential, refused").register(registry);
    }

    /**
     * Who a request comes from, as the checks know a client.
     *
     * @param owner as a session records its owner: the principal a valid token names where the
     *        server authenticates ({@link Principal#owner}); elsewhere a digest of the client's
     *        credential (never the credential itself, which the store must not hold), else its address
     * @param limitKey what the client's sessions and streams are counted by: its address (an IPv6
     *        one by its network), which a client cannot vary at will as it can its credential
     * @param principal who the token names; null where the server is open
     * @param pins the servers' pinned tool definitions; null where none pins
     */
    record Caller(String owner, String limitKey, Principal principal, ToolPins pins)
    {
        Caller
        {
            Objects.requireNonNull(owner, "owner");
            Objects.requireNonNull(limitKey, "limitKey");
        }

        Caller(String owner, String limitKey)
        {
            this(owner, limitKey, null, null);
        }

        /**
         * What the caller may list and call of the server's tools: its tool policy narrowed to the
         * caller's scopes' tools where rules go by scope, and what its pins let through.
         */
        ToolAccess tools(McpConfig.Server server)
        {
            return new ToolAccess(server, server.tools().grantedTo(principal == null ? Set.of() : principal.scopes()), pins);
        }

        /** What the caller's quota is counted by: its principal, else its address (a made-up credential is no one). */
        String quotaKey()
        {
            return principal == null ? limitKey : owner;
        }

        /** The caller as the audit log and the call counters name it. */
        String display()
        {
            return principal == null ? limitKey : principal.display();
        }
    }

    /**
     * The caller a request's values make, once its token is checked where the server wants one;
     * the server's credential for the principal is then at hand too (a token exchange, made here).
     *
     * @param endpoint the endpoint called ({@code mcp}, {@code sse}, {@code message})
     * @param credential the request's {@code Authorization}, null when it has none
     * @param address the client's address, as the gateway trusts it ({@link ClientInfo#clientAddress})
     * @throws GatewayException 401 or 403 with a challenge, for a token the server does not take
     */
    Caller caller(McpConfig.Server server, String endpoint, String credential, String address)
    {
        Principal principal = authenticator.authenticate(server, endpoint, credential).orElse(null);
        if (principal != null)
        {
            credentials.prepare(server, principal, Authenticator.bearer(credential));
            return new Caller(principal.owner(), clients.limitKey(address), principal, pins);
        }
        return caller(credential, address);
    }

    /**
     * The caller of a federation, once its token is checked where the federation wants one; each
     * member's credential for the principal is then at hand too (a token exchange per member that
     * makes one).
     */
    Caller caller(McpFederation federation, String credential, String address)
    {
        Principal principal = authenticator.authenticate(federation.name(), "mcp", credential).orElse(null);
        if (principal == null)
            return caller(credential, address);
        for (String member : federation.servers())
            credentials.prepare(config.server(member), principal, Authenticator.bearer(credential));
        return new Caller(principal.owner(), clients.limitKey(address), principal, pins);
    }

    /** The caller of an open server. */
    Caller caller(String credential, String address)
    {
        return new Caller(credential == null ? ADDRESS + address : CREDENTIAL + Digests.sha256Hex(credential), clients.limitKey(address), null, pins);
    }

    /** The server a request's path names. */
    McpConfig.Server server(String name)
    {
        McpConfig.Server server = config.server(name);
        if (server == null)
            throw GatewayException.notFound("no MCP server named " + name);
        return server;
    }

    /**
     * MCP's transport rules require validating Origin to stop DNS-rebinding pages from driving the
     * gateway: loopback origins, {@code server.public-origins} and {@code mcp.allowed-origins}
     * pass. The request's own Host proves nothing (a rebinding page controls it), so "same origin"
     * is not a reason to accept. Clients that are not browsers send no Origin and pass.
     *
     * @param origin the request's {@code Origin}, null when it has none
     */
    void checkOrigin(String origin)
    {
        if (origin != null && !origins.allows(origin, null))
            throw GatewayException.forbidden("origin " + origin + " is not allowed for MCP: add it to server.public-origins or mcp.allowed-origins");
    }

    /**
     * The session a request names, if the request may use it: it must belong to this server and
     * come with its owner's credential, or, made without one, from its owner's address with none. A
     * session id is a bearer secret that leaks (logs, a shared proxy); bound to the credential or
     * the address that created it, a leaked id alone opens nothing from another sandbox. Another
     * client's session answers as unknown, so that ids cannot be probed.
     *
     * @param id the session id the request names, null when it names none
     */
    McpSession session(String id, McpConfig.Server server, Caller caller)
    {
        return session(id, server.name(), caller);
    }

    /** As {@link #session(String, McpConfig.Server, Caller)}, for a server or federation by name. */
    McpSession session(String id, String server, Caller caller)
    {
        if (!McpSession.isWellFormedId(id))
            throw unknownSession("unknown MCP session");
        McpSession session = bus.find(id).orElseThrow(() -> unknownSession("unknown or ended MCP session"));
        if (!session.server().equals(server))
            throw unknownSession("unknown MCP session");
        if (!session.owner().equals(caller.owner()))
        {
            foreign.increment();
            throw unknownSession("unknown MCP session");
        }
        bus.touch(id);
        return session;
    }

    /**
     * Stores a new session for the caller, unless its address holds
     * {@code mcp.max-sessions-per-client} live ones already, on any replica. Counted by address, not
     * by credential: the gateway does not check credentials, so a client could make up a new one
     * for every session.
     */
    McpSession newSession(McpConfig.Server server, Caller caller)
    {
        return newSession(server.name(), caller);
    }

    /** As {@link #newSession(McpConfig.Server, Caller)}, for a server or federation by name. */
    McpSession newSession(String server, Caller caller)
    {
        McpSession session = McpSession.create(McpSession.newId(), server, caller.owner());
        if (!bus.create(session, caller.limitKey(), config.maxSessionsPerClient()))
        {
            sessionsRefused.increment();
            throw new GatewayException(HttpStatus.TOO_MANY_REQUESTS_429, "too_many_sessions",
                "too many MCP sessions for this client (at most " + config.maxSessionsPerClient() + ", mcp.max-sessions-per-client): end some with DELETE");
        }
        return session;
    }

    /**
     * Takes a place among the caller's streams for the stream its request is about to open, before
     * anything of the request is relayed.
     *
     * @param opened run once the stream has started (the servlet glue stops counting the request
     *        among its client's requests in progress)
     * @throws GatewayException 429 when the caller holds {@code mcp.max-streams-per-client} already
     */
    ClientStreams.Place reserveStream(Caller caller, Runnable opened)
    {
        return streams.reserve(caller.limitKey(), opened);
    }

    /** A session the client may not (or no longer) use: 404, as the transports say for a session that ended. */
    static GatewayException unknownSession(String message)
    {
        return new GatewayException(HttpStatus.NOT_FOUND_404, JsonRpcErrors.UNKNOWN_SESSION, message);
    }

}
