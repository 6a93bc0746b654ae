package io.sandgate.ingress;

import java.time.Clock;
import java.time.Duration;

/**
 * Grant tokens for {@code ingress.access: signed}: whoever hands out sandbox links (a control plane,
 * the admin API) signs {@code id, expiry, subject} with the shared secret; the gateway verifies the
 * token on the first URL, turns it into the session cookie and strips it from the URL.
 * Format: {@code base64url(id).expiry.base64url(subject).signature}.
 */
public final class Grants
{
    static final String PURPOSE = "sandgate-grant-v1";

    private final Signer signer;
    private final Clock clock;

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

    /** A grant as verified: which sandbox, for whom. */
    record Grant(String id, String subject)
    {
    }

    public String issue(String id, String subject, Duration ttl)
    {
        String expires = Long.toString(clock.instant().plus(ttl).getEpochSecond());
        return Signer.encode(id) + "." + expires + "." + Signer.encode(subject) + "." + signer.sign(PURPOSE, id, expires, subject);
    }

    /** @return the grant, or null when the token is malformed, forged or expired */
    Grant verify(String token)
    {
        String[] fields = token.split("\\.", -1);
        if (fields.length != 4 || !fields[1].matches("\\d{1,12}"))
            return null;
        String id = Signer.decode(fields[0]);
        String subject = Signer.decode(fields[2]);
        if (id == null || subject == null || !signer.verify(fields[3], PURPOSE, id, fields[1], subject))
            return null;
        if (Long.parseLong(fields[1]) <= clock.instant().getEpochSecond())
            return null;
        return new Grant(id, subject);
    }
}
