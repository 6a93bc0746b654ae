package io.sandgate.ingress;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which streams a revocation cuts: those whose route no longer stands, and no others, once each. */
class OpenStreamsTest
{
    private final OpenStreams streams = new OpenStreams();
    private final List<String> cut = new ArrayList<>();

    @Test
    void aStreamIsCut_whenItsRouteWasRevokedOrMoved_once() throws Exception
    {
        Route seven = new Route("10.0.0.7", 6080, Optional.of("pod-a"));
        Route eight = new Route("10.0.0.8", 6080, Optional.of("pod-b"));
        streams.add("7", seven, () -> cut.add("7 first"));
        streams.add("7", seven, () -> cut.add("7 second"));
        Runnable forgetEight = streams.add("8", eight, () -> cut.add("8"));
        streams.add("9", Route.of("10.0.0.9", 6080), () -> cut.add("9"));

        Map<String, Route> before = Map.of("7", seven, "8", eight, "9", Route.of("10.0.0.9", 6080));
        streams.cutRevoked(id -> Optional.ofNullable(before.get(id)));
        assertEquals(List.of(), cut, "every route stands");

        Map<String, Route> now = Map.of("7", seven.revokedBefore(Instant.parse("2026-12-02T00:00:00Z")), "8", eight);
        streams.cutRevoked(id -> Optional.ofNullable(now.get(id)));
        streams.cutRevoked(id -> Optional.ofNullable(now.get(id)));
        assertEquals(List.of("7 first", "7 second"), cut.stream().sorted().toList(), "the revoked sandbox's streams, once each; no route known is no verdict");

        forgetEight.run();
        streams.cutRevoked(id -> Optional.of(new Route("10.0.0.80", 6080, Optional.of("pod-c"))));
        assertEquals(List.of("7 first", "7 second", "9"), cut.stream().sorted().toList(), "a stream that ended is not cut; a moved sandbox's is");
        assertEquals(0, streams.size());
    }

    @Test
    void anOperatorsRevocation_cutsTheSandboxsStreamsOnly()
    {
        streams.add("7", Route.of("10.0.0.7", 6080), () -> cut.add("7"));
        streams.add("8", Route.of("10.0.0.8", 6080), () -> cut.add("8"));

        assertEquals(1, streams.cut("7"));
        assertEquals(0, streams.cut("7"));
        assertEquals(List.of("7"), cut);
        assertEquals(1, streams.size());
    }
}
