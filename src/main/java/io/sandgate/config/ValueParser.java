package io.sandgate.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import io.sandgate.core.Secret;

/**
 * Turns one raw value (a string from a property, an environment variable or a context-param, or a
 * scalar, list or map from YAML) into a typed value. Throws {@link IllegalArgumentException} with a
 * message that completes "expected: ...". The factories and combinators below also say, in a few words, what
 * the parser accepts ({@link #accepts()}): the "accepts" column of the configuration reference, so that a
 * key's range is written once, where it is enforced.
 *
 * @param <T> the typed value
 */
@FunctionalInterface
public interface ValueParser<T>
{
    T parse(Object raw);

    /**
     * What this parser accepts, in a few words ("duration > 0", "integer 1–65535"). Blank for a bare lambda:
     * ConfigReferenceTest refuses a key whose parser does not say, so wrap one with {@link #described}.
     */
    default String accepts()
    {
        return "";
    }

    /** {@code parser}, saying that it accepts {@code accepts}. */
    static <T> ValueParser<T> described(String accepts, ValueParser<T> parser)
    {
        return new Described<>(accepts, parser instanceof Described<T> d ? d.parser() : parser);
    }

    /** A parser with the words for what it accepts; parsing is the wrapped parser's alone. */
    record Described<T>(String accepts, ValueParser<T> parser) implements ValueParser<T>
    {
        public Described
        {
            if (accepts == null || accepts.isBlank() || accepts.indexOf('|') >= 0)
                throw new IllegalArgumentException("accepts: " + accepts + " (expected: a few words, no '|', for a Markdown table cell)");
        }

        @Override
        public T parse(Object raw)
        {
            return parser.parse(raw);
        }
    }

    /** This parser's value turned into another by {@code convert}; accepts what {@code expected} says, without its article. */
    default <U> ValueParser<U> then(Function<? super T, U> convert, String expected)
    {
        return then(convert, expected, brief(expected));
    }

    /** This parser's value turned into another by {@code convert}, which may refuse it with an IllegalArgumentException. */
    default <U> ValueParser<U> then(Function<? super T, U> convert, String expected, String accepts)
    {
        return described(accepts, raw ->
        {
            T value = parse(raw);
            try
            {
                return convert.apply(value);
            }
            catch (IllegalArgumentException x)
            {
                throw new IllegalArgumentException(expected);
            }
        });
    }

    /** As {@link #where(Predicate, String, String)}, accepting what {@code expected} says, without its article. */
    default ValueParser<T> where(Predicate<? super T> ok, String expected)
    {
        return where(ok, expected, brief(expected));
    }

    /**
     * This parser, refusing the values {@code ok} rejects: a declaration's range or shape.
     *
     * @param expected completes "expected: ..." for a value refused either way
     * @param accepts the same in a few words, for the reference table
     */
    default ValueParser<T> where(Predicate<? super T> ok, String expected, String accepts)
    {
        return described(accepts, raw ->
        {
            T value;
            try
            {
                value = parse(raw);
            }
            catch (IllegalArgumentException x)
            {
                throw new IllegalArgumentException(expected);
            }
            if (!ok.test(value))
                throw new IllegalArgumentException(expected);
            return value;
        });
    }

    /** An "expected: ..." text without its leading article, as an "accepts" text: "a file path" accepts "file path". */
    private static String brief(String expected)
    {
        return expected.replaceFirst("^(a|an) ", "");
    }

    static ValueParser<String> string()
    {
        return described("string", raw -> scalar(raw, "a string"));
    }

    static ValueParser<Secret> secret()
    {
        return described("non-empty secret", raw ->
        {
            String value = scalar(raw, "a non-empty secret");
            if (value.isEmpty())
                throw new IllegalArgumentException("a non-empty secret");
            return new Secret(value);
        });
    }

    /** A secret of at least this many bytes (UTF-8); the message never holds the value. */
    static ValueParser<Secret> secret(int minBytes)
    {
        return secret().where(s -> s.bytes().length >= minBytes, "a secret of at least " + minBytes + " bytes", "secret, ≥ " + minBytes + " bytes");
    }

    /** A string matching {@code shape} whole; accepts what {@code expected} says, without its article. */
    static ValueParser<String> matching(String shape, String expected)
    {
        return matching(shape, expected, brief(expected));
    }

    /** A string matching {@code shape} whole. */
    static ValueParser<String> matching(String shape, String expected, String accepts)
    {
        Pattern pattern = Pattern.compile(shape);
        return string().where(s -> pattern.matcher(s).matches(), expected, accepts);
    }

    /** An absolute http:// or https:// URL with a host. */
    static ValueParser<URI> url()
    {
        String expected = "an http:// or https:// URL";
        return described("URL", raw ->
        {
            try
            {
                URI uri = new URI(raw.toString().trim());
                if (uri.getScheme() != null && uri.getScheme().matches("https?") && uri.getHost() != null)
                    return uri;
            }
            catch (URISyntaxException x)
            {
                // Said below.
            }
            throw new IllegalArgumentException(expected);
        });
    }

