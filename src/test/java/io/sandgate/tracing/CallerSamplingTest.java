package io.sandgate.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A caller's {@code traceparent} continues its trace but does not decide whether the gateway
 * records it: callers are untrusted, and the flag would let one force tracing of every request
 * or hide its own.
 */
class CallerSamplingTest
{
    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private Tracing tracing;

    @AfterEach
    void close()
    {
        tracing.close();
    }

    private Span serverSpan(double ratio, String flags)
    {
        tracing = Tracing.sdk(SimpleSpanProcessor.create(exporter), ratio, "test");
        String traceparent = "00-" + TRACE_ID + "-00f067aa0ba902b7-" + flags;
        return Spans.server(tracing.tracer(), "GET", name -> TraceHeaders.TRACEPARENT.equals(name) ? traceparent : null);
    }

    @Test
    void callerAskingForSampling_isNotRecorded_whenTheGatewaySamplesNothing()
    {
        Span span = serverSpan(0.0, "01");

        assertFalse(span.isRecording());
        assertFalse(span.getSpanContext().isSampled(), "the sandbox is told the trace is not sampled");
        assertEquals(TRACE_ID, span.getSpanContext().getTraceId(), "the caller's trace goes on");
        span.end();
        assertTrue(exporter.getFinishedSpanItems().isEmpty());
    }

    @Test
    void callerAskingNotToBeSampled_isRecorded_whenTheGatewaySamplesEverything()
    {
        Span span = serverSpan(1.0, "00");

        assertTrue(span.isRecording());
        assertEquals(TRACE_ID, span.getSpanContext().getTraceId());
        span.end();
        assertEquals(1, exporter.getFinishedSpanItems().size());
    }

    @Test
    void spansInsideTheGateway_followTheirLocalParent()
    {
        Span server = serverSpan(1.0, "00");
        Span attempt = Spans.child(tracing.tracer(), "attempt", SpanKind.CLIENT, server);

        assertTrue(attempt.isRecording());
        attempt.end();
        server.end();
    }
}
