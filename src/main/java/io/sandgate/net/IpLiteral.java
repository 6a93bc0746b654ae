package io.sandgate.net;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Reads IP addresses written as hosts, without ever asking DNS. Only the canonical forms count as
 * literals: a dotted quad of four decimal numbers without leading zeros, or an IPv6 address,
 * bracketed as in a URL or bare, without a zone.
 *
 * <p>Everything else that a URL parser or {@code inet_aton} would still read as IPv4 —
 * {@code 2130706433}, {@code 0x7f.1}, {@code 127.1}, {@code 0177.0.0.1} — is
 * {@linkplain #isNonCanonicalNumeric(String) non-canonical numeric}: whichever component meets
 * such a host next (an egress node, a library, the OS resolver) may read it as an address that
 * was never checked, so callers refuse it instead of guessing which reading wins.
 */
public final class IpLiteral
{
    private static final Pattern DOTTED_QUAD = Pattern.compile(
        "((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)");
    private static final Pattern IPV6_CHARACTERS = Pattern.compile("[0-9A-Fa-f:.]+");
    /** A label that the WHATWG URL parser reads as a number: decimal, octal with a leading 0, or 0x hex. */
    private static final Pattern NUMERIC_LABEL = Pattern.compile("\\d+|0[xX][0-9A-Fa-f]*");

    private IpLiteral()
    {
    }

    /**
     * The address written by {@code host}, or empty when {@code host} is not a canonical literal
     * (a name, a non-canonical number, or malformed).
     */
    public static Optional<InetAddress> parse(String host)
    {
        String text = host;
        boolean bracketed = text.length() > 2 && text.startsWith("[") && text.endsWith("]");
        if (bracketed)
            text = text.substring(1, text.length() - 1);
        boolean ipv6 = text.indexOf(':') >= 0 && IPV6_CHARACTERS.matcher(text).matches();
        boolean ipv4 = !bracketed && DOTTED_QUAD.matcher(text).matches();
        if (!ipv4 && !ipv6)
            return Optional.empty();
        try
        {
            // Safe from DNS: a dotted quad, or text with a colon, is parsed as a literal or refused.
            return Optional.of(InetAddress.getByName(text));
        }
        catch (UnknownHostException x)
        {
            return Optional.empty();
        }
    }

    /**
     * Whether {@code host} would be read as an IPv4 address by a lenient parser although it is not a
     * canonical dotted quad. Follows the WHATWG URL rule "ends in a number": a host whose last label
     * (ignoring one trailing dot) is numeric is an IPv4 address to browsers and to {@code inet_aton},
     * and no registered DNS name ends that way.
     */
    public static boolean isNonCanonicalNumeric(String host)
    {
        String text = host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
        if (text.isEmpty() || DOTTED_QUAD.matcher(host).matches())
            return false;
        String last = text.substring(text.lastIndexOf('.') + 1);
        return NUMERIC_LABEL.matcher(last).matches();
    }

    /** The address as it goes into a URL authority or a CONNECT line: IPv6 in brackets. */
    public static String format(InetAddress address)
    {
        String text = address.getHostAddress();
        return text.indexOf(':') >= 0 ? "[" + text + "]" : text;
    }
}