    static ValueParser<Integer> integer(int min, int max)
    {
        String expected = "an integer from " + min + " to " + max;
        String accepts = max == Integer.MAX_VALUE ? "integer ≥ " + min : "integer " + min + "–" + max;
        return described(accepts, raw ->
        {
            try
            {
                int value = Integer.parseInt(scalar(raw, expected).trim());
                if (value < min || value > max)
                    throw new IllegalArgumentException(expected);
                return value;
            }
            catch (NumberFormatException x)
            {
                throw new IllegalArgumentException(expected);
            }
        });
    }

    static ValueParser<Boolean> bool()
    {
        return described("true/false", raw ->
        {
            String value = scalar(raw, "true or false").trim().toLowerCase(Locale.ROOT);
            return switch (value)
            {
                case "true", "yes", "on" -> true;
                case "false", "no", "off" -> false;
                default -> throw new IllegalArgumentException("true or false");
            };
        });
    }

    Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)");

    String DURATION_EXPECTED = "a duration such as 500ms, 30s, 5m, 1h or PT1H";

    /** A duration above zero: timeouts and intervals, where zero would mean at once or always. */
    static ValueParser<Duration> positiveDuration()
    {
        return duration().where(d -> !d.isZero(), DURATION_EXPECTED + ", > 0", "duration > 0");
    }

    /** A duration of at least {@code min}. */
    static ValueParser<Duration> duration(Duration min)
    {
        return duration().where(d -> d.compareTo(min) >= 0, DURATION_EXPECTED + ", at least " + durationText(min), "duration ≥ " + durationText(min));
    }

    /** Durations as {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 1d} or ISO-8601 ({@code PT1H}). */
    static ValueParser<Duration> duration()
    {
        String expected = DURATION_EXPECTED;
        return described("duration", raw ->
        {
            String value = scalar(raw, expected).trim();
            Matcher m = DURATION.matcher(value);
            if (m.matches())
            {
                try
                {
                    long n = Long.parseLong(m.group(1));
                    return switch (m.group(2))
                    {
                        case "ms" -> Duration.ofMillis(n);
                        case "s" -> Duration.ofSeconds(n);
                        case "m" -> Duration.ofMinutes(n);
                        case "h" -> Duration.ofHours(n);
                        default -> Duration.ofDays(n);
                    };
                }
                catch (ArithmeticException | NumberFormatException x)
                {
                    throw new IllegalArgumentException(expected);
                }
            }
            try
            {
                Duration d = Duration.parse(value);
                if (d.isNegative())
                    throw new IllegalArgumentException(expected);
                return d;
            }
            catch (DateTimeParseException x)
            {
                throw new IllegalArgumentException(expected);
            }
        });
    }

    /** A duration as the shortest text {@link #duration()} reads back: {@code 1h}, {@code 5m}, {@code 30s}, {@code 500ms}. */
    static String durationText(Duration duration)
    {
        long millis = duration.toMillis();
        if (millis == 0)
            return "0s";
        if (millis % 3_600_000 == 0)
            return millis / 3_600_000 + "h";
        if (millis % 60_000 == 0)
            return millis / 60_000 + "m";
        if (millis % 1000 == 0)
            return millis / 1000 + "s";
        return millis + "ms";
    }

    /** An instant such as {@code 2027-01-31T00:00:00Z}; YAML reads an unquoted timestamp as a date, which is taken as is. */
    static ValueParser<Instant> instant()
    {
        String expected = "an instant such as 2027-01-31T00:00:00Z";
        return described("ISO-8601 instant", raw ->
        {
            if (raw instanceof Date date)
                return date.toInstant();
            try
            {
                return Instant.parse(scalar(raw, expected));
            }
            catch (DateTimeParseException x)
            {
                throw new IllegalArgumentException(expected);
            }
        });
    }

    static <E extends Enum<E>> ValueParser<E> oneOf(Class<E> type)
    {
        List<String> names = new ArrayList<>();
        for (E e : type.getEnumConstants())
            names.add(e.name().toLowerCase(Locale.ROOT));
        String expected = "one of " + String.join(", ", names);
        return described(expected, raw ->
        {
            String value = scalar(raw, expected).trim().toUpperCase(Locale.ROOT).replace('-', '_');
            try
            {
                return Enum.valueOf(type, value);
            }
            catch (IllegalArgumentException x)
            {
                throw new IllegalArgumentException(expected);
            }
        });
    }

    static ValueParser<Pattern> regex()
    {
        return described("regular expression", raw ->
        {
            try
            {
                return Pattern.compile(scalar(raw, "a regular expression"));
            }
            catch (PatternSyntaxException x)
            {
                throw new IllegalArgumentException("a regular expression (" + x.getDescription() + ")");
            }
        });
    }

    /** A YAML list, or a comma-separated string from a property or environment variable. */
    static ValueParser<List<String>> list()
    {
        return described("list of strings", raw ->
        {
            List<String> result = new ArrayList<>();
            if (raw instanceof List<?> items)
            {
                for (Object item : items)
                    result.add(scalar(item, "a list of strings"));
            }
            else
            {
                for (String item : scalar(raw, "a list of strings").split(","))
                {
                    if (!item.isBlank())
                        result.add(item.trim());
                }
            }
            return List.copyOf(result);
        });
    }

    /** As {@link #listOf(Function, String, String)}, accepting what {@code expected} says, without its article. */
    static <T> ValueParser<List<T>> listOf(Function<String, T> element, String expected)
    {
        return listOf(element, expected, brief(expected));
    }

    /**
     * A list as {@link #list()} reads it, each element parsed by {@code element}.
     *
     * @param expected what the whole list should be, such as "ports from 1 to 65535, such as 443,8443"
     * @param accepts the same in a few words, for the reference table, such as "list of ports 1–65535"
     */
    static <T> ValueParser<List<T>> listOf(Function<String, T> element, String expected, String accepts)
    {
        ValueParser<List<String>> items = list();
        return described(accepts, raw ->
        {
            List<T> result = new ArrayList<>();
            for (String item : items.parse(raw))
            {
                try
                {
                    result.add(element.apply(item.trim()));
                }
                catch (IllegalArgumentException x)
                {
                    throw new IllegalArgumentException(expected + "; " + item + " is not one");
                }
            }
            return List.copyOf(result);
        });
    }

    /** A YAML map, or {@code k1=v1,k2=v2} from a property or environment variable. */
    static ValueParser<Map<String, String>> map()
    {
        String expected = "a map of strings (YAML map, or k1=v1,k2=v2)";
        return described("map of strings", raw ->
        {
            Map<String, String> result = new LinkedHashMap<>();
            if (raw instanceof Map<?, ?> entries)
            {
                entries.forEach((k, v) -> result.put(scalar(k, expected), scalar(v, expected)));
            }
            else
            {
                for (String pair : scalar(raw, expected).split(","))
                {
                    if (pair.isBlank())
                        continue;
                    int eq = pair.indexOf('=');
                    if (eq <= 0)
                        throw new IllegalArgumentException(expected);
                    result.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
                }
            }
            return Map.copyOf(result);
        });
    }

    /**
     * A YAML list of maps, or the same as JSON from a property or environment variable
     * ({@code [{"name":"files","url":"http://..."}]}).
     */
    static ValueParser<List<Map<?, ?>>> listOfMaps()
    {
        String expected = "a list of maps (YAML, or JSON such as [{\"name\":\"x\",\"url\":\"http://...\"}])";
        return described("list of maps", raw ->
        {
            Object value = raw instanceof String text ? json(text, expected) : raw;
            if (!(value instanceof List<?> items))
                throw new IllegalArgumentException(expected);
            List<Map<?, ?>> result = new ArrayList<>();
            for (Object item : items)
            {
                if (!(item instanceof Map<?, ?> map))
                    throw new IllegalArgumentException(expected);
                result.add(map);
            }
            return List.copyOf(result);
        });
    }

    /** A YAML map of anything, or the same as JSON from a property or environment variable. */
    static ValueParser<Map<String, ?>> structuredMap()
    {
        String expected = "a map (YAML, or JSON such as {\"pool\":{...}})";
        return described("map", raw ->
        {
            Object value = raw instanceof String text ? json(text, expected) : raw;
            if (!(value instanceof Map<?, ?> map))
                throw new IllegalArgumentException(expected);
            Map<String, Object> result = new LinkedHashMap<>();
            map.forEach((k, v) -> result.put(k.toString(), v));
            return result;
        });
    }

    /** A ratio from 0 to 1, e.g. 0.2 or 20%. */
    static ValueParser<Double> ratio()
    {
        String expected = "a ratio from 0 to 1, such as 0.2 or 20%";
        return described("ratio 0–1 (0.2 or 20%)", raw ->
        {
            String value = scalar(raw, expected).trim();
            try
            {
                double ratio = value.endsWith("%") ? Double.parseDouble(value.substring(0, value.length() - 1)) / 100 : Double.parseDouble(value);
                if (ratio < 0 || ratio > 1)
                    throw new IllegalArgumentException(expected);
                return ratio;
            }
            catch (NumberFormatException x)
            {
                throw new IllegalArgumentException(expected);
            }
        });
    }

    /** Structured values from a property or environment variable come as JSON. */
    private static Object json(String text, String expected)
    {
        try
        {
            return new com.fasterxml.jackson.databind.ObjectMapper().readValue(text, Object.class);
        }
        catch (com.fasterxml.jackson.core.JsonProcessingException x)
        {
            throw new IllegalArgumentException(expected);
        }
    }

    private static String scalar(Object raw, String expected)
    {
        if (raw instanceof String s)
            return s;
        if (raw instanceof Number || raw instanceof Boolean)
            return raw.toString();
        throw new IllegalArgumentException(expected);
    }
}
