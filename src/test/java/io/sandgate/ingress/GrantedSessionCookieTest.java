package io.sandgate.ingress;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

import io.sandgate.testing.MutableClock;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The session cookie of signed access: entries a grant opened, each ending when it was set to, never later. */
class GrantedSessionCookieTest
{
    private static final Instant T0 = Instant.parse("2025-03-01T10:00:00Z");
    private static final Duration TTL = Duration.ofHours(12);

    private final MutableClock clock = new MutableClock(T0);
    private final Signer signer = new Signer("0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8));
    private final IdSyntax ids = new IdSyntax(Pattern.compile("\\d+"), 64);
    private final SessionCookie cookie = SessionCookie.granted(signer, ids, TTL, 3, clock);

    private SessionCookie.Entry opened(String id, Duration lasting, String generation)
    {
        return new SessionCookie.Entry(id, clock.instant().plus(lasting).getEpochSecond(), clock.instant().toEpochMilli(), generation);
    }

    @Test
    void aGrantedEntryRoundTrips_inItsDocumentedShape()
    {
        SessionCookie.Entry entry = opened("37579", Duration.ofMinutes(30), SessionCookie.fingerprint("uid-a"));
        String value = cookie.withFirst(SessionCookie.Decoded.NONE, entry);

        String[] fields = value.split("\\.", -1);
        assertEquals(5, fields.length, value);
        assertEquals("37579", Signer.decode(fields[0]));
        assertEquals(Long.toString(entry.expires()), fields[1]);
        assertEquals(Long.toString(T0.toEpochMilli()), fields[2]);
        assertEquals(SessionCookie.fingerprint("uid-a"), fields[3]);
        assertEquals(signer.sign(SessionCookie.GRANTED_PURPOSE, "37579", fields[1], fields[2], fields[3]), fields[4]);
        assertEquals(List.of(entry), cookie.decode(List.of(value)).entries());
    }

    @Test
    void switchingBetweenTwoSandboxes_movesEntriesToTheFront_butNeverExtendsThem()
    {
        String value = cookie.withFirst(SessionCookie.Decoded.NONE, opened("1", Duration.ofMinutes(5), ""));
        clock.advance(Duration.ofMinutes(1));
        value = cookie.withFirst(cookie.decode(List.of(value)), opened("2", Duration.ofMinutes(5), ""));
        long end1 = T0.plus(Duration.ofMinutes(5)).getEpochSecond();
        long end2 = T0.plus(Duration.ofMinutes(6)).getEpochSecond();

        for (int i = 0; i < 4; i++)
        {
            clock.advance(Duration.ofSeconds(50));
            value = cookie.withFirst(cookie.decode(List.of(value)), i % 2 == 0 ? "1" : "2");
        }
        SessionCookie.Decoded decoded = cookie.decode(List.of(value));
        assertEquals(List.of("2", "1"), idsOf(decoded));
        assertEquals(end2, decoded.entry("2").expires());
        assertEquals(end1, decoded.entry("1").expires());

        clock.set(Instant.ofEpochSecond(end1));
        assertEquals(List.of("2"), idsOf(cookie.decode(List.of(value))), "sandbox 1 ends when its grant said");
        clock.set(Instant.ofEpochSecond(end2));
        assertTrue(cookie.decode(List.of(value)).entries().isEmpty());
    }

    @Test
    void anEntryCanOnlyBeMovedFirst_neverMadeUp()
    {
        assertThrows(IllegalArgumentException.class, () -> cookie.withFirst(SessionCookie.Decoded.NONE, "1"));
    }

    @Test
    void openAccessEntries_areRefusedAsForged_whileTheOpenCookieAcceptsGrantedOnes()
    {
        SessionCookie open = new SessionCookie(signer, ids, TTL, 3, clock);
        String renewable = open.withFirst(SessionCookie.Decoded.NONE, "37579");
        SessionCookie.Decoded decoded = cookie.decode(List.of(renewable));
        assertTrue(decoded.forged());
        assertTrue(decoded.entries().isEmpty());

        String granted = cookie.withFirst(SessionCookie.Decoded.NONE, opened("37579", Duration.ofMinutes(5), ""));
        assertEquals(List.of("37579"), idsOf(open.decode(List.of(granted))));
    }

    @Test
    void anExtendedExpiry_aLaterIssueTime_orAnotherPod_isForged()
    {
        String value = cookie.withFirst(SessionCookie.Decoded.NONE, opened("37579", Duration.ofMinutes(5), SessionCookie.fingerprint("uid-a")));
        String[] f = value.split("\\.", -1);
        List<String> tampered = List.of(
            String.join(".", f[0], Long.toString(Long.parseLong(f[1]) + 86_400), f[2], f[3], f[4]),
            String.join(".", f[0], f[1], Long.toString(Long.parseLong(f[2]) + 60_000), f[3], f[4]),
            String.join(".", f[0], f[1], f[2], SessionCookie.fingerprint("uid-b"), f[4]),
            String.join(".", f[0], f[1], f[2], "", f[4]),
            String.join(".", f[0], f[1], f[4]));
        for (String forged : tampered)
        {
            SessionCookie.Decoded decoded = cookie.decode(List.of(forged));
            assertTrue(decoded.forged(), forged);
            assertTrue(decoded.entries().isEmpty(), forged);
        }
    }

    @Test
    void anEntryStandsUntilARevocationAtOrAfterItsIssue_andOnlyForItsOwnPod()
    {
        SessionCookie.Entry entry = opened("7", Duration.ofMinutes(5), SessionCookie.fingerprint("uid-a"));
        Route route = new Route("10.0.0.7", 6080, Optional.of("uid-a"));

        assertTrue(entry.standsFor(route));
        assertTrue(entry.standsFor(route.revokedBefore(T0.minusMillis(1))), "revoked before it was issued");
        assertFalse(entry.standsFor(route.revokedBefore(T0)), "revoked the instant it was issued");
        assertFalse(entry.standsFor(route.revokedBefore(T0.plusSeconds(1))));

        assertFalse(entry.standsFor(new Route("10.0.0.8", 6080, Optional.of("uid-b"))), "the pod was replaced");
        assertTrue(entry.standsFor(Route.of("10.0.0.8", 6080)), "a route written without a generation says nothing about pods");
        SessionCookie.Entry unbound = opened("7", Duration.ofMinutes(5), "");
        assertTrue(unbound.standsFor(new Route("10.0.0.8", 6080, Optional.of("uid-b"))), "opened before any pod was known");
    }

    private static List<String> idsOf(SessionCookie.Decoded decoded)
    {
        List<String> out = new ArrayList<>();
        for (SessionCookie.Entry entry : decoded.entries())
            out.add(entry.id());
        return out;
    }
}
