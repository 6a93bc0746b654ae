package io.sandgate.tracing;

import java.util.concurrent.TimeUnit;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanLimits;
import io.opentelemetry.sdk.trace.SpanProcessor;

/** Tracing on the OpenTelemetry SDK: one tracer provider per gateway, closed with it. */
final class SdkTracing implements Tracing
{
    /** The instrumentation scope of every span the gateway makes. */
    private static final String SCOPE = "io.sandgate";
    private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");

    private final SdkTracerProvider provider;
    private final Tracer tracer;

    SdkTracing(SpanProcessor processor, double sampleRatio, String serviceName)
    {
        Resource resource = Resource.getDefault().merge(Resource.create(Attributes.of(SERVICE_NAME, serviceName)));
        this.provider = SdkTracerProvider.builder()
            .setResource(resource)
            .setSampler(CallerBlindSampler.forGateway(sampleRatio))
            .setSpanLimits(SpanLimits.builder().setMaxAttributeValueLength(TraceAttributes.MAX_VALUE_LENGTH).build())
            .addSpanProcessor(processor)
            .build();
        this.tracer = provider.get(SCOPE);
    }

    @Override
    public Tracer tracer()
    {
        return tracer;
    }

    @Override
    public void close()
    {
        // Bounded: a collector that is down must not hold a stop for long.
        provider.shutdown().join(5, TimeUnit.SECONDS);
    }
}
