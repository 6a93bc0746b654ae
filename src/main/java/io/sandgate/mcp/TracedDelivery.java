package io.sandgate.mcp;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.sandgate.tracing.TraceAttributes;
import io.sandgate.tracing.TraceHeaders;

/**
 * Delivers a session's events to a client stream, each one appended in a trace inside a span of
 * that trace: the POST that caused it may have come in on another replica, and the trace then
 * shows both hops, the POST there and the delivery here, as parent and child. Events appended
 * outside any trace (messages the server starts) are delivered without a span.
 */
final class TracedDelivery implements SessionBus.Listener
{
    /** The span's name: low-cardinality, the session is an attribute. */
    static final String SPAN_NAME = "mcp deliver";

    private final Tracer tracer;
    private final String sessionId;
    private final SessionBus.Listener delivery;

    TracedDelivery(Tracer tracer, String sessionId, SessionBus.Listener delivery)
    {
        this.tracer = tracer;
        this.sessionId = sessionId;
        this.delivery = delivery;
    }

    @Override
    public void onEvent(String eventId, String message)
    {
        delivery.onEvent(eventId, message);
    }

    @Override
    public void onEvent(String eventId, String message, String traceparent)
    {
        if (traceparent == null)
        {
            delivery.onEvent(eventId, message, null);
            return;
        }
        // A consumer of the bus's message, as messaging conventions name the side that processes one.
        Span span = tracer.spanBuilder(SPAN_NAME)
            .setSpanKind(SpanKind.CONSUMER)
            .setParent(TraceHeaders.parent(traceparent))
            .setAttribute(TraceAttributes.FACE, "mcp")
            .setAttribute(TraceAttributes.MCP_SESSION, sessionId)
            .startSpan();
        try
        {
            delivery.onEvent(eventId, message, traceparent);
        }
        catch (RuntimeException x)
        {
            span.setStatus(StatusCode.ERROR);
            throw x;
        }
        finally
        {
            span.end();
        }
    }

    @Override
    public void onEnd()
    {
        delivery.onEnd();
    }

    @Override
    public boolean ready(Runnable whenReady)
    {
        return delivery.ready(whenReady);
    }
}
