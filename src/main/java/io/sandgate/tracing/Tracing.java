package io.sandgate.tracing;

import java.net.URI;

import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;

/**
 * Where the gateway's spans go. Built once by the composition root and handed to the faces, never
 * looked up globally: two gateways in one JVM (replicas in a test) trace apart.
 *
 * <p>Off ({@link #OFF}), {@link #tracer()} is null. Every face asks once per request and, on null,
 * skips all span work: no span object, no attribute, no header string is made, so that a gateway
 * without a collector pays one field read per request and nothing more.</p>
 */
public interface Tracing extends AutoCloseable
{
    /** No spans. */
    Tracing OFF = new Tracing()
    {
        @Override
        public Tracer tracer()
        {
            return null;
        }

        @Override
        public void close()
        {
        }
    };

    /** The tracer spans start from, or null when tracing is off. */
    Tracer tracer();

    /** Sends what is still buffered and stops, so that a graceful stop loses no span. */
    @Override
    void close();

    /**
     * Spans batched and sent over OTLP/HTTP (protobuf) with the JDK's HTTP client.
     *
     * @param collector the collector's base URL ({@code http://collector:4318}); spans go to its
     *        {@code /v1/traces}, as the OTLP specification names the path
     */
    static Tracing otlp(URI collector, double sampleRatio, String serviceName)
    {
        OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder().setEndpoint(tracesUrl(collector)).build();
        return sdk(BatchSpanProcessor.builder(exporter).build(), sampleRatio, serviceName);
    }

    /**
     * Spans handed to a processor of the caller's choice (tests give a simple processor in front of
     * an in-memory exporter). Closing the tracing shuts the processor down.
     */
    static Tracing sdk(SpanProcessor processor, double sampleRatio, String serviceName)
    {
        return new SdkTracing(processor, sampleRatio, serviceName);
    }

    /** The signal path of OTLP/HTTP traces under a collector's base URL; a URL that already ends in it is kept. */
    static String tracesUrl(URI collector)
    {
        String url = collector.toString();
        if (url.endsWith("/v1/traces"))
            return url;
        return (url.endsWith("/") ? url.substring(0, url.length() - 1) : url) + "/v1/traces";
    }
}
