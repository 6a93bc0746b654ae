package io.sandgate.mcp;

import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.trace.Span;
import io.sandgate.tracing.TraceAttributes;
import io.sandgate.tracing.TraceHeaders;
import io.sandgate.web.ServerSpan;
import jakarta.servlet.http.HttpServletRequest;

/**
 * Servlet glue: what an MCP request's server span says, and the trace context it hands on to the
 * upstream and to the session's log. Each does nothing when tracing is off.
 */
final class McpSpans
{
    private McpSpans()
    {
    }

    /**
     * Names the request's server span after the MCP call it carries, as MCP's semantic conventions
     * name it ({@code tools/call echo}), with the method, the tool and the session. A batch or a
     * response keeps the HTTP name. Does nothing when tracing is off.
     */
    static void describe(HttpServletRequest request, JsonRpc rpc, McpSession session)
    {
        Span span = ServerSpan.of(request);
        if (span == null)
            return;
        if (session != null)
            span.setAttribute(TraceAttributes.MCP_SESSION, session.id());
        String method = rpc.method();
        if (method == null)
            return;
        String tool = "tools/call".equals(method) ? rpc.params().path("name").asText(null) : null;
        // Both are the agent's to choose: the name keeps a bounded start of each.
        span.updateName(TraceAttributes.namePart(method) + (tool == null ? "" : " " + TraceAttributes.namePart(tool)));
        span.setAttribute(TraceAttributes.MCP_METHOD, method);
        if (tool != null)
            span.setAttribute(TraceAttributes.TOOL_NAME, tool);
        JsonNode id = rpc.id();
        if (id != null)
            span.setAttribute(TraceAttributes.JSONRPC_ID, id.asText());
        String version = request.getHeader(McpHeaders.PROTOCOL_VERSION);
        if (version != null)
            span.setAttribute(TraceAttributes.MCP_PROTOCOL_VERSION, version);
    }

    /** The {@code traceparent} naming the request's server span, for what the request causes later; null when tracing is off. */
    static String traceparent(HttpServletRequest request)
    {
        Span span = ServerSpan.of(request);
        return span == null ? null : TraceHeaders.traceparent(span);
    }

    /** Adds the trace headers that make the upstream's handling of a request a child of the request's span. */
    static void addTraceHeaders(HttpServletRequest request, Map<String, String> toUpstream)
    {
        Span span = ServerSpan.of(request);
        if (span != null)
            TraceHeaders.inject(span, toUpstream::put);
    }
}
