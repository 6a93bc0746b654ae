package io.sandgate.config;

import java.net.URI;
import java.util.Objects;
import java.util.Optional;

/**
 * OpenTelemetry tracing: off unless a collector is named.
 *
 * @param endpoint the collector's OTLP/HTTP base URL ({@code http://collector:4318}); empty: no spans
 * @param sampleRatio share of requests traced, drawn by the gateway; a caller's sampled flag is not followed
 * @param serviceName the spans' {@code service.name}
 */
public record TracingConfig(Optional<URI> endpoint, double sampleRatio, String serviceName)
{
    public TracingConfig
    {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(serviceName, "serviceName");
    }

    /** Whether spans are made at all. */
    public boolean enabled()
    {
        return endpoint.isPresent();
    }

    /** A collector's base URL, checked: http or https, with a host. The value is not echoed, as it may carry user-info. */
    static URI parseEndpoint(String value)
    {
        URI uri;
        try
        {
            uri = URI.create(value.trim());
        }
        catch (IllegalArgumentException x)
        {
            throw new IllegalArgumentException(ConfigKeys.TRACING_OTLP_ENDPOINT.name() + ": not a URL (expected: http://host:4318 or https://...)");
        }
        if (uri.getHost() == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())))
            throw new IllegalArgumentException(ConfigKeys.TRACING_OTLP_ENDPOINT.name() + ": not an http(s) URL with a host (expected: http://host:4318 or https://...)");
        return uri;
    }
}
