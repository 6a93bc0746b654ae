package io.sandgate.tracing;

import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;

/**
 * W3C Trace Context (<a href="https://www.w3.org/TR/trace-context/">traceparent and tracestate</a>)
 * read from and written to whatever carries it: HTTP headers on every face, and the session bus's
 * messages between replicas. Parsing is the SDK's propagator's, which ignores a malformed header
 * rather than failing the request.
 */
public final class TraceHeaders
{
    public static final String TRACEPARENT = "traceparent";
    public static final String TRACESTATE = "tracestate";

    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();
    private static final TextMapGetter<Function<String, String>> GETTER = new TextMapGetter<>()
    {
        @Override
        public Iterable<String> keys(Function<String, String> carrier)
        {
            return List.of(TRACEPARENT, TRACESTATE);
        }

        @Override
        public String get(Function<String, String> carrier, String key)
        {
            return carrier == null ? null : carrier.apply(key);
        }
    };
    private static final TextMapSetter<BiConsumer<String, String>> SETTER = (carrier, key, value) ->
    {
        if (carrier != null)
            carrier.accept(key, value);
    };

    private TraceHeaders()
    {
    }

    /**
     * The context a caller's trace headers name, or the root context when they name none (or are
     * malformed): a span started in it is the caller's child, or the root of a new trace.
     *
     * @param header a header's value by its name, null when absent
     */
    public static Context parent(Function<String, String> header)
    {
        return W3C.extract(Context.root(), header, GETTER);
    }

    /** The context of a {@code traceparent} value alone (the session bus carries nothing else). */
    public static Context parent(String traceparent)
    {
        return traceparent == null ? Context.root() : parent(name -> TRACEPARENT.equals(name) ? traceparent : null);
    }

    /** Writes the headers that make the next hop a child of {@code span}: traceparent, and tracestate when there is one. */
    public static void inject(Span span, BiConsumer<String, String> header)
    {
        W3C.inject(Context.root().with(span), header, SETTER);
    }

    /** The {@code traceparent} value naming {@code span} as parent, or null for an invalid span context. */
    public static String traceparent(Span span)
    {
        SpanContext context = span.getSpanContext();
        if (!context.isValid())
            return null;
        return "00-" + context.getTraceId() + "-" + context.getSpanId() + "-" + context.getTraceFlags().asHex();
    }
}
