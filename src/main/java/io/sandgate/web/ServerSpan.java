package io.sandgate.web;

import io.opentelemetry.api.trace.Span;
import jakarta.servlet.ServletRequest;

/**
 * The server span of a servlet request, started and ended by the filter that wraps every request;
 * the face that takes the request names it and adds what it learns (a sandbox, an MCP method, an
 * egress route). Absent when tracing is off, so a face asks once and does nothing more.
 */
public final class ServerSpan
{
    private static final RequestAttribute<Span> ATTRIBUTE = RequestAttribute.of("server-span", Span.class);

    private ServerSpan()
    {
    }

    /** The request's server span, or null when tracing is off. */
    public static Span of(ServletRequest request)
    {
        return ATTRIBUTE.get(request);
    }

    public static void set(ServletRequest request, Span span)
    {
        ATTRIBUTE.set(request, span);
    }
}
