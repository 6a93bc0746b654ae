package io.sandgate.ingress;

import java.util.regex.Pattern;

/**
 * What a sandbox id may look like. The pattern is always matched whole, and the length is checked
 * first, so an overlong id never reaches the regex engine.
 */
record IdSyntax(Pattern pattern, int maxLength)
{
    /** Characters an id-less first path segment (an asset directory or file) may use. */
    private static final Pattern PLAIN_SEGMENT = Pattern.compile("[A-Za-z0-9._~!$&'()*+,;=:@-]{1,255}");

    boolean isId(String candidate)
    {
        return candidate != null && !candidate.isEmpty() && candidate.length() <= maxLength && pattern.matcher(candidate).matches();
    }

    /** Whether the segment has the shape of an id but is too long, e.g. 200 digits. */
    boolean isOverlongId(String candidate)
    {
        // Only the allowed length is matched: a huge segment never reaches the regex engine whole.
        return candidate.length() > maxLength && pattern.matcher(candidate).region(0, maxLength).matches();
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
        return PLAIN_SEGMENT.matcher(segment).matches() && !segment.equals(".") && !segment.equals("..");
    }
}
