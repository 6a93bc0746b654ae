package io.sandgate.leak;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One kind of secret the scanner looks for.
 *
 * <p>Contract the scanner relies on: every match of {@code pattern} starts with one of the
 * {@code keywords} (compared ASCII case-insensitively) and is at most {@code maxLength} characters
 * long. The scanner only tries the pattern where a keyword starts, anchored there, and never looks
 * further than {@code maxLength} past it; a pattern that breaks the contract misses secrets rather
 * than failing. Patterns may look one character behind and one ahead of the match.</p>
 *
 * @param id short stable name used in hits, logs and metrics ({@code openai-api-key})
 * @param keywords literal prefixes that start every match, lower case
 * @param pattern the shape of the secret, applied to the body read as ISO-8859-1
 * @param maxLength upper bound of a match's length in bytes
 */
public record LeakRule(String id, List<String> keywords, Pattern pattern, int maxLength)
{
    public LeakRule
    {
        Objects.requireNonNull(pattern, "pattern");
        if (id == null || id.isBlank())
            throw new IllegalArgumentException("id: " + id + " (expected: a non-blank name)");
        if (maxLength <= 0)
            throw new IllegalArgumentException("maxLength of " + id + ": " + maxLength + " (expected: > 0)");
        if (keywords == null || keywords.isEmpty())
            throw new IllegalArgumentException("keywords of " + id + ": " + keywords + " (expected: at least one)");
        keywords = keywords.stream().map(k -> k.toLowerCase(Locale.ROOT)).toList();
        for (String keyword : keywords)
        {
            if (keyword.isEmpty())
                throw new IllegalArgumentException("keywords of " + id + ": " + keywords + " (expected: no empty keyword)");
            if (keyword.length() > maxLength)
                throw new IllegalArgumentException("keyword " + keyword + " of " + id + " is longer than maxLength " + maxLength);
        }
    }

    /** Compiles {@code regex} for a rule. */
    public static LeakRule of(String id, List<String> keywords, String regex, int maxLength)
    {
        return new LeakRule(id, keywords, Pattern.compile(regex), maxLength);
    }
}
