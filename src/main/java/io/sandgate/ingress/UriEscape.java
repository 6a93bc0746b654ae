package io.sandgate.ingress;

import java.nio.charset.StandardCharsets;

/**
 * A request target as the client sent it, made one that {@link java.net.URI} takes: browsers send
 * some characters unescaped that a URI may not hold ({@code ?q={}}, {@code |}, a {@code %} that
 * starts no escape), and Jetty's server takes them. Escaped, they mean the same to a sandbox, which
 * decodes them.
 */
final class UriEscape
{
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private UriEscape()
    {
    }

    /** The path and query with every character a URI may not hold as it is percent-encoded (as UTF-8); the same string when there is none. */
    static String uriSafe(String pathAndQuery)
    {
        int length = pathAndQuery.length();
        int i = 0;
        while (i < length && isUriChar(pathAndQuery, i))
            i++;
        if (i == length)
            return pathAndQuery;
        StringBuilder safe = new StringBuilder(length + 16).append(pathAndQuery, 0, i);
        for (; i < length; i++)
        {
            if (isUriChar(pathAndQuery, i))
            {
                safe.append(pathAndQuery.charAt(i));
                continue;
            }
            int end = Character.isHighSurrogate(pathAndQuery.charAt(i)) && i + 1 < length ? i + 2 : i + 1;
            for (byte b : pathAndQuery.substring(i, end).getBytes(StandardCharsets.UTF_8))
                safe.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
            i = end - 1;
        }
        return safe.toString();
    }

    /**
     * A character a URI's path or query may hold as it is: RFC 3986's unreserved ones, the
     * sub-delimiters, {@code : @ / ?}, and {@code %} starting an escape. Not {@code #} (the rest
     * would become a fragment) nor {@code [ ]} (a host's only).
     */
    private static boolean isUriChar(String text, int at)
    {
        char c = text.charAt(at);
        if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
            return true;
        if (c == '%')
            return at + 2 < text.length() && isHex(text.charAt(at + 1)) && isHex(text.charAt(at + 2));
        return c < 128 && "-._~:/?@!$&'()*+,;=".indexOf(c) >= 0;
    }

    private static boolean isHex(char c)
    {
        return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F';
    }
}
