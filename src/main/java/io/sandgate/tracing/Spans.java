package io.sandgate.tracing;

import java.util.function.Function;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;

/** Starting and ending the spans every face makes alike; faces call these only when tracing is on. */
public final class Spans
{
    private Spans()
    {
    }

    /**
     * The server span of a request: the child of the caller's span when its trace headers name one,
     * else the root of a new trace.
     *
     * Named by its method until the face that takes it names it better.
     *
     * @param header the request's header values by name
     */
    public static Span server(Tracer tracer, String method, Function<String, String> header)
    {
        return tracer.spanBuilder(TraceAttributes.namePart(method))
            .setSpanKind(SpanKind.SERVER)
            .setParent(TraceHeaders.parent(header))
            .setAttribute(TraceAttributes.HTTP_METHOD, method)
            .startSpan();
    }

    /** A span inside {@code parent}'s trace, as its child. */
    public static Span child(Tracer tracer, String name, SpanKind kind, Span parent)
    {
        return tracer.spanBuilder(name).setSpanKind(kind).setParent(Context.root().with(parent)).startSpan();
    }

    /**
     * Ends a server span with the status the client got. Only a 5xx marks it failed: a 4xx is the
     * client's doing, not the gateway's (HTTP semantic conventions, server spans).
     */
    public static void endServer(Span span, int status)
    {
        span.setAttribute(TraceAttributes.HTTP_STATUS, status);
        if (status >= 500)
            span.setStatus(StatusCode.ERROR);
        span.end();
    }
}
