package io.sandgate.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** The one SHA-256 the gateway keys things by: tokens held by digest, callers, tool definitions. */
public final class Digests
{
    private Digests()
    {
    }

    /** SHA-256 of the text's UTF-8 bytes, in lower-case hex. */
    public static String sha256Hex(String text)
    {
        try
        {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException x)
        {
            throw new IllegalStateException("every Java platform has SHA-256", x);
        }
    }
}
