package io.sandgate.core;

/**
 * A set of ASCII characters, and whether a text is made of them alone within a length. The checks of
 * ids, token fields and route hosts use it rather than a regex: they run on every request or every
 * route read, and {@code String.matches} compiles its pattern on each call.
 */
public final class Ascii
{
    private static final String DIGIT_CHARS = "0123456789";
    private static final String LETTER_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    public static final Ascii DIGITS = new Ascii(DIGIT_CHARS);
    public static final Ascii LOWER_HEX = new Ascii(DIGIT_CHARS + "abcdef");
    /** The base64url alphabet (RFC 4648), without padding. */
    public static final Ascii BASE64URL = alphanumericAnd("-_");

    private final boolean[] allowed = new boolean[128];

    private Ascii(String chars)
    {
        for (char c : chars.toCharArray())
            allowed[c] = true;
    }

    /** ASCII letters, digits and the characters of {@code extra}. */
    public static Ascii alphanumericAnd(String extra)
    {
        return new Ascii(LETTER_CHARS + DIGIT_CHARS + extra);
    }

    /** Whether {@code text} has {@code minLength} to {@code maxLength} characters, all of this set. */
    public boolean matches(String text, int minLength, int maxLength)
    {
        if (text.length() < minLength || text.length() > maxLength)
            return false;
        for (int i = 0; i < text.length(); i++)
        {
            char c = text.charAt(i);
            if (c >= allowed.length || !allowed[c])
                return false;
        }
        return true;
    }
}
