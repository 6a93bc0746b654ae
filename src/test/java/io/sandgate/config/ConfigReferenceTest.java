package io.sandgate.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The configuration reference (docs/configuration.md) is generated from {@link ConfigKeys}; this
 * test fails as soon as a key is added, renamed or re-described without the reference following.
 */
class ConfigReferenceTest
{
    private static final String START = "<!-- config-table:start -->";
    private static final String END = "<!-- config-table:end -->";
    /** Maven runs tests with the project directory as working directory. */
    private static final Path REFERENCE = Path.of("docs", "configuration.md");

    @Test
    void readmeTableMatchesTheKeys() throws IOException
    {
        String expected = ConfigKeys.referenceTable().trim();
        String howToFix = "Paste the output of ConfigKeys.referenceTable(), which follows, between the lines "
            + START + " and " + END + " in docs/configuration.md:\n" + expected + "\n";

        assertTrue(Files.isRegularFile(REFERENCE), "docs/configuration.md not found in " + Path.of("").toAbsolutePath() + ". " + howToFix);
        String readme = Files.readString(REFERENCE, StandardCharsets.UTF_8).replace("\r\n", "\n");

        int start = readme.indexOf(START);
        int end = readme.indexOf(END);
        assertTrue(start >= 0, "docs/configuration.md has no line " + START + ". " + howToFix);
        assertTrue(end >= 0, "docs/configuration.md has no line " + END + ". " + howToFix);
        assertTrue(start < end, START + " must come before " + END + " in docs/configuration.md. " + howToFix);
        assertEquals(start, readme.lastIndexOf(START), START + " must appear only once in docs/configuration.md");
        assertEquals(end, readme.lastIndexOf(END), END + " must appear only once in docs/configuration.md");

        String actual = readme.substring(start + START.length(), end).trim();
        assertEquals(expected, actual, "docs/configuration.md's table is out of date. " + howToFix);
    }

    @Test
    void tableListsEveryKeyOnceInOrder()
    {
        String[] lines = ConfigKeys.referenceTable().trim().split("\n");
        assertEquals("| key | default | accepts | meaning |", lines[0]);
        assertEquals("|---|---|---|---|", lines[1]);
        assertEquals(ConfigKeys.ALL.size() + 2, lines.length);
        for (int i = 0; i < ConfigKeys.ALL.size(); i++)
        {
            ConfigKey<?> key = ConfigKeys.ALL.get(i);
            String line = lines[i + 2];
            assertTrue(line.startsWith("| `" + key.name() + "` | "), line);
            assertTrue(line.endsWith(" | " + key.parser().accepts() + " | " + key.description() + " |"), line);
            // A pipe inside a cell would break the Markdown table.
            assertEquals(5, line.chars().filter(c -> c == '|').count(), "stray '|' in: " + line);
        }
    }

    /** The range is declared with the parser that enforces it; a bare lambda says nothing and must be described. */
    @Test
    void everyKeySaysWhatItAccepts()
    {
        for (ConfigKey<?> key : ConfigKeys.ALL)
        {
            String accepts = key.parser().accepts();
            assertFalse(accepts.isBlank(), key.name() + ": its parser does not say what it accepts (wrap it with ValueParser.described)");
            assertTrue(accepts.length() <= 40, key.name() + ": keep the accepts text to a few words: " + accepts);
        }
    }
}
