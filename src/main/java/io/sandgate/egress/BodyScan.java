package io.sandgate.egress;

import java.nio.ByteBuffer;

import io.sandgate.config.EgressConfig;
import io.sandgate.leak.LeakScanner;
import io.sandgate.web.GatewayException;

/**
 * One body of one egress exchange read through the leak scanner: each chunk goes in, what may be
 * sent on comes out, and on a blocking route a hit stops the exchange. What a route's scanning
 * asks of the headers is said here too, so that the servlet only applies it.
 */
final class BodyScan
{
    /**
     * What a chunk released.
     *
     * @param output the bytes to send on (bytes a secret could still be starting with are held back)
     * @param blocked the error that ends the exchange, or null
     */
    record Step(ByteBuffer output, GatewayException blocked)
    {
    }

    private final LeakGuard leaks;
    private final EgressConfig.Route route;
    private final String direction;
    private final LeakScanner.Stream stream;

    private BodyScan(LeakGuard leaks, EgressConfig.Route route, String direction, LeakScanner.Stream stream)
    {
        this.leaks = leaks;
        this.route = route;
        this.direction = direction;
        this.stream = stream;
    }

    /** The scan of a request body, or null on a route that does not scan. */
    static BodyScan request(LeakGuard leaks, EgressConfig.Route route)
    {
        LeakScanner.Stream stream = leaks.open(route.scan());
        return stream == null ? null : new BodyScan(leaks, route, "request", stream);
    }

    /** The scan of a response body, or null on a route that does not scan responses. */
    static BodyScan response(LeakGuard leaks, EgressConfig.Route route)
    {
        return scansResponses(route) ? new BodyScan(leaks, route, "response", leaks.open(route.scan())) : null;
    }

    /** Whether the route's responses go through the scanner: they must then come uncompressed. */
    static boolean scansResponses(EgressConfig.Route route)
    {
        return route.scanResponses() && route.scan() != EgressConfig.ScanMode.OFF;
    }

    /** Whether the route's request bodies may change length on their way, so that their Content-Length cannot be passed on. */
    static boolean resizesRequests(EgressConfig.Route route)
    {
        return route.scan() == EgressConfig.ScanMode.REDACT;
    }

    /** Whether the route's response bodies may change length on their way. */
    static boolean resizesResponses(EgressConfig.Route route)
    {
        return route.scanResponses() && route.scan() == EgressConfig.ScanMode.REDACT;
    }

    Step feed(ByteBuffer chunk)
    {
        return step(stream.feed(chunk));
    }

    /** The end of the body: the bytes held back go out last, unless they complete a secret. */
    Step finish()
    {
        return step(stream.finish());
    }

    private Step step(LeakScanner.Chunk chunk)
    {
        return new Step(chunk.output(), leaks.onHits(chunk.hits(), route, route.scan(), direction, "body"));
    }
}
