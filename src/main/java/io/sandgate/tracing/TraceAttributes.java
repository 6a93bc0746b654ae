package io.sandgate.tracing;

import io.opentelemetry.api.common.AttributeKey;

/**
 * The attributes the gateway's spans carry: OpenTelemetry's semantic conventions where they name
 * the fact (HTTP, and MCP's
 * <a href="https://github.com/open-telemetry/semantic-conventions-genai/blob/main/docs/gen-ai/mcp.md">conventions</a>),
 * {@code sandgate.*} for the gateway's own. None holds a secret: no cookie, no Authorization, no
 * query string (it may carry a grant), no credential, and paths only as {@code Redactor} writes them.
 */
public final class TraceAttributes
{
    public static final AttributeKey<String> HTTP_METHOD = AttributeKey.stringKey("http.request.method");
    public static final AttributeKey<Long> HTTP_STATUS = AttributeKey.longKey("http.response.status_code");
    /** The face's route template ({@code /vnc/{id}}), never the path itself. */
    public static final AttributeKey<String> HTTP_ROUTE = AttributeKey.stringKey("http.route");
    /** The path, redacted: without its query, with anything shaped like a key replaced. */
    public static final AttributeKey<String> URL_PATH = AttributeKey.stringKey("url.path");
    /** The host a forward went to (the egress target); never its query. */
    public static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");

    /** {@code ingress}, {@code mcp}, {@code egress} or {@code ops}. */
    public static final AttributeKey<String> FACE = AttributeKey.stringKey("sandgate.face");
    public static final AttributeKey<String> SANDBOX_ID = AttributeKey.stringKey("sandgate.sandbox.id");
    /** How ingress found the sandbox: {@code path}, {@code referer}, {@code cookie} or {@code header}. */
    public static final AttributeKey<String> ROUTE_SOURCE = AttributeKey.stringKey("sandgate.ingress.route_source");

    public static final AttributeKey<String> MCP_METHOD = AttributeKey.stringKey("mcp.method.name");
    public static final AttributeKey<String> MCP_SESSION = AttributeKey.stringKey("mcp.session.id");
    public static final AttributeKey<String> MCP_PROTOCOL_VERSION = AttributeKey.stringKey("mcp.protocol.version");
    public static final AttributeKey<String> TOOL_NAME = AttributeKey.stringKey("gen_ai.tool.name");
    public static final AttributeKey<String> JSONRPC_ID = AttributeKey.stringKey("jsonrpc.request.id");
    /** The upstream MCP server, by its name in {@code mcp.servers}. */
    public static final AttributeKey<String> MCP_SERVER = AttributeKey.stringKey("sandgate.mcp.server");

    public static final AttributeKey<String> EGRESS_ROUTE = AttributeKey.stringKey("sandgate.egress.route");
    public static final AttributeKey<String> EGRESS_POOL = AttributeKey.stringKey("sandgate.egress.pool");
    public static final AttributeKey<String> EGRESS_NODE = AttributeKey.stringKey("sandgate.egress.node");
    public static final AttributeKey<String> EGRESS_REGION = AttributeKey.stringKey("sandgate.egress.region");
    /** The attempt's number, from 1. */
    public static final AttributeKey<Long> EGRESS_ATTEMPT = AttributeKey.longKey("sandgate.egress.attempt");
    /** How an attempt ended, as the failure policy judged it ({@code ok}, {@code node_failure}...). */
    public static final AttributeKey<String> EGRESS_OUTCOME = AttributeKey.stringKey("sandgate.egress.outcome");
    /** What the leak scanner made of the exchange: {@code passed} or {@code blocked}; absent on a route that does not scan. */
    public static final AttributeKey<String> LEAK_VERDICT = AttributeKey.stringKey("sandgate.egress.leak.verdict");

    /**
     * Longest attribute value a span keeps (the tracer provider cuts longer ones). Callers choose
     * many of them (a tool name, a JSON-RPC id, a path): unbounded, an agent could park megabytes in
     * every span waiting in the export queue, and in the trace store.
     */
    public static final int MAX_VALUE_LENGTH = 256;
    /** Longest caller-chosen text in a span's name, which no limit of the SDK's covers. */
    public static final int MAX_NAME_PART = 64;

    /** {@code text} as it may go into a span's name: cut to {@link #MAX_NAME_PART} characters. */
    public static String namePart(String text)
    {
        return text.length() <= MAX_NAME_PART ? text : text.substring(0, MAX_NAME_PART) + "...";
    }

    private TraceAttributes()
    {
    }
}
