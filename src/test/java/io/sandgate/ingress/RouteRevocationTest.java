package io.sandgate.ingress;

import java.time.Instant;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The revocation stamp a route value carries to every replica. */
class RouteRevocationTest
{
    private static final Instant T0 = Instant.parse("2025-03-01T10:00:00.250Z");

    @Test
    void theStampRoundTripsThroughTheStoredJson_andPlainValuesStayPlain()
    {
        Route stamped = new Route("10.0.0.7", 6080, Optional.of("uid-a")).revokedBefore(T0);
        assertEquals("{\"target\":\"10.0.0.7:6080\",\"generation\":\"uid-a\",\"revokedBefore\":\"2025-03-01T10:00:00.250Z\"}", stamped.format());
        assertEquals(stamped, Route.parse(stamped.format()));

        Route withoutGeneration = Route.of("10.0.0.7", 6080).revokedBefore(T0);
        assertEquals(withoutGeneration, Route.parse(withoutGeneration.format()));
        assertEquals("10.0.0.7:6080", Route.of("10.0.0.7", 6080).format(), "other clients' plain host:port keeps working");
        assertEquals(Optional.empty(), Route.parse("10.0.0.7:6080").revokedBefore());
    }

    @Test
    void aStampOnlyMovesForward()
    {
        Route stamped = Route.of("h", 1).revokedBefore(T0);
        assertSame(stamped, stamped.revokedBefore(T0.minusSeconds(5)));
        assertEquals(Optional.of(T0.plusSeconds(5)), stamped.revokedBefore(T0.plusSeconds(5)).revokedBefore());
    }

    @Test
    void aRouteReplacingAnotherKeepsItsStamp()
    {
        Route previous = new Route("10.0.0.7", 6080, Optional.of("uid-a")).revokedBefore(T0);
        Route next = new Route("10.0.0.8", 6080, Optional.of("uid-b"));
        assertEquals(Optional.of(T0), next.keepingRevocationOf(Optional.of(previous)).revokedBefore());
        assertSame(next, next.keepingRevocationOf(Optional.empty()));
        assertSame(next, next.keepingRevocationOf(Optional.of(Route.of("h", 1))));
    }

    @Test
    void aStampThatIsNoInstantIsRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> Route.parse("{\"target\":\"h:1\",\"revokedBefore\":\"yesterday\"}"));
    }
}
