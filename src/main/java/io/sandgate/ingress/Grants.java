package io.sandgate.ingress;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;

import io.sandgate.core.Ascii;

/**
 * Grant tokens for {@code ingress.access: signed}: whoever hands out sandbox links (a control plane,
 * the admin API) signs {@code id, issued, expiry, subject, nonce, session limit} with the shared
 * secret; the gateway verifies the token on the first URL, redeems it once (see
 * {@link GrantRedemption}), turns it into the session cookie and strips it from the URL.
 * Format: {@code base64url(id).issuedMillis.expiry.base64url(subject).nonce.sessionLimitSeconds.signature},
 * the session limit empty when the grant sets none. The random nonce makes every grant distinct,
 * so that two links for the same sandbox and subject are redeemed independently.
 */
public final class Grants
{
    static final String PURPOSE = "sandgate-grant-v2";
    private static final int NONCE_BYTES = 16;
    private static final int FIELDS = 7;

    private final Signer signer;
    private final Clock clock;
    private final SecureRandom random = new SecureRandom();

    Grants(Signer signer, Clock clock)
    {
        this.signer = signer;
        this.clock = clock;
    }

    /** Grants signed with this secret, as the gateway with the same {@code ingress.cookie.secret} verifies them. */
    public static Grants create(io.sandgate.core.Secret secret, Clock clock)
    {
        return new Grants(new Signer(secret.bytes()), clock);
    }

    /**
     * A grant as verified.
     *
     * @param id the sandbox
     * @param subject for whom
     * @param issued when it was signed; a revocation after this refuses it
     * @param expires until when it may be redeemed
     * @param nonce what makes it single-use
     * @param sessionLimit how long the access it opens may last, counted from redemption, if it says
     */
    record Grant(String id, String subject, Instant issued, Instant expires, String nonce, Optional<Duration> sessionLimit)
    {
    }

    /** A grant for {@code id}, redeemable once within {@code ttl}; the access it opens lasts up to {@code ingress.session-max-age}. */
    public String issue(String id, String subject, Duration ttl)
    {
        return issue(id, subject, ttl, Optional.empty());
    }

    /**
     * @param sessionLimit the longest the access opened may last after redemption (the gateway's
     *        {@code ingress.session-max-age} still applies when it is shorter)
     */
    public String issue(String id, String subject, Duration ttl, Duration sessionLimit)
    {
        if (sessionLimit.isNegative() || sessionLimit.isZero())
            throw new IllegalArgumentException("sessionLimit: " + sessionLimit + " (expected: > 0)");
        return issue(id, subject, ttl, Optional.of(sessionLimit));
    }

    private String issue(String id, String subject, Duration ttl, Optional<Duration> sessionLimit)
    {
        Instant now = clock.instant();
        String issued = Long.toString(now.toEpochMilli());
        String expires = Long.toString(now.plus(ttl).getEpochSecond());
        byte[] bytes = new byte[NONCE_BYTES];
        random.nextBytes(bytes);
        String nonce = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        String limit = sessionLimit.map(d -> Long.toString(Math.max(1, d.toSeconds()))).orElse("");
        return Signer.encode(id) + "." + issued + "." + expires + "." + Signer.encode(subject) + "." + nonce + "." + limit
            + "." + signer.sign(PURPOSE, id, issued, expires, subject, nonce, limit);
    }

    /** @return the grant, or null when the token is malformed, forged or expired */
    Grant verify(String token)
    {
        String[] fields = token.split("\\.", -1);
        if (fields.length != FIELDS || !Ascii.DIGITS.matches(fields[1], 1, 15) || !Ascii.DIGITS.matches(fields[2], 1, 12)
            || !Ascii.BASE64URL.matches(fields[4], 22, 22) || !Ascii.DIGITS.matches(fields[5], 0, 10))
            return null;
        String id = Signer.decode(fields[0]);
        String subject = Signer.decode(fields[3]);
        if (id == null || subject == null || !signer.verify(fields[6], PURPOSE, id, fields[1], fields[2], subject, fields[4], fields[5]))
            return null;
        Instant expires = Instant.ofEpochSecond(Long.parseLong(fields[2]));
        if (!expires.isAfter(clock.instant()))
            return null;
        Optional<Duration> limit = fields[5].isEmpty() ? Optional.empty() : Optional.of(Duration.ofSeconds(Long.parseLong(fields[5])));
        return new Grant(id, subject, Instant.ofEpochMilli(Long.parseLong(fields[1])), expires, fields[4], limit);
    }
}
