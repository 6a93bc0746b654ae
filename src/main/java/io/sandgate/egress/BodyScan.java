package io.sandgate.egress;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.sandgate.config.EgressConfig;
import io.sandgate.leak.LeakHit;
import io.sandgate.leak.LeakScanner;
import io.sandgate.web.GatewayException;

/**
 * One body of one egress exchange read through the leak scanner: each chunk goes in, what may be
 * sent on comes out, and on a blocking route a hit stops the exchange. What a route's scanning
 * asks of the headers is said here too, so that the servlet only applies it.
 *
 * <p>A body goes through one to three stages in turn. A request: the route's rules, as its scan
 * mode says, then the secrets the gateway holds (real keys, agents' tokens), read as sent and
 * percent-decoded on every route, whose hits refuse the exchange. A response: the route's rules,
 * and on a route that injects a credential or a request whose placeholders were replaced, those
 * keys, always redacted.</p>
 */
final class BodyScan
{
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    /**
     * What a chunk released.
     *
     * @param output the bytes to send on (bytes a secret could still be starting with are held back)
     * @param blocked the error that ends the exchange, or null
     */
    record Step(ByteBuffer output, GatewayException blocked)
    {
    }

    /** One stream the body goes through, and the mode its hits are handled in. */
    private record Stage(LeakScanner.Stream stream, EgressConfig.ScanMode mode)
    {
    }

    private final LeakGuard leaks;
    private final EgressConfig.Route route;
    private final String direction;
    private final List<Stage> stages;

    private BodyScan(LeakGuard leaks, EgressConfig.Route route, String direction, List<Stage> stages)
    {
        this.leaks = leaks;
        this.route = route;
        this.direction = direction;
        this.stages = List.copyOf(stages);
    }

    /**
     * The scan of a request body, or null when nothing reads it (a route that does not scan, on a
     * gateway that holds no secret). The route's rules come first, so that a redacting route
     * redacts a held key as sent before the held secrets' stage, which cannot redact, sees it.
     */
    static BodyScan request(LeakGuard leaks, EgressConfig.Route route)
    {
        List<Stage> stages = new ArrayList<>(2);
        LeakScanner.Stream rules = leaks.open(route.scan());
        if (rules != null)
            stages.add(new Stage(rules, route.scan()));
        LeakScanner.Stream held = leaks.openHeld();
        if (held != null)
            stages.add(new Stage(held, EgressConfig.ScanMode.BLOCK));
        return stages.isEmpty() ? null : new BodyScan(leaks, route, "request", stages);
    }

    /**
     * The scan of a response body, or null when nothing reads it: the route's rules when it scans
     * responses, then, on a route that injects a credential, the injection's keys, redacted
     * whatever the route's mode. A target may repeat what it was sent (an echo, an error page
     * quoting the query), and the agent must never see the key that replaced its token; looking
     * for a few literals costs one table lookup a byte.
     */
    static BodyScan response(LeakGuard leaks, EgressPlan plan)
    {
        EgressConfig.Route route = plan.route();
        List<Stage> stages = new ArrayList<>(2);
        if (scansResponses(route))
            stages.add(new Stage(leaks.open(route.scan()), route.scan()));
        plan.injection().map(leaks::openInjected).ifPresent(keys -> stages.add(new Stage(keys, EgressConfig.ScanMode.REDACT)));
        plan.placeholders().held().forEach((credential, keys) ->
        {
            LeakScanner.Stream stream = plan.injection().filter(injection -> injection.credential().equals(credential)).isPresent()
                ? null : leaks.openKeys(credential, keys);
            if (stream != null)
                stages.add(new Stage(stream, EgressConfig.ScanMode.REDACT));
        });
        return stages.isEmpty() ? null : new BodyScan(leaks, route, "response", stages);
    }

    /** Whether the route's responses go through its rules. */
    private static boolean scansResponses(EgressConfig.Route route)
    {
        return route.scanResponses() && route.scan() != EgressConfig.ScanMode.OFF;
    }

    /**
     * Whether the exchange's response bodies are read (see {@link #response}): the target is then
     * asked for them uncompressed, and one that compresses all the same is decoded or refused
     * ({@link BodyDecoder}).
     */
    static boolean readsResponses(EgressPlan plan)
    {
        return scansResponses(plan.route()) || plan.sendsKeys();
    }

    /** Whether the route's request bodies may change length on their way, so that their Content-Length cannot be passed on. */
    static boolean resizesRequests(EgressConfig.Route route)
    {
        return route.scan() == EgressConfig.ScanMode.REDACT;
    }

    /** Whether the body may change length on its way, so that its Content-Length cannot be passed on. */
    boolean resizes()
    {
        return stages.stream().anyMatch(stage -> stage.mode() == EgressConfig.ScanMode.REDACT);
    }

    /** Each stage reads what the one before it let through. */
    Step feed(ByteBuffer chunk)
    {
        ByteBuffer data = chunk;
        for (Stage stage : stages)
        {
            LeakScanner.Chunk out = stage.stream().feed(data);
            GatewayException blocked = onHits(stage, out.hits());
            if (blocked != null)
                return new Step(out.output(), blocked);
            data = out.output();
        }
        return new Step(data, null);
    }

    /**
     * The end of the body: the bytes each stage held back go out last, through the stages after
     * it, unless they complete a secret.
     */
    Step finish()
    {
        ByteBuffer data = EMPTY;
        for (Stage stage : stages)
        {
            LeakScanner.Chunk fed = stage.stream().feed(data);
            LeakScanner.Chunk last = stage.stream().finish();
            List<LeakHit> hits = new ArrayList<>(fed.hits());
            hits.addAll(last.hits());
            ByteBuffer released = concat(fed.output(), last.output());
            GatewayException blocked = onHits(stage, hits);
            if (blocked != null)
                return new Step(released, blocked);
            data = released;
        }
        return new Step(data, null);
    }

    /**
     * A request's hits as {@link LeakGuard} judges any request's: a held secret never leaves,
     * whatever the stage's mode. A response's as its stage's mode says: one that only reports has
     * passed its bytes on already.
     */
    private GatewayException onHits(Stage stage, List<LeakHit> hits)
    {
        return direction.equals("request") ? leaks.onRequestBodyHits(hits, route, stage.mode()) : leaks.onHits(hits, route, stage.mode(), direction, "body");
    }

    private static ByteBuffer concat(ByteBuffer first, ByteBuffer second)
    {
        if (!first.hasRemaining())
            return second;
        if (!second.hasRemaining())
            return first;
        ByteBuffer both = ByteBuffer.allocate(first.remaining() + second.remaining());
        both.put(first.duplicate()).put(second.duplicate()).flip();
        return both;
    }
}
