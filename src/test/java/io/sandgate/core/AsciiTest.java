package io.sandgate.core;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The character sets a cookie's and a grant's fields are checked against before their signature is computed. */
class AsciiTest
{
    @Test
    void digits_oneToTheLimit_asciiOnly()
    {
        assertTrue(Ascii.DIGITS.matches("0", 1, 1));
        assertTrue(Ascii.DIGITS.matches("1796354157", 1, 12));
        assertFalse(Ascii.DIGITS.matches("", 1, 12), "empty");
        assertFalse(Ascii.DIGITS.matches("1234567890123", 1, 12), "over the limit");
        assertFalse(Ascii.DIGITS.matches("-1", 1, 12), "a sign");
        assertFalse(Ascii.DIGITS.matches("1e5", 1, 12));
        assertFalse(Ascii.DIGITS.matches("12 ", 1, 12), "a space");
        assertFalse(Ascii.DIGITS.matches("1\u0663", 1, 12), "an Arabic-Indic digit");
        assertFalse(Ascii.DIGITS.matches("12/", 1, 12), "the character before 0");
        assertFalse(Ascii.DIGITS.matches("12:", 1, 12), "the character after 9");
    }

    @Test
    void base64Url_unpadded_withinItsLengths()
    {
        assertTrue(Ascii.BASE64URL.matches("AZaz09-_AZaz09-_AZaz09", 22, 22));
        assertTrue(Ascii.BASE64URL.matches("", 0, 22), "an empty subject's field");
        assertFalse(Ascii.BASE64URL.matches("AZaz09-_AZaz09-_AZaz0", 22, 22), "21 characters");
        assertFalse(Ascii.BASE64URL.matches("AZaz09-_AZaz09-_AZaz09A", 22, 22), "23 characters");
        assertFalse(Ascii.BASE64URL.matches("AZaz09+/AZaz09-_AZaz09", 22, 22), "the plain base64 alphabet");
        assertFalse(Ascii.BASE64URL.matches("AZaz09-_AZaz09-_AZaz0=", 22, 22), "padding");
        assertFalse(Ascii.BASE64URL.matches("AZaz09-_AZaz09-_AZaz.9", 22, 22), "a field separator");
        assertFalse(Ascii.BASE64URL.matches("AZaz09-_AZaz09-_AZ\u00e909", 22, 22), "a non-ASCII letter");
        assertFalse(Ascii.BASE64URL.matches("[", 0, 22), "the character after Z");
        assertFalse(Ascii.BASE64URL.matches("@", 0, 22), "the character before A");
        assertFalse(Ascii.BASE64URL.matches("{", 0, 22), "the character after z");
    }

    @Test
    void aCharacterPastAscii_isRefused_notAnIndexError()
    {
        assertFalse(Ascii.LOWER_HEX.matches("\uffff", 1, 1));
        assertFalse(Ascii.alphanumericAnd(".:-").matches("h\u0080st", 1, 253));
    }
}
