package io.sandgate.ingress;

import io.sandgate.testing.MutableClock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.regex.Pattern;

import io.sandgate.core.Secret;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class GrantsTest {

    private static final String SECRET = "0123456789abcdef0123456789abcdef";
    private static final Instant T0 = Instant.parse("2025-03-01T10:00:00Z");
    private static final Duration TTL = Duration.ofMinutes(10);

    private MutableClock clock;
    private Signer signer;
    private Grants grants;

    @BeforeEach
    void setUp() {
        clock = new MutableClock(T0);
        signer = new Signer(SECRET.getBytes(StandardCharsets.UTF_8));
        grants = new Grants(signer, clock);
    }

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
        assertEquals(4, fields.length, token);
        assertEquals("37579", Signer.decode(fields[0]));
        assertEquals(Long.toString(T0.plus(TTL).getEpochSecond()), fields[1]);
        assertEquals("alice", Signer.decode(fields[2]));
        // URL-safe without escaping: it travels as a query parameter.
        assertTrue(Pattern.matches("[A-Za-z0-9_.-]+", token), token);
        assertEquals(signer.sign(Grants.PURPOSE, "37579", fields[1], "alice"), fields[3]);
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

    @Test
    void tamperedIdIsRejected() {
        String[] f = grants.issue("37579", "alice", TTL).split("\\.");
        assertNull(grants.verify(join(Signer.encode("37578"), f[1], f[2], f[3])));
        assertNull(grants.verify(join(Signer.encode("375790"), f[1], f[2], f[3])));
    }

    @Test
    void tamperedExpiryIsRejected() {
        String[] f = grants.issue("37579", "alice", TTL).split("\\.");
        long expires = Long.parseLong(f[1]);
        assertNull(grants.verify(join(f[0], Long.toString(expires + 3600), f[2], f[3])));
        assertNull(grants.verify(join(f[0], Long.toString(expires - 1), f[2], f[3])));
        // Same number, different spelling: the signature covers the text.
        assertNull(grants.verify(join(f[0], "0" + f[1], f[2], f[3])));
    }

    @Test
    void tamperedSubjectIsRejected() {
        String[] f = grants.issue("37579", "alice", TTL).split("\\.");
        assertNull(grants.verify(join(f[0], f[1], Signer.encode("mallory"), f[3])));
        assertNull(grants.verify(join(f[0], f[1], Signer.encode(""), f[3])));
    }

    @Test
    void tamperedSignatureIsRejected() {
        String[] f = grants.issue("37579", "alice", TTL).split("\\.");
        // Change the first character: it carries 6 significant bits (the last one carries only 2).
        char c = f[3].charAt(0);
        String flipped = (c == 'A' ? 'B' : 'A') + f[3].substring(1);
        assertNull(grants.verify(join(f[0], f[1], f[2], flipped)));
        assertNull(grants.verify(join(f[0], f[1], f[2], "")));
        assertNull(grants.verify(join(f[0], f[1], f[2], f[3].substring(0, 10))));
        assertNull(grants.verify(join(f[0], f[1], f[2], "not*base64")));
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
        String expires = Long.toString(T0.plus(TTL).getEpochSecond());
        String token = join(Signer.encode("37579"), expires, Signer.encode("alice"),
            signer.sign(Grants.PURPOSE, "37579", expires, "alice"));
        assertNotNull(grants.verify(token));
    }

    @Test
    void sessionCookieSignatureCannotBeUsedAsGrant() {
        SessionCookie cookie = new SessionCookie(signer, ids(), Duration.ofHours(12), 8, clock);
        String entry = cookie.withFirst(SessionCookie.Decoded.NONE, "37579");
        String[] f = entry.split("\\.");
        assertEquals(3, f.length);

        // The cookie entry's own signature, with any subject.
        assertNull(grants.verify(join(f[0], f[1], Signer.encode("alice"), f[2])));
        assertNull(grants.verify(join(f[0], f[1], Signer.encode(""), f[2])));
        // A session-purpose signature over exactly the grant's fields.
        assertNull(grants.verify(join(f[0], f[1], Signer.encode("alice"),
            signer.sign(SessionCookie.PURPOSE, "37579", f[1], "alice"))));
        // The cookie entry as it is.
        assertNull(grants.verify(entry));
    }

    @Test
    void grantCannotBeUsedAsSessionCookieEntry() {
        SessionCookie cookie = new SessionCookie(signer, ids(), Duration.ofHours(12), 8, clock);
        String token = grants.issue("37579", "alice", TTL);
        String[] f = token.split("\\.");

        // Whole token as cookie value.
        SessionCookie.Decoded whole = cookie.decode(List.of(token));
        assertTrue(whole.entries().isEmpty());
        assertTrue(whole.forged());

        // Grant signature transplanted into a cookie-shaped entry.
        SessionCookie.Decoded transplanted = cookie.decode(List.of(join(f[0], f[1], f[3])));
        assertTrue(transplanted.entries().isEmpty());
        assertTrue(transplanted.forged());

        // A grant-purpose signature over exactly the cookie entry's fields.
        SessionCookie.Decoded purpose = cookie.decode(List.of(join(f[0], f[1], signer.sign(Grants.PURPOSE, "37579", f[1]))));
        assertTrue(purpose.entries().isEmpty());
        assertTrue(purpose.forged());

        // Control: a session-purpose signature over the same fields is accepted.
        SessionCookie.Decoded control = cookie.decode(List.of(join(f[0], f[1], signer.sign(SessionCookie.PURPOSE, "37579", f[1]))));
        assertFalse(control.forged());
        assertEquals(List.of(new SessionCookie.Entry("37579", Long.parseLong(f[1]))), control.entries());
    }

    // ---- helpers -----------------------------------------------------------------------------

    private static IdSyntax ids() {
        return new IdSyntax(Pattern.compile("\\d+"), 64);
    }

    private static String join(String... fields) {
        return String.join(".", fields);
    }
}
