package io.sandgate.web;

import java.util.regex.Pattern;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import org.slf4j.MDC;

/**
 * What is known of the request a thread is serving, for every log line written meanwhile (the
 * JSON format writes it under {@code mdc}; the text format leaves it out). The servlet glue puts
 * each field where the face learns it; the access-log filter, which wraps every request, clears
 * them all when the request leaves the thread.
 */
public final class LogContext
{
    public enum Field
    {
        FACE("face"), SANDBOX("sandbox"), MCP_SERVER("mcpServer"), MCP_SESSION("mcpSession"), ROUTE("route"), NODE("node"), TRACE("traceId");

        private final String key;

        Field(String key)
        {
            this.key = key;
        }

        /** The name in the log line. */
        public String key()
        {
            return key;
        }
    }

    /** W3C Trace Context: version, 32 hex trace id, 16 hex parent id, flags. */
    private static final Pattern TRACEPARENT = Pattern.compile("[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}");

    private LogContext()
    {
    }

    /** Notes a field; a null value leaves it out. */
    public static void put(Field field, String value)
    {
        if (value != null)
            MDC.put(field.key, value);
    }

    /**
     * Notes the trace id of a {@code traceparent} header; anything else the client sent is ignored,
     * so that no header text of its choosing reaches the log.
     */
    public static void trace(String traceparent)
    {
        if (traceparent == null)
            return;
        var matcher = TRACEPARENT.matcher(traceparent.strip());
        if (matcher.matches())
            MDC.put(Field.TRACE.key, matcher.group(1));
    }

    /**
     * Notes the trace id of the request's span, when tracing is on: the span's trace is the
     * caller's when it sent a valid {@code traceparent}, else a new one, and the log lines name the
     * same trace as the span either way.
     */
    public static void trace(Span span)
    {
        SpanContext context = span.getSpanContext();
        if (context.isValid())
            MDC.put(Field.TRACE.key, context.getTraceId());
    }

    /** Forgets every field: the thread goes back to the pool. */
    public static void clear()
    {
        for (Field field : Field.values())
            MDC.remove(field.key);
    }
}
