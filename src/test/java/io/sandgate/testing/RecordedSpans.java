package io.sandgate.testing;

import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;

import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.sandgate.tracing.Tracing;
import org.awaitility.Awaitility;

/**
 * The spans a gateway ends, kept in memory for a test to read: give {@link #tracing()} to the
 * gateway ({@link GatewayConfig#tracing}). Every span is exported as it ends, sampled always.
 * Close it after the gateways that use it.
 */
public final class RecordedSpans implements AutoCloseable
{
    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final Tracing tracing = Tracing.sdk(SimpleSpanProcessor.create(exporter), 1.0, "sandgate-test");

    public Tracing tracing()
    {
        return tracing;
    }

    /** The spans ended so far, oldest first. */
    public List<SpanData> ended()
    {
        return exporter.getFinishedSpanItems();
    }

    /** The first span ended that matches, waiting for it a few seconds: spans end after the client has its answer. */
    public SpanData awaitSpan(String what, Predicate<SpanData> match)
    {
        return Awaitility.await().atMost(Duration.ofSeconds(10)).alias(what + " in " + ended())
            .until(() -> ended().stream().filter(match).findFirst().orElse(null), span -> span != null);
    }

    /** Whether {@code child}'s parent is {@code parent}, in one trace. */
    public static boolean isChildOf(SpanData child, SpanData parent)
    {
        return child.getTraceId().equals(parent.getTraceId()) && child.getParentSpanId().equals(parent.getSpanId());
    }

    /** Whether a span is the root of its trace here: no parent, not even a remote one. */
    public static boolean isRoot(SpanData span)
    {
        return !SpanId.isValid(span.getParentSpanId());
    }

    public void clear()
    {
        exporter.reset();
    }

    @Override
    public void close()
    {
        tracing.close();
    }
}
