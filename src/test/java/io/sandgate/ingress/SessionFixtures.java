package io.sandgate.ingress;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What the signing tests of this package build alike: one secret, one start instant, the default
 * id syntax, and cookie values made the way a browser's visits would make them, so that a test
 * states only what it checks.
 */
final class SessionFixtures
{
    static final String SECRET = "0123456789abcdef0123456789abcdef";
    static final Instant T0 = Instant.parse("2025-03-01T10:00:00Z");

    private SessionFixtures()
    {
    }

    static Signer signer()
    {
        return new Signer(SECRET.getBytes(StandardCharsets.UTF_8));
    }

    /** Digits, at most 64: the gateway's default {@code ingress.id-pattern} and {@code ingress.id-max-length}. */
    static IdSyntax digitIds()
    {
        return new IdSyntax(Pattern.compile("\\d+"), 64);
    }

    /** A genuine cookie value holding {@code newestFirst}, built by opening them oldest first. */
    static String cookieHolding(SessionCookie cookie, String... newestFirst)
    {
        SessionCookie.Decoded current = SessionCookie.Decoded.NONE;
        String value = null;
        for (int i = newestFirst.length - 1; i >= 0; i--)
        {
            value = cookie.withFirst(current, newestFirst[i]);
            current = cookie.decode(List.of(value));
        }
        return value;
    }

    /** The ids of the entries, newest first. */
    static List<String> idsOf(SessionCookie.Decoded decoded)
    {
        return decoded.entries().stream().map(SessionCookie.Entry::id).toList();
    }
}
