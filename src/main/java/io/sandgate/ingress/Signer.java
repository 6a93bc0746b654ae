package io.sandgate.ingress;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HMAC-SHA256 over a purpose and some fields, truncated to 128 bits and base64url-encoded. The
 * purpose separates token kinds, so a grant can never be replayed as a cookie entry or the other
 * way round.
 */
final class Signer
{
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final int SIGNATURE_BYTES = 16;

    private final ThreadLocal<Mac> mac;

    Signer(byte[] key)
    {
        SecretKeySpec spec = new SecretKeySpec(key, "HmacSHA256");
        // Mac instances are not thread-safe and costly to create: one per thread.
        this.mac = ThreadLocal.withInitial(() ->
        {
            try
            {
                Mac m = Mac.getInstance("HmacSHA256");
                m.init(spec);
                return m;
            }
            catch (GeneralSecurityException x)
            {
                throw new IllegalStateException("HmacSHA256 unavailable", x);
            }
        });
    }

    String sign(String purpose, String... fields)
    {
        return B64.encodeToString(raw(purpose, fields));
    }

    /**
     * Compares the presented text with the canonical encoding: base64 decoders accept several
     * spellings of one value (padding, unused low bits), and a token must have exactly one.
     */
    boolean verify(String signature, String purpose, String... fields)
    {
        return MessageDigest.isEqual(signature.getBytes(StandardCharsets.US_ASCII),
            sign(purpose, fields).getBytes(StandardCharsets.US_ASCII));
    }

    private byte[] raw(String purpose, String... fields)
    {
        Mac m = mac.get();
        m.update(purpose.getBytes(StandardCharsets.UTF_8));
        for (String field : fields)
        {
            m.update((byte)0);
            m.update(field.getBytes(StandardCharsets.UTF_8));
        }
        return Arrays.copyOf(m.doFinal(), SIGNATURE_BYTES);
    }

    static String encode(String text)
    {
        return B64.encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    /** @return the decoded text, or null when it is not base64url */
    static String decode(String text)
    {
        try
        {
            return new String(Base64.getUrlDecoder().decode(text), StandardCharsets.UTF_8);
        }
        catch (IllegalArgumentException x)
        {
            return null;
        }
    }
}
