package io.sandgate.leak;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One kind of secret the scanner looks for.
 *
 * <p>Contract the scanner relies on: every match of {@code pattern} starts with one of the
 * {@code keywords} (compared ASCII case-insensitively) and is at most {@code maxLength} characters
 * long. The scanner only tries the pattern where a keyword starts, anchored there, and never looks
 * further than {@code maxLength} past it; a pattern that breaks the contract misses secrets rather
 * than failing. Patterns may look one character behind and one ahead of the match. A pattern
 * should fail on the first character that cannot continue a secret: a stream holds output back
 * only while the pattern still reads on.</p>
 *
 * <p>A rule with a {@link Closing} describes a block (a PEM key): {@code pattern} matches only
 * its opening line, and the secret runs on to the end of the closing line. Finding that line by a
 * literal search, rather than by a lazy {@code [\s\S]*?} in the pattern, keeps the work linear
 * when an input repeats the opening line many times.</p>
 *
 * @param id short stable name used in hits, logs and metrics ({@code openai-api-key})
 * @param keywords literal prefixes that start every match, lower case
 * @param pattern the shape of the secret (or of a block's opening line), applied to the body
 *     read as ISO-8859-1
 * @param maxLength upper bound of a match's length in bytes, a block's closing line included
 * @param closing how a block ends; empty for a secret that is one token
 * @param boundary a regex character class no match is ever followed by (see {@link #token}); empty
 *     if not known
 */
public record LeakRule(String id, List<String> keywords, Pattern pattern, int maxLength, Optional<Closing> closing,
                       Optional<String> boundary)
{
    public LeakRule
    {
        Objects.requireNonNull(pattern, "pattern");
        Objects.requireNonNull(closing, "closing");
        Objects.requireNonNull(boundary, "boundary");
        if (boundary.isPresent() && closing.isPresent())
            throw new IllegalArgumentException("boundary of " + id + " (expected: none for a block rule)");
        if (boundary.isPresent() && !(boundary.get().startsWith("[") && boundary.get().endsWith("]")))
            throw new IllegalArgumentException("boundary of " + id + ": " + boundary.get() + " (expected: a character class [...])");
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

    public LeakRule(String id, List<String> keywords, Pattern pattern, int maxLength, Optional<Closing> closing)
    {
        this(id, keywords, pattern, maxLength, closing, Optional.empty());
    }

    /** A rule for a secret that is one token. */
    public LeakRule(String id, List<String> keywords, Pattern pattern, int maxLength)
    {
        this(id, keywords, pattern, maxLength, Optional.empty());
    }

    /** Compiles {@code regex} for a rule whose secret is one token. */
    public static LeakRule of(String id, List<String> keywords, String regex, int maxLength)
    {
        return new LeakRule(id, keywords, Pattern.compile(regex), maxLength);
    }

    /**
     * A rule for a token that is never followed by a character of {@code boundaryClass} (a regex
     * character class such as {@code [A-Za-z0-9_-]}): the look-ahead is appended to {@code regex}
     * here, so the promise holds by construction.
     *
     * <p>The scanner uses it to decide a candidate without the pattern: when every byte from the
     * end of the keyword to {@code maxLength} past the start is in the class, no match can end in
     * the window. One scan of such a run, remembered, then rejects every candidate inside it, so a
     * body of one keyword repeated ({@code sk-sk-sk-...}) costs a few bytes examined per byte
     * rather than a window per keyword.</p>
     */
    public static LeakRule token(String id, List<String> keywords, String regex, String boundaryClass, int maxLength)
    {
        return new LeakRule(id, keywords, Pattern.compile("(?:" + regex + ")(?!" + boundaryClass + ")"), maxLength,
            Optional.empty(), Optional.of(boundaryClass));
    }

    /**
     * A rule for a block: {@code openingRegex} matches the opening line at a keyword; the block
     * ends with the first {@code closingKeyword} at least {@code minGap} bytes after the opening
     * line, which {@code closingRegex} must then match, else there is no secret.
     */
    public static LeakRule block(String id, List<String> keywords, String openingRegex, String closingKeyword,
                                 String closingRegex, int minGap, int maxLength)
    {
        return new LeakRule(id, keywords, Pattern.compile(openingRegex), maxLength,
            Optional.of(new Closing(closingKeyword, Pattern.compile(closingRegex), minGap)));
    }

    /** Per byte, read as ISO-8859-1: whether it is in {@link #boundary}; null without one. */
    boolean[] boundaryBytes()
    {
        if (boundary.isEmpty())
            return null;
        Pattern one = Pattern.compile(boundary.get());
        boolean[] in = new boolean[256];
        for (int b = 0; b < 256; b++)
            in[b] = one.matcher(String.valueOf((char)b)).matches();
        return in;
    }

    /**
     * How a block ends.
     *
     * @param keyword literal that starts the closing line, compared byte for byte
     * @param pattern the closing line, tried anchored where {@code keyword} occurs
     * @param minGap least number of bytes between the opening line and the closing one
     */
    public record Closing(String keyword, Pattern pattern, int minGap)
    {
        public Closing
        {
            Objects.requireNonNull(pattern, "pattern");
            if (keyword == null || keyword.isEmpty())
                throw new IllegalArgumentException("closing keyword: " + keyword + " (expected: not empty)");
            if (minGap < 0)
                throw new IllegalArgumentException("minGap: " + minGap + " (expected: >= 0)");
        }

        byte[] keywordBytes()
        {
            return keyword.getBytes(StandardCharsets.ISO_8859_1);
        }
    }
}
