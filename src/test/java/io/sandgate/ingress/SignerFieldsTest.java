package io.sandgate.ingress;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The syntax checks a cookie's and a grant's fields pass before their signature is computed. */
class SignerFieldsTest
{
    @Test
    void digits_oneToTheLimit_asciiOnly()
    {
        assertTrue(Signer.isDigits("0", 1));
        assertTrue(Signer.isDigits("1796354157", 12));
        assertFalse(Signer.isDigits("", 12), "empty");
        assertFalse(Signer.isDigits("1234567890123", 12), "over the limit");
        assertFalse(Signer.isDigits("-1", 12), "a sign");
        assertFalse(Signer.isDigits("1e5", 12));
        assertFalse(Signer.isDigits("12 ", 12), "a space");
        assertFalse(Signer.isDigits("1\u0663", 12), "an Arabic-Indic digit");
        assertFalse(Signer.isDigits("12/", 12), "the character before 0");
        assertFalse(Signer.isDigits("12:", 12), "the character after 9");
    }

    @Test
    void base64Url_unpadded_withinItsLengths()
    {
        assertTrue(Signer.isBase64Url("AZaz09-_AZaz09-_AZaz09", 22, 22));
        assertTrue(Signer.isBase64Url("", 0, 22), "an empty subject's field");
        assertFalse(Signer.isBase64Url("AZaz09-_AZaz09-_AZaz0", 22, 22), "21 characters");
        assertFalse(Signer.isBase64Url("AZaz09-_AZaz09-_AZaz09A", 22, 22), "23 characters");
        assertFalse(Signer.isBase64Url("AZaz09+/AZaz09-_AZaz09", 22, 22), "the plain base64 alphabet");
        assertFalse(Signer.isBase64Url("AZaz09-_AZaz09-_AZaz0=", 22, 22), "padding");
        assertFalse(Signer.isBase64Url("AZaz09-_AZaz09-_AZaz.9", 22, 22), "a field separator");
        assertFalse(Signer.isBase64Url("AZaz09-_AZaz09-_AZ\u00e909", 22, 22), "a non-ASCII letter");
        assertFalse(Signer.isBase64Url("[", 0, 22), "the character after Z");
        assertFalse(Signer.isBase64Url("@", 0, 22), "the character before A");
        assertFalse(Signer.isBase64Url("{", 0, 22), "the character after z");
    }
}
