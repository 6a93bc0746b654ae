package io.sandgate.ingress;

import java.util.regex.Pattern;

import io.sandgate.config.IngressConfig;

/**
 * What a sandbox id may look like. The pattern is always matched whole, and the length is checked
 * first, so an overlong id never reaches the regex engine. The default pattern ({@code \d+}) and
 * the plain-segment check run as loops over the characters: they are asked on every request, and
 * a regex matcher is an allocation each time. Whatever reads an id from outside (a request, a pod's
 * label, an admin call) asks this class, so that every face takes the same ids.
 */
public final class IdSyntax
{
    /** Characters an id-less first path segment (an asset directory or file) may use, besides letters and digits. */
    private static final String PLAIN_PUNCTUATION = "._~!$&'()*+,;=:@-";
    private static final int PLAIN_MAX_LENGTH = 255;
    private static final boolean[] PLAIN = new boolean[128];

    static
    {
        for (char c = '0'; c <= '9'; c++)
            PLAIN[c] = true;
        for (char c = 'A'; c <= 'Z'; c++)
            PLAIN[c] = true;
        for (char c = 'a'; c <= 'z'; c++)
            PLAIN[c] = true;
        for (char c : PLAIN_PUNCTUATION.toCharArray())
            PLAIN[c] = true;
    }

    private final Pattern pattern;
    private final int maxLength;
    /** Whether the pattern is the default, ASCII digits: checked by a loop. */
    private final boolean digits;

    IdSyntax(Pattern pattern, int maxLength)
    {
        this.pattern = pattern;
        this.maxLength = maxLength;
        // \d is ASCII digits unless the pattern asks for Unicode classes.
        this.digits = pattern.pattern().equals("\\d+") && (pattern.flags() & Pattern.UNICODE_CHARACTER_CLASS) == 0;
    }

    /** The ids {@code ingress.id-pattern} and {@code ingress.id-max-length} allow. */
    public static IdSyntax of(IngressConfig config)
    {
        return new IdSyntax(config.idPattern(), config.idMaxLength());
    }

    /** Whether ids are checked by a loop over their characters, not by the regex engine. */
    boolean byLoop()
    {
        return digits;
    }

    public boolean isId(String candidate)
    {
        return candidate != null && !candidate.isEmpty() && candidate.length() <= maxLength && matches(candidate, candidate.length());
    }

    /** Whether the segment has the shape of an id but is too long, e.g. 200 digits. */
    boolean isOverlongId(String candidate)
    {
        // Only the allowed length is matched: a huge segment never reaches the regex engine whole.
        return candidate.length() > maxLength && matches(candidate, maxLength);
    }

    /** Whether the first {@code length} characters match the pattern whole. */
    private boolean matches(String candidate, int length)
    {
        if (!digits)
            return pattern.matcher(candidate).region(0, length).matches();
        if (length == 0)
            return false;
        for (int i = 0; i < length; i++)
        {
            char c = candidate.charAt(i);
            if (c < '0' || c > '9')
                return false;
        }
        return true;
    }

    /**
     * Whether the segment is an id with path parameters, e.g. {@code 42;x}. The servlet container
     * maps such a request as {@code /vnc/42/}, so it must not reach another sandbox by the cookie.
     */
    boolean isIdWithParameters(String segment)
    {
        int semicolon = segment.indexOf(';');
        return semicolon > 0 && isId(segment.substring(0, semicolon));
    }

    /**
     * Whether a first segment that is not an id can be forwarded as an ordinary path: printable
     * ASCII without percent-escapes, and not a dot segment. Anything else is an attempt to smuggle
     * an id or a traversal past the pattern.
     */
    static boolean isPlainSegment(String segment)
    {
        int length = segment.length();
        if (length == 0 || length > PLAIN_MAX_LENGTH || segment.equals(".") || segment.equals(".."))
            return false;
        for (int i = 0; i < length; i++)
        {
            char c = segment.charAt(i);
            if (c >= PLAIN.length || !PLAIN[c])
                return false;
        }
        return true;
    }
}
