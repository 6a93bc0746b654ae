package io.sandgate.leak;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * The one place that decides what of a request may be written down: access log, error bodies,
 * admin API and metrics all go through it, so a credential redacted in one is redacted in all.
 * Immutable; {@link #withScanner(LeakScanner)} builds the variant for rotated credentials.
 */
public final class Redactor
{
    public static final String REDACTED = "[REDACTED]";
    /** {@link #REDACTED} percent-encoded, as it replaces a secret in a path or query. */
    public static final String REDACTED_IN_URL = "%5BREDACTED%5D";

    /** Headers whose whole value is a credential. */
    public static final Set<String> DEFAULT_HEADERS = Set.of(
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-goog-api-key", "api-key");

    /** Query parameters that carry credentials or signatures. */
    public static final Set<String> DEFAULT_PARAMETERS = Set.of(
        "key", "api_key", "apikey", "token", "access_token", "auth", "sig", "signature", "password", "secret",
        "client_secret", "grant");

    private final LeakScanner scanner;
    private final Set<String> headers;
    private final Set<String> parameters;

    private Redactor(LeakScanner scanner, Set<String> headers, Set<String> parameters)
    {
        this.scanner = Objects.requireNonNull(scanner, "scanner");
        this.headers = headers;
        this.parameters = parameters;
    }

    /** The default header and parameter names, and the built-in leak rules. */
    public static Redactor defaults()
    {
        return of(LeakScanner.defaults());
    }

    /** The default header and parameter names; free text is redacted with {@code scanner}. */
    public static Redactor of(LeakScanner scanner)
    {
        return new Redactor(scanner, DEFAULT_HEADERS, DEFAULT_PARAMETERS);
    }

    /** The same names, with another scanner (for example after held credentials rotated). */
    public Redactor withScanner(LeakScanner replacement)
    {
        return new Redactor(replacement, headers, parameters);
    }

    /** These names and {@code parameter} too (a query parameter named in configuration, as the grant's is). */
    public Redactor withParameter(String parameter)
    {
        Set<String> more = new HashSet<>(parameters);
        more.add(parameter.toLowerCase(Locale.ROOT));
        return new Redactor(scanner, headers, Set.copyOf(more));
    }

    public LeakScanner scanner()
    {
        return scanner;
    }

    /** A header value as it may be written down; null stays null. */
    public String headerValue(String name, String value)
    {
        if (value == null)
            return null;
        if (name != null && headers.contains(name.strip().toLowerCase(Locale.ROOT)))
            return REDACTED;
        return text(value);
    }

    /**
     * A raw query string ({@code a=1&key=...}, no leading {@code ?}) with token parameters'
     * values replaced by {@link #REDACTED} and secrets in other values redacted. Names are compared
     * after percent-decoding, so {@code api%5Fkey} counts as {@code api_key}; everything else is
     * kept byte for byte.
     */
    public String query(String rawQuery)
    {
        if (rawQuery == null || rawQuery.isEmpty())
            return rawQuery;
        StringBuilder out = new StringBuilder(rawQuery.length());
        int from = 0;
        while (from <= rawQuery.length())
        {
            int amp = rawQuery.indexOf('&', from);
            int to = amp < 0 ? rawQuery.length() : amp;
            String pair = rawQuery.substring(from, to);
            int eq = pair.indexOf('=');
            if (eq < 0)
                out.append(url(pair));
            else if (parameters.contains(decodeName(pair.substring(0, eq))))
                out.append(pair, 0, eq + 1).append(REDACTED);
            else
                out.append(pair, 0, eq + 1).append(url(pair.substring(eq + 1)));
            if (amp < 0)
                break;
            out.append('&');
            from = amp + 1;
        }
        return out.toString();
    }

    /** Free text (a message, a body excerpt) with every leak-rule or held-credential match replaced. */
    public String text(String value)
    {
        if (value == null || value.isEmpty())
            return value;
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        byte[] redacted = scanner.redact(bytes);
        // Matches are whole ASCII tokens or whole UTF-8 credentials, so decoding cannot go wrong;
        // the identity check avoids a copy in the common case.
        return redacted.length == bytes.length && Arrays.equals(redacted, bytes)
            ? value
            : new String(redacted, StandardCharsets.UTF_8);
    }

    /**
     * A path, or a value of a query, as it may be written down: as {@link #text}, and with the
     * secrets escaped in it ({@code sk%2Dproj...}, a held key escaped byte by byte) replaced too,
     * by {@link #REDACTED_IN_URL}: whoever reads the URL reads it decoded.
     */
    public String url(String value)
    {
        String plain = text(value);
        if (plain == null || plain.indexOf('%') < 0)
            return plain;
        byte[] raw = plain.getBytes(StandardCharsets.UTF_8);
        PercentDecoded decoded = PercentDecoded.of(raw);
        if (decoded == null)
            return plain;
        List<LeakHit> hits = scanner.scan(decoded.bytes());
        return hits.isEmpty() ? plain : redactInUrl(raw, hits.stream().map(decoded::inRaw).toList());
    }

    /**
     * The line with each hit, in order of start, replaced by {@link #REDACTED_IN_URL}. A hit that
     * starts or ends inside a percent-escape takes the whole escape ({@code %2AIza...} loses its
     * {@code %2} too); overlapping hits share one marker.
     */
    public static String redactInUrl(byte[] line, List<LeakHit> hits)
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream(line.length);
        int cursor = 0;
        // The scanner reports a hit when its rule's match ends, and the rules' matches end in any order.
        for (LeakHit hit : hits.stream().sorted(Comparator.comparingLong(LeakHit::start)).toList())
        {
            int start = (int)hit.start();
            int end = (int)hit.end();
            if (start >= 1 && line[start - 1] == '%')
                start -= 1;
            else if (start >= 2 && line[start - 2] == '%')
                start -= 2;
            for (int escape = Math.max(0, end - 2); escape < end; escape++)
            {
                if (line[escape] == '%')
                    end = Math.min(line.length, Math.max(end, escape + 3));
            }
            if (start >= cursor)
            {
                out.write(line, cursor, start - cursor);
                out.writeBytes(REDACTED_IN_URL.getBytes(StandardCharsets.US_ASCII));
            }
            cursor = Math.max(cursor, end);
        }
        out.write(line, cursor, line.length - cursor);
        return out.toString(StandardCharsets.UTF_8);
    }

    /** Lenient percent-decoding of a parameter name, lower-cased; malformed escapes stay as they are. */
    private static String decodeName(String raw)
    {
        if (raw.indexOf('%') < 0 && raw.indexOf('+') < 0)
            return raw.toLowerCase(Locale.ROOT);
        byte[] out = new byte[raw.length()];
        int n = 0;
        for (int i = 0; i < raw.length(); i++)
        {
            char c = raw.charAt(i);
            if (c == '%' && i + 2 < raw.length() && hex(raw.charAt(i + 1)) >= 0 && hex(raw.charAt(i + 2)) >= 0)
            {
                out[n++] = (byte)(hex(raw.charAt(i + 1)) << 4 | hex(raw.charAt(i + 2)));
                i += 2;
            }
            else
            {
                out[n++] = (byte)(c == '+' ? ' ' : c);
            }
        }
        return new String(out, 0, n, StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
    }

    private static int hex(char c)
    {
        return Character.digit(c, 16);
    }
}
