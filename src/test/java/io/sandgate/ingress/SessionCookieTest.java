package io.sandgate.ingress;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;

import io.sandgate.testing.MutableClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.sandgate.ingress.SessionFixtures.T0;
import static io.sandgate.ingress.SessionFixtures.cookieHolding;
import static io.sandgate.ingress.SessionFixtures.digitIds;
import static io.sandgate.ingress.SessionFixtures.idsOf;
import static io.sandgate.ingress.SessionFixtures.signer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SessionCookieTest {

    private static final Duration TTL = Duration.ofHours(12);
    /** RFC 6265 cookie-octet: what a cookie value may contain unquoted. */
    private static final Pattern COOKIE_OCTETS = Pattern.compile("[\\x21\\x23-\\x2B\\x2D-\\x3A\\x3C-\\x5B\\x5D-\\x7E]+");

    // JUnit makes a fresh instance for every test, so each starts at T0 with its own clock.
    private final MutableClock clock = new MutableClock(T0);
    private final Signer signer = signer();
    private final IdSyntax ids = digitIds();
    private final SessionCookie cookie = new SessionCookie(signer, ids, TTL, 3, clock);

    // ---- round trip --------------------------------------------------------------------------

    @Test
    void singleEntryRoundTrips() {
        String value = cookie.withFirst(SessionCookie.Decoded.NONE, "37579");

        SessionCookie.Decoded decoded = cookie.decode(List.of(value));

        assertFalse(decoded.forged());
        assertEquals(List.of(new SessionCookie.Entry("37579", T0.plus(TTL).getEpochSecond())), decoded.entries());
        assertTrue(decoded.contains("37579"));
        assertTrue(decoded.isFirst("37579"));
        assertFalse(decoded.contains("3757"));
        assertFalse(decoded.isFirst("1"));
    }

    @Test
    void anEntryVerifiedOnce_stillExpires_andATamperedCopyIsStillRefused() {
        String value = cookie.withFirst(SessionCookie.Decoded.NONE, "37579");
        assertTrue(cookie.decode(List.of(value)).contains("37579"));
        assertTrue(cookie.decode(List.of(value)).contains("37579"), "the second decode is served from the verified entries");
        assertSame(cookie.decode(List.of(value)), cookie.decode(List.of(value)), "a value decoded before is not split again");
        String padded = (value + "~").repeat(SessionCookie.DECODED_MAX_LENGTH / value.length() + 1) + value;
        assertEquals(List.of("37579"), idsOf(cookie.decode(List.of(padded))));
        assertNotSame(cookie.decode(List.of(padded)), cookie.decode(List.of(padded)), "a long value is not kept whole");

        String tampered = value.substring(0, value.length() - 1) + (value.endsWith("A") ? "B" : "A");
        assertTrue(cookie.decode(List.of(tampered)).forged(), "only the exact verified text is trusted");

        clock.advance(TTL.plusSeconds(1));
        SessionCookie.Decoded later = cookie.decode(List.of(value));
        assertTrue(later.expired(), "expiry is checked on every use");
        assertFalse(later.contains("37579"));
    }

    @Test
    void valueIsAValidCookieValueWithTheDocumentedShape() {
        String value = cookie.withFirst(cookie.decode(List.of(cookie.withFirst(SessionCookie.Decoded.NONE, "1"))), "22");

        assertTrue(COOKIE_OCTETS.matcher(value).matches(), value);
        String[] entries = value.split("~");
        assertEquals(2, entries.length, value);
        String[] first = entries[0].split("\\.");
        assertEquals(3, first.length);
        assertEquals("22", Signer.decode(first[0]));
        assertEquals(Long.toString(T0.plus(TTL).getEpochSecond()), first[1]);
        assertEquals(signer.sign(SessionCookie.PURPOSE, "22", first[1]), first[2]);
    }

    @Test
    void noCookieValuesDecodeToNone() {
        SessionCookie.Decoded decoded = cookie.decode(List.of());
        assertSame(SessionCookie.Decoded.NONE, decoded);
        assertTrue(decoded.entries().isEmpty());
        assertFalse(decoded.forged());
        assertFalse(decoded.isFirst("1"));
    }

    @Test
    void aCookieFromAnotherGatewayWithTheSameSecretIsAccepted() {
        SessionCookie replica = new SessionCookie(signer(), ids, TTL, 3, clock);
        SessionCookie.Decoded decoded = cookie.decode(List.of(replica.withFirst(SessionCookie.Decoded.NONE, "5")));
        assertFalse(decoded.forged());
        assertEquals(List.of("5"), idsOf(decoded));
    }

    // ---- several entries ---------------------------------------------------------------------

    @Test
    void newestEntryComesFirst() {
        String v = value("1", "2", "3");  // opened 3, then 2, then 1
        assertEquals(List.of("1", "2", "3"), idsOf(cookie.decode(List.of(v))));
    }

    @Test
    void reopeningAnEntryMovesItFirstWithoutDuplicateAndRefreshesIt() {
        String v = value("1", "2");
        clock.advance(Duration.ofHours(1));

        String again = cookie.withFirst(cookie.decode(List.of(v)), "2");
        SessionCookie.Decoded decoded = cookie.decode(List.of(again));

        assertEquals(List.of("2", "1"), idsOf(decoded));
        assertEquals(T0.plus(Duration.ofHours(1)).plus(TTL).getEpochSecond(), decoded.entries().get(0).expires());
        // The other entry keeps its own expiry: it was not opened again.
        assertEquals(T0.plus(TTL).getEpochSecond(), decoded.entries().get(1).expires());
    }

    @Test
    void duplicateEntriesInAPresentedValueAreDecodedOnceKeepingTheFirst() {
        String older = cookie.withFirst(SessionCookie.Decoded.NONE, "7");
        clock.advance(Duration.ofMinutes(5));
        String newer = cookie.withFirst(SessionCookie.Decoded.NONE, "7");
        String other = cookie.withFirst(SessionCookie.Decoded.NONE, "8");

        SessionCookie.Decoded decoded = cookie.decode(List.of(newer + "~" + other + "~" + older));

        assertFalse(decoded.forged());
        assertEquals(List.of("7", "8"), idsOf(decoded));
        assertEquals(T0.plus(Duration.ofMinutes(5)).plus(TTL).getEpochSecond(), decoded.entries().get(0).expires());
    }

    @Test
    void severalCookiesWithTheSessionNameAreMergedInOrderAndDeduplicated() {
        String a = value("1", "2");
        String b = value("2", "3");
        assertEquals(List.of("1", "2", "3"), idsOf(cookie.decode(List.of(a, b))));
        assertEquals(List.of("2", "3", "1"), idsOf(cookie.decode(List.of(b, a))));
    }

    // ---- bound -------------------------------------------------------------------------------

    @Test
    void maxEntriesBoundDropsTheOldest() {
        String v = cookie.withFirst(SessionCookie.Decoded.NONE, "1");
        for (String id : List.of("2", "3", "4", "5"))
            v = cookie.withFirst(cookie.decode(List.of(v)), id);

        assertEquals(List.of("5", "4", "3"), idsOf(cookie.decode(List.of(v))));
        assertEquals(3, v.split("~").length);
    }

    @Test
    void reopeningAnEntryWhenFullKeepsAllOthers() {
        String v = value("1", "2", "3");
        String again = cookie.withFirst(cookie.decode(List.of(v)), "3");
        assertEquals(List.of("3", "1", "2"), idsOf(cookie.decode(List.of(again))));
    }

    @Test
    void maxEntriesOfOneKeepsOnlyTheNewest() {
        SessionCookie one = new SessionCookie(signer, ids, TTL, 1, clock);
        String v = one.withFirst(SessionCookie.Decoded.NONE, "1");
        v = one.withFirst(one.decode(List.of(v)), "2");
        assertEquals(List.of("2"), idsOf(one.decode(List.of(v))));
        assertFalse(v.contains("~"));
    }

    @Test
    void tooManyPresentedEntriesAreRefusedAsForged() {
        String entry = cookie.withFirst(SessionCookie.Decoded.NONE, "1");
        String tooMany = String.join("~", Collections.nCopies(33, entry));
        SessionCookie.Decoded decoded = cookie.decode(List.of(tooMany));
        assertTrue(decoded.forged());
        assertTrue(decoded.entries().isEmpty());

        SessionCookie.Decoded limit = cookie.decode(List.of(String.join("~", Collections.nCopies(32, entry))));
        assertFalse(limit.forged());
        assertEquals(List.of("1"), idsOf(limit));
    }

    // ---- expiry ------------------------------------------------------------------------------

    @Test
    void expiredEntriesAreDropped() {
        String v = cookie.withFirst(SessionCookie.Decoded.NONE, "1");
        clock.advance(Duration.ofHours(6));
        v = cookie.withFirst(cookie.decode(List.of(v)), "2");   // [2 (T0+18h), 1 (T0+12h)]

        clock.set(T0.plus(TTL).minusSeconds(1));
        assertEquals(List.of("2", "1"), idsOf(cookie.decode(List.of(v))));

        clock.set(T0.plus(TTL));
        SessionCookie.Decoded decoded = cookie.decode(List.of(v));
        assertEquals(List.of("2"), idsOf(decoded));
        assertFalse(decoded.contains("1"));

        clock.set(T0.plus(Duration.ofHours(18)));
        assertTrue(cookie.decode(List.of(v)).entries().isEmpty());
    }

    @Test
    void expiredEntriesAreNotCarriedIntoANewValue() {
        String v = cookie.withFirst(SessionCookie.Decoded.NONE, "1");
        clock.advance(TTL.plusSeconds(1));
        String next = cookie.withFirst(cookie.decode(List.of(v)), "2");
        assertEquals(List.of("2"), idsOf(cookie.decode(List.of(next))));
        assertFalse(next.contains("~"));
    }

    @Test
    void validEntriesAreDecodedNextToAnExpiredOneNotFirst() {
        String old = cookie.withFirst(SessionCookie.Decoded.NONE, "1");
        clock.advance(Duration.ofHours(11));
        String fresh = cookie.withFirst(SessionCookie.Decoded.NONE, "2");
        clock.advance(Duration.ofHours(2));
        assertEquals(List.of("2"), idsOf(cookie.decode(List.of(old + "~" + fresh))));
    }

    // ---- forged ------------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {
        "37579", "", "~", "a.b", "a.b.c.d", "MzU3Nzk.99999999999", "MzU3Nzk.99999999999.",
        "MzU3Nzk.99999999999.AAAAAAAAAAAAAAAAAAAAAA", "MzU3Nzk.abc.AAAAAAAAAAAAAAAAAAAAAA",
        "!!!.99999999999.AAAAAAAAAAAAAAAAAAAAAA", "MzU3Nzk.9999999999999.AAAAAAAAAAAAAAAAAAAAAA",
    })
    void malformedValuesAreForged(String value) {
        SessionCookie.Decoded decoded = cookie.decode(List.of(value));
        assertTrue(decoded.forged(), value);
        assertTrue(decoded.entries().isEmpty(), value);
    }

    @Test
    void wrongSignatureIsForged() {
        String[] f = cookie.withFirst(SessionCookie.Decoded.NONE, "37579").split("\\.");
        char c = f[2].charAt(0);
        String tampered = f[0] + "." + f[1] + "." + (c == 'A' ? 'B' : 'A') + f[2].substring(1);
        assertForged(tampered);
    }

    @Test
    void extendedExpiryIsForged() {
        String[] f = cookie.withFirst(SessionCookie.Decoded.NONE, "37579").split("\\.");
        assertForged(f[0] + "." + (Long.parseLong(f[1]) + 86_400) + "." + f[2]);
    }

    @Test
    void signatureTransplantedToAnotherIdIsForged() {
        String[] f = cookie.withFirst(SessionCookie.Decoded.NONE, "1").split("\\.");
        assertForged(Signer.encode("2") + "." + f[1] + "." + f[2]);
    }

    @Test
    void cookieSignedWithAnotherSecretIsForged() {
        SessionCookie other = new SessionCookie(new Signer("another-secret-another-secret-00".getBytes(StandardCharsets.UTF_8)),
            ids, TTL, 3, clock);
        assertForged(other.withFirst(SessionCookie.Decoded.NONE, "37579"));
    }

    @Test
    void correctlySignedEntryWhoseIdBreaksTheSyntaxIsForged() {
        String expires = Long.toString(T0.plus(TTL).getEpochSecond());
        for (String id : List.of("..", "abc", "\u0661\u0662\u0663", "1".repeat(65), ""))
            assertForged(Signer.encode(id) + "." + expires + "." + signer.sign(SessionCookie.PURPOSE, id, expires));
    }

    @Test
    void forgedEntryNextToValidOnesFlagsForgedButKeepsTheValidOnes() {
        String valid = value("1", "2");
        SessionCookie.Decoded decoded = cookie.decode(List.of("37579~" + valid));
        assertTrue(decoded.forged());
        assertEquals(List.of("1", "2"), idsOf(decoded));

        SessionCookie.Decoded twoCookies = cookie.decode(List.of(valid, "garbage"));
        assertTrue(twoCookies.forged());
        assertEquals(List.of("1", "2"), idsOf(twoCookies));
    }

    @Test
    void expiredButGenuineEntryIsFlaggedExpiredNotForged() {
        String v = cookie.withFirst(SessionCookie.Decoded.NONE, "1");
        assertFalse(cookie.decode(List.of(v)).expired());

        clock.advance(TTL);
        SessionCookie.Decoded decoded = cookie.decode(List.of(v));
        assertTrue(decoded.entries().isEmpty());
        assertTrue(decoded.expired());
        assertFalse(decoded.forged());
    }

    @Test
    void forgedEntryIsNotFlaggedExpired() {
        SessionCookie.Decoded decoded = cookie.decode(List.of("37579"));
        assertTrue(decoded.forged());
        assertFalse(decoded.expired());
        assertFalse(SessionCookie.Decoded.NONE.expired());
    }

    // ---- helpers -----------------------------------------------------------------------------

    private void assertForged(String value) {
        SessionCookie.Decoded decoded = cookie.decode(List.of(value));
        assertTrue(decoded.forged(), value);
        assertTrue(decoded.entries().isEmpty(), value);
    }

    /** A cookie value holding {@code newestFirst}, built by opening them oldest first. */
    private String value(String... newestFirst) {
        return cookieHolding(cookie, newestFirst);
    }
}
