package io.sandgate.testing;

import java.nio.charset.StandardCharsets;

/** Text as a client may send any byte of it in a URL or a header: each byte as a {@code %XX} escape. */
public final class PercentEscapes
{
    private PercentEscapes()
    {
    }

    /** Every byte of {@code text}'s UTF-8 as a {@code %XX} escape. */
    public static String everyByte(String text)
    {
        StringBuilder out = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8))
            out.append(String.format("%%%02X", b & 0xFF));
        return out.toString();
    }
}
