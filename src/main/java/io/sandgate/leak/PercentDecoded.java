package io.sandgate.leak;

import java.util.Arrays;

/**
 * A path and query with their {@code %XX} escapes decoded to the bytes they stand for (the UTF-8
 * of the text, as RFC 3986 section 2.5 has it), and where in the raw line each decoded byte came
 * from, so that a secret found in the decoded form can be redacted where it stands in the line as
 * sent. Decoding is lenient, as a target's would be: an escape that is not a {@code %} and two hex
 * digits stays as it is, byte for byte. Nothing else is decoded ({@code +} is a plus).
 */
public final class PercentDecoded
{
    private final byte[] bytes;
    /** Per decoded byte, where its escape (or itself) starts in the raw line; one more entry, the raw length. */
    private final int[] rawStart;

    private PercentDecoded(byte[] bytes, int[] rawStart)
    {
        this.bytes = bytes;
        this.rawStart = rawStart;
    }

    /** The decoded form of {@code raw}, or null when it holds no well-formed escape and reads the same decoded. */
    public static PercentDecoded of(byte[] raw)
    {
        byte[] decoded = new byte[raw.length];
        int[] starts = new int[raw.length + 1];
        int length = 0;
        boolean escaped = false;
        for (int i = 0; i < raw.length; length++)
        {
            starts[length] = i;
            int high = i + 2 < raw.length && raw[i] == '%' ? Character.digit(raw[i + 1], 16) : -1;
            int low = high < 0 ? -1 : Character.digit(raw[i + 2], 16);
            if (low >= 0)
            {
                decoded[length] = (byte)(high << 4 | low);
                escaped = true;
                i += 3;
            }
            else
            {
                decoded[length] = raw[i];
                i += 1;
            }
        }
        starts[length] = raw.length;
        return escaped ? new PercentDecoded(Arrays.copyOf(decoded, length), Arrays.copyOf(starts, length + 1)) : null;
    }

    /** The decoded bytes (not a copy: the caller only reads them). */
    public byte[] bytes()
    {
        return bytes;
    }

    /** A hit in the decoded bytes, where it stands in the raw line. */
    public LeakHit inRaw(LeakHit hit)
    {
        return new LeakHit(hit.ruleId(), rawOffset(hit.start()), rawOffset(hit.end()));
    }

    /** Where the decoded byte at {@code offset} (or the end, at the decoded length) starts in the raw line. */
    public int rawOffset(long offset)
    {
        return rawStart[(int)offset];
    }
}
