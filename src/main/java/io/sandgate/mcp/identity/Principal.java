package io.sandgate.mcp.identity;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;

/**
 * Who a valid token says called: its issuer, subject and client, the scopes it grants and until when.
 * None of it is secret; the token itself is not here.
 *
 * @param clientId the token's {@code client_id} (or {@code azp}), empty when it names none
 */
public record Principal(String issuer, String subject, String clientId, Set<String> scopes, Instant expiresAt)
{
    public Principal
    {
        Objects.requireNonNull(issuer, "issuer");
        Objects.requireNonNull(subject, "subject");
        clientId = clientId == null ? "" : clientId;
        scopes = Set.copyOf(scopes);
        Objects.requireNonNull(expiresAt, "expiresAt");
    }

    /**
     * The principal as a session records its owner: a digest of issuer, subject and client, so that
     * the same subject through another client, or from another issuer, owns nothing of it.
     */
    public String owner()
    {
        try
        {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (String part : new String[] {issuer, subject, clientId})
            {
                digest.update(part.getBytes(StandardCharsets.UTF_8));
                digest.update((byte)0);
            }
            return "principal:" + HexFormat.of().formatHex(digest.digest());
        }
        catch (NoSuchAlgorithmException x)
        {
            throw new IllegalStateException(x);
        }
    }

    /** The principal as the audit log and the metrics name it: {@code subject@issuer}. */
    public String display()
    {
        return subject + "@" + issuer;
    }
}
