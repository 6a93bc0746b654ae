package io.sandgate.mcp.identity;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Bearer tokens as the gateway may hold them: by digest, never as they are. */
final class Tokens
{
    private Tokens()
    {
    }

    static String digest(String token)
    {
        try
        {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException x)
        {
            throw new IllegalStateException(x);
        }
    }
}
