package io.sandgate.ingress;

import java.util.List;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The character loops that stand in for the regex engine say what the regexes say. */
class IdSyntaxTest
{
    private static final Pattern PLAIN_SEGMENT = Pattern.compile("[A-Za-z0-9._~!$&'()*+,;=:@-]{1,255}");
    private static final List<String> SEGMENTS = List.of("", "0", "42", "0042", "4 2", "42a", "a42", "٤٢", "４２", "42\n", "-1", "+1",
        "1".repeat(64), "1".repeat(65), "1".repeat(300), "app.js", "core", "..", ".", "...", "a%2e", "a/b", "a\\b", "a b", "a?b", "a#b",
        "~user", "x;y=z", "é", "a\u0000", "a".repeat(255), "a".repeat(256), "!$&'()*+,;=:@-._~");

    @Test
    void defaultPattern_takesDigitsOnly_asTheRegexDoes()
    {
        IdSyntax loop = new IdSyntax(Pattern.compile("\\d+"), 64);
        // The same ids, said another way, so that the regex engine reads them.
        IdSyntax regex = new IdSyntax(Pattern.compile("[0-9]+"), 64);
        assertTrue(loop.byLoop());
        assertFalse(regex.byLoop());
        for (String segment : SEGMENTS)
        {
            assertEquals(regex.isId(segment), loop.isId(segment), segment);
            assertEquals(regex.isOverlongId(segment), loop.isOverlongId(segment), segment);
        }
        assertTrue(loop.isId("1".repeat(64)));
        assertFalse(loop.isId("1".repeat(65)));
        assertTrue(loop.isOverlongId("1".repeat(65)));
        assertFalse(loop.isId("٤٢"), "Arabic-Indic digits are not \\d");
    }

    @Test
    void otherPatterns_andUnicodeDigits_goToTheRegexEngine()
    {
        assertFalse(new IdSyntax(Pattern.compile("[a-z0-9-]+"), 64).byLoop());
        assertFalse(new IdSyntax(Pattern.compile("\\d+", Pattern.UNICODE_CHARACTER_CLASS), 64).byLoop());
        assertTrue(new IdSyntax(Pattern.compile("\\d+", Pattern.UNICODE_CHARACTER_CLASS), 64).isId("٤٢"));
        assertTrue(new IdSyntax(Pattern.compile("[a-z0-9-]+"), 64).isId("sb-7"));
    }

    @Test
    void plainSegment_isWhatTheRegexTakes_andNotADotSegment()
    {
        for (String segment : SEGMENTS)
        {
            boolean expected = PLAIN_SEGMENT.matcher(segment).matches() && !segment.equals(".") && !segment.equals("..");
            assertEquals(expected, IdSyntax.isPlainSegment(segment), segment);
        }
        for (char c = 0; c < 256; c++)
        {
            String segment = "a" + c;
            assertEquals(PLAIN_SEGMENT.matcher(segment).matches(), IdSyntax.isPlainSegment(segment), "char " + (int)c);
        }
    }
}
