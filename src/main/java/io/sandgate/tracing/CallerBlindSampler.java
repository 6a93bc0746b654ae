package io.sandgate.tracing;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingResult;

/**
 * Samples a share of traces by a random draw of the gateway's own, whatever the caller says.
 *
 * <p>Browsers and agents are untrusted callers, and both the trace id and the sampled flag of their
 * {@code traceparent} are theirs to choose. Following the flag would let any of them have every
 * request traced (at a multiple of the CPU, and flooding the trace store), or keep its own requests out of
 * the traces. Judging the trace id against the ratio, as the SDK's ratio sampler does, would let
 * it pick ids that always pass. The trace is still continued, sampled or not: the caller's trace
 * id is kept. Spans inside the gateway follow their local parent ({@code Sampler.parentBased}).</p>
 */
final class CallerBlindSampler implements Sampler
{
    private final double ratio;

    CallerBlindSampler(double ratio)
    {
        this.ratio = ratio;
    }

    /** For every span: a local parent decides for its children, any other span is drawn here. */
    static Sampler forGateway(double ratio)
    {
        Sampler drawn = new CallerBlindSampler(ratio);
        return Sampler.parentBasedBuilder(drawn).setRemoteParentSampled(drawn).setRemoteParentNotSampled(drawn).build();
    }

    @Override
    public SamplingResult shouldSample(Context parentContext, String traceId, String name, SpanKind spanKind,
        Attributes attributes, List<LinkData> parentLinks)
    {
        boolean sampled = ratio >= 1.0 || (ratio > 0.0 && ThreadLocalRandom.current().nextDouble() < ratio);
        return sampled ? SamplingResult.recordAndSample() : SamplingResult.drop();
    }

    @Override
    public String getDescription()
    {
        return "CallerBlindSampler{" + ratio + "}";
    }
}
