package io.sandgate.ingress;

import java.util.List;

/**
 * The pairs of a request's {@code Cookie} header, read for the session cookie's (under either of its
 * names, the plain one and the {@code __Host-} one) in one pass, with no copy of a pair that is
 * dropped: the browser's cookies are read on every request.
 *
 * <p>The session cookie's values are read from exactly the pairs that are dropped on the way to the
 * sandbox, so no cookie a request is routed on can reach the sandbox: a second parser, however
 * standard, could read a session cookie in a pair this one keeps (Jetty's reads
 * {@code name = value}).</p>
 */
final class CookiePairs
{
    private CookiePairs()
    {
    }

    /** The pairs but the session cookie's, trimmed and joined by {@code "; "}, or null if none is left. */
    static String withoutSession(String header, String name, String hostName)
    {
        return sessionPairs(header, name, hostName, null);
    }

    /** Adds the session cookie's values to {@code values}; a value in double quotes is read without them. */
    static void addSessionValues(String header, String name, String hostName, List<String> values)
    {
        sessionPairs(header, name, hostName, values);
    }

    /**
     * Walks the pairs of a Cookie header: with {@code values} null, returns the others as
     * {@link #withoutSession} describes; otherwise adds the session cookie's values to it and
     * returns null. A pair is the session cookie's when its name, white space around it ignored, is
     * one of the two names. Dropped as well, though never read: a pair in which one of the names
     * follows a comma, where the older cookie grammar (RFC 2965), and parsers that still accept it,
     * start a cookie.
     */
    private static String sessionPairs(String header, String name, String hostName, List<String> values)
    {
        StringBuilder kept = null;
        int start = 0;
        while (start <= header.length())
        {
            int end = header.indexOf(';', start);
            if (end < 0)
                end = header.length();
            int from = start;
            int to = end;
            // As String.trim() trims.
            while (from < to && header.charAt(from) <= ' ')
                from++;
            while (to > from && header.charAt(to - 1) <= ' ')
                to--;
            if (to > from)
            {
                int value = valueOf(header, from, to, name, hostName);
                if (values != null && value >= 0)
                    values.add(unquoted(header, value, to));
                else if (values == null && value < 0 && !namedAfterComma(header, from, to, name, hostName))
                {
                    if (kept == null)
                        kept = new StringBuilder(header.length());
                    else
                        kept.append("; ");
                    kept.append(header, from, to);
                }
            }
            start = end + 1;
        }
        return kept == null ? null : kept.toString();
    }

    /** Where the value of the trimmed pair from {@code from} to {@code to} starts, if the pair is the session cookie's; else -1. */
    private static int valueOf(String header, int from, int to, String name, String hostName)
    {
        int equals = header.indexOf('=', from);
        if (equals < 0 || equals >= to)
            return -1;
        int nameEnd = equals;
        while (nameEnd > from && header.charAt(nameEnd - 1) <= ' ')
            nameEnd--;
        if (!isName(header, from, nameEnd, name) && !isName(header, from, nameEnd, hostName))
            return -1;
        int value = equals + 1;
        while (value < to && header.charAt(value) <= ' ')
            value++;
        return value;
    }

    private static boolean namedAfterComma(String header, int from, int to, String name, String hostName)
    {
        for (int comma = header.indexOf(',', from); comma >= 0 && comma < to; comma = header.indexOf(',', comma + 1))
        {
            int next = comma + 1;
            while (next < to && header.charAt(next) <= ' ')
                next++;
            if (valueOf(header, next, to, name, hostName) >= 0)
                return true;
        }
        return false;
    }

    private static boolean isName(String header, int from, int to, String name)
    {
        return to - from == name.length() && header.startsWith(name, from);
    }

    private static String unquoted(String header, int from, int to)
    {
        if (to - from >= 2 && header.charAt(from) == '"' && header.charAt(to - 1) == '"')
            return header.substring(from + 1, to - 1);
        return header.substring(from, to);
    }
}
