package io.sandgate.mcp;

/**
 * Header names of the MCP transports that Jetty's {@code HttpHeader} does not know.
 *
 * @see <a href="https://modelcontextprotocol.io/specification/2025-11-25/basic/transports">MCP transports</a>
 */
final class McpHeaders
{
    /** The session a Streamable HTTP server assigned at {@code initialize}. */
    static final String SESSION_ID = "Mcp-Session-Id";
    /** The negotiated protocol revision, sent on every request after {@code initialize}. */
    static final String PROTOCOL_VERSION = "MCP-Protocol-Version";
    /** 2026-07-28: the request's method, which must match the body's. */
    static final String METHOD = "Mcp-Method";
    /** 2026-07-28: the tool, prompt, resource or task a request is about, which must match the body. */
    static final String NAME = "Mcp-Name";
    /** SSE resumption: the last event id the client saw. */
    static final String LAST_EVENT_ID = "Last-Event-ID";
    /** Tells nginx-style front proxies not to buffer an event stream. */
    static final String X_ACCEL_BUFFERING = "X-Accel-Buffering";

    private McpHeaders()
    {
    }
}
