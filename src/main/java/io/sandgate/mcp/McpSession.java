package io.sandgate.mcp;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;

import io.sandgate.core.Ascii;

/**
 * What every replica must know of an MCP session to serve any of its requests.
 *
 * @param id the session id the client holds (never the upstream's)
 * @param server name of the upstream server
 * @param upstreamSessionId the upstream's {@code Mcp-Session-Id}, once it has given one (streamable upstreams)
 * @param upstreamMessageUrl where POSTs go (SSE upstreams: the URL its endpoint event announced)
 * @param protocolVersion the protocol version negotiated by initialize, once known
 * @param owner who created it: {@code credential:<digest of its Authorization>}, or {@code address:<client address>}
 *        for a client that sent none; only its owner's credential may use it
 * @param client what the client said of itself at {@code initialize} ({@code {"capabilities":...,"clientInfo":...}}),
 *        kept where the gateway speaks for it to a stateless upstream
 */
public record McpSession(String id, String server, Optional<String> upstreamSessionId, Optional<String> upstreamMessageUrl,
                         Optional<String> protocolVersion, String owner, Optional<String> client)
{
    private static final SecureRandom RANDOM = new SecureRandom();

    public McpSession
    {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(upstreamSessionId, "upstreamSessionId");
        Objects.requireNonNull(upstreamMessageUrl, "upstreamMessageUrl");
        Objects.requireNonNull(protocolVersion, "protocolVersion");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(client, "client");
    }

    /** Whether an id has the form the gateway gives session ids (32 hex digits); anything else names no session. */
    public static boolean isWellFormedId(String id)
    {
        return id != null && Ascii.LOWER_HEX.matches(id, 32, 32);
    }

    /** A new id of the form {@link #isWellFormedId} checks: 128 random bits, which no one can guess. */
    static String newId()
    {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    public static McpSession create(String id, String server, String owner)
    {
        return new McpSession(id, server, Optional.empty(), Optional.empty(), Optional.empty(), owner, Optional.empty());
    }

    public McpSession withUpstreamSessionId(String upstream)
    {
        return new McpSession(id, server, Optional.of(upstream), upstreamMessageUrl, protocolVersion, owner, client);
    }

    public McpSession withUpstreamMessageUrl(String url)
    {
        return new McpSession(id, server, upstreamSessionId, Optional.of(url), protocolVersion, owner, client);
    }

    public McpSession withProtocolVersion(String version)
    {
        return new McpSession(id, server, upstreamSessionId, upstreamMessageUrl, Optional.of(version), owner, client);
    }

    public McpSession withClient(String json)
    {
        return new McpSession(id, server, upstreamSessionId, upstreamMessageUrl, protocolVersion, owner, Optional.of(json));
    }
}
