package io.sandgate.ingress;

import java.time.Clock;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.regex.Pattern;

import io.sandgate.core.Secret;
import io.sandgate.testing.MutableClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static io.sandgate.ingress.SessionFixtures.SECRET;
import static io.sandgate.ingress.SessionFixtures.T0;
import static io.sandgate.ingress.SessionFixtures.digitIds;
import static io.sandgate.ingress.SessionFixtures.signer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GrantsTest {

    private static final Duration TTL = Duration.ofMinutes(10);

    // JUnit makes a fresh instance for every test, so each starts at T0 with its own clock.
    private final MutableClock clock = new MutableClock(T0);
    private final Signer signer = signer();
    private final Grants grants = new Grants(signer, clock);

    // ---- issue / verify ----------------------------------------------------------------------

    @Test
    void issuedGrantVerifiesToItsIdAndSubject() {
        String token = grants.issue("37579", "alice@example.com", TTL);

        Grants.Grant grant = grants.verify(token);

        assertNotNull(grant);
        assertEquals("37579", grant.id());
        assertEquals("alice@example.com", grant.subject());
    }

    @Test
    void tokenHasTheDocumentedFormat() {
        String token = grants.issue("37579", "alice", TTL);

        String[] fields = token.split("\\.", -1);
        assertEquals(7, fields.length, token);
        assertEquals("37579", Signer.decode(fields[0]));
        assertEquals(Long.toString(T0.toEpochMilli()), fields[1]);
        assertEquals(Long.toString(T0.plus(TTL).getEpochSecond()), fields[2]);
        assertEquals("alice", Signer.decode(fields[3]));
        assertTrue(Pattern.matches("[A-Za-z0-9_-]{22}", fields[4]), fields[4]);
        assertEquals("", fields[5], "no session limit");
        // URL-safe without escaping: it travels as a query parameter.
        assertTrue(Pattern.matches("[A-Za-z0-9_.-]+", token), token);
        assertEquals(signer.sign(Grants.PURPOSE, "37579", fields[1], fields[2], "alice", fields[4], ""), fields[6]);
    }

    @Test
    void subjectWithUnicodeAndSeparatorsRoundTrips() {
        String subject = "Zoë.d~\u0661\u0662 user";
        Grants.Grant grant = grants.verify(grants.issue("1", subject, TTL));
        assertNotNull(grant);
        assertEquals(subject, grant.subject());
    }

    @Test
    void grantFromCreateWithSameSecretIsAcceptedByAGatewayWithThatSecret() {
        Grants external = Grants.create(new Secret(SECRET), clock);
        Grants.Grant grant = grants.verify(external.issue("42", "ctl", TTL));
        assertNotNull(grant);
        assertEquals("42", grant.id());
    }

    @Test
    void grantSignedWithAnotherSecretIsRejected() {
        Grants other = Grants.create(new Secret("another-secret-another-secret-00"), clock);
        assertNull(grants.verify(other.issue("42", "ctl", TTL)));
    }

    // ---- expiry ------------------------------------------------------------------------------

    @Test
    void grantIsValidUntilJustBeforeItsExpiry() {
        String token = grants.issue("37579", "alice", TTL);

        clock.set(T0.plus(TTL).minusSeconds(1));
        assertNotNull(grants.verify(token));

        clock.set(T0.plus(TTL));
        assertNull(grants.verify(token), "expired exactly at the expiry second");

        clock.set(T0.plus(TTL).plus(Duration.ofDays(1)));
        assertNull(grants.verify(token));
    }

    @Test
    void zeroTtlGrantIsAlreadyExpired() {
        assertNull(grants.verify(grants.issue("37579", "alice", Duration.ZERO)));
    }

    // ---- tampering ---------------------------------------------------------------------------

    @ParameterizedTest(name = "field {0} = {1}")
    @CsvSource({
        "0, 37578",     // another sandbox's id
        "0, 375790",
        "3, mallory",   // another subject
        "3, ''",
    })
    void tamperedIdOrSubjectIsRejected(int field, String value) {
        assertRejectedWithField(grants.issue("37579", "alice", TTL), field, Signer.encode(value));
    }

    @Test
    void tamperedExpiryIsRejected() {
        String token = grants.issue("37579", "alice", TTL);
        long expires = Long.parseLong(token.split("\\.")[2]);
        // The last one is the same number, spelled differently: the signature covers the text.
        assertRejectedWithField(token, 2, Long.toString(expires + 3600), Long.toString(expires - 1), "0" + expires);
    }

    @Test
    void tamperedIssueTimeNonceOrSessionLimitIsRejected() {
        String token = grants.issue("37579", "alice", TTL, Duration.ofMinutes(30));
        assertNotNull(grants.verify(token));
        String[] f = token.split("\\.", -1);
        // Moved past a revocation, made reusable, or given a longer session: none verifies.
        assertRejectedWithField(token, 1, Long.toString(Long.parseLong(f[1]) + 60_000));
        assertRejectedWithField(token, 4, grants.issue("37579", "alice", TTL).split("\\.")[4]);
        assertRejectedWithField(token, 5, "43200", "");
    }

    @Test
    void tamperedSignatureIsRejected() {
        String token = grants.issue("37579", "alice", TTL);
        String signature = token.split("\\.")[6];
        // Change the first character: it carries 6 significant bits (the last one carries only 2).
        char c = signature.charAt(0);
        String flipped = (c == 'A' ? 'B' : 'A') + signature.substring(1);
        assertRejectedWithField(token, 6, flipped, "", signature.substring(0, 10), "not*base64");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "", ".", "...", "....", "garbage", "MzU3Nzk.99999999999.YWxpY2U",
        "MzU3Nzk.abc.YWxpY2U.AAAAAAAAAAAAAAAAAAAAAA",
        "MzU3Nzk.9999999999999.YWxpY2U.AAAAAAAAAAAAAAAAAAAAAA",
        "MzU3Nzk.-1.YWxpY2U.AAAAAAAAAAAAAAAAAAAAAA",
        "MzU3Nzk.99999999999.YWxpY2U.AAAAAAAAAAAAAAAAAAAAAA",
        "MzU3Nzk.99999999999.YWxpY2U.AAAAAAAAAAAAAAAAAAAAAA.extra",
        "!!!.99999999999.YWxpY2U.AAAAAAAAAAAAAAAAAAAAAA",
    })
    void malformedOrForgedTokensAreRejected(String token) {
        assertNull(grants.verify(token));
    }

    @Test
    void extraOrMissingFieldsAroundAValidTokenAreRejected() {
        String token = grants.issue("37579", "alice", TTL);
        assertNotNull(grants.verify(token));
        assertNull(grants.verify(token + ".x"));
        assertNull(grants.verify("x." + token));
        assertNull(grants.verify(token.substring(0, token.lastIndexOf('.'))));
    }

    // ---- purpose separation ------------------------------------------------------------------

    @Test
    void manuallyAssembledGrantWithGrantPurposeVerifies() {
        // Positive control for the purpose tests below: the assembly itself is right.
        String issued = Long.toString(T0.toEpochMilli());
        String expires = Long.toString(T0.plus(TTL).getEpochSecond());
        String nonce = "AAAAAAAAAAAAAAAAAAAAAA";
        String token = join(Signer.encode("37579"), issued, expires, Signer.encode("alice"), nonce, "",
            signer.sign(Grants.PURPOSE, "37579", issued, expires, "alice", nonce, ""));
        assertNotNull(grants.verify(token));
    }

    @Test
    void sessionCookieSignatureCannotBeUsedAsGrant() {
        SessionCookie cookie = new SessionCookie(signer, digitIds(), Duration.ofHours(12), 8, clock);
        String entry = cookie.withFirst(SessionCookie.Decoded.NONE, "37579");
        String[] f = entry.split("\\.");
        assertEquals(3, f.length);

        String issued = Long.toString(T0.toEpochMilli());
        String nonce = "AAAAAAAAAAAAAAAAAAAAAA";
        // The cookie entry's own signature, in a grant's shape with any subject.
        assertNull(grants.verify(join(f[0], issued, f[1], Signer.encode("alice"), nonce, "", f[2])));
        assertNull(grants.verify(join(f[0], issued, f[1], Signer.encode(""), nonce, "", f[2])));
        // A session-purpose signature (of either shape of entry) over exactly the grant's fields.
        for (String purpose : List.of(SessionCookie.PURPOSE, SessionCookie.GRANTED_PURPOSE))
            assertNull(grants.verify(join(f[0], issued, f[1], Signer.encode("alice"), nonce, "",
                signer.sign(purpose, "37579", issued, f[1], "alice", nonce, ""))));
        // The cookie entry as it is.
        assertNull(grants.verify(entry));
    }

    @Test
    void grantCannotBeUsedAsSessionCookieEntry() {
        SessionCookie cookie = new SessionCookie(signer, digitIds(), Duration.ofHours(12), 8, clock);
        String token = grants.issue("37579", "alice", TTL);
        String[] f = token.split("\\.");

        // Whole token as cookie value.
        SessionCookie.Decoded whole = cookie.decode(List.of(token));
        assertTrue(whole.entries().isEmpty());
        assertTrue(whole.forged());

        // Grant signature transplanted into a cookie-shaped entry, of either shape.
        SessionCookie.Decoded transplanted = cookie.decode(List.of(join(f[0], f[2], f[6])));
        assertTrue(transplanted.entries().isEmpty());
        assertTrue(transplanted.forged());
        SessionCookie.Decoded transplantedGranted = cookie.decode(List.of(join(f[0], f[2], f[1], "", f[6])));
        assertTrue(transplantedGranted.entries().isEmpty());
        assertTrue(transplantedGranted.forged());

        // A grant-purpose signature over exactly the cookie entry's fields.
        SessionCookie.Decoded purpose = cookie.decode(List.of(join(f[0], f[2], signer.sign(Grants.PURPOSE, "37579", f[2]))));
        assertTrue(purpose.entries().isEmpty());
        assertTrue(purpose.forged());

        // Control: a session-purpose signature over the same fields is accepted.
        SessionCookie.Decoded control = cookie.decode(List.of(join(f[0], f[2], signer.sign(SessionCookie.PURPOSE, "37579", f[2]))));
        assertFalse(control.forged());
        assertEquals(List.of(new SessionCookie.Entry("37579", Long.parseLong(f[2]))), control.entries());
    }

    // ---- helpers -----------------------------------------------------------------------------

    private static String join(String... fields) {
        return String.join(".", fields);
    }

    /** Asserts that {@code token} verifies with none of {@code values} in field {@code index}. */
    private void assertRejectedWithField(String token, int index, String... values) {
        for (String value : values) {
            String[] fields = token.split("\\.", -1);
            fields[index] = value;
            assertNull(grants.verify(join(fields)), "field " + index + " = " + value);
        }
    }
}
