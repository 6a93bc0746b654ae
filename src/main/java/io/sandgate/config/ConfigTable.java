package io.sandgate.config;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * One table of a structured setting (an egress route, a pool, a node, a credential, an agent, an
 * MCP server) as YAML or JSON gave it. The keys it may have are declared when it is opened and any
 * other is fatal; values are parsed by the same {@link ValueParser}s as flat keys; and every
 * problem names where the value is ({@code egress.routes[0].timeout}), what it was, and what was
 * expected.
 */
final class ConfigTable
{
    private final String where;
    private final Map<?, ?> values;
    /** Where the keys another table gave are, by key: so that a problem names the place it was written. */
    private final Map<String, String> elsewhere;

    private ConfigTable(String where, Map<?, ?> values)
    {
        this(where, values, Map.of());
    }

    private ConfigTable(String where, Map<?, ?> values, Map<String, String> elsewhere)
    {
        this.where = where;
        this.values = values;
        this.elsewhere = elsewhere;
    }

    /**
     * One table made of two, {@code over}'s keys over {@code under}'s (a server's settings over the
     * global ones): a problem with a key names the table that gave it, one with the whole names
     * {@code over}.
     */
    static ConfigTable layered(ConfigTable under, ConfigTable over)
    {
        Map<Object, Object> merged = new LinkedHashMap<>(under.values);
        merged.putAll(over.values);
        Map<String, String> elsewhere = new HashMap<>();
        for (Object key : under.values.keySet())
        {
            if (!over.values.containsKey(key))
                elsewhere.put(key.toString(), under.at(key.toString()));
        }
        return new ConfigTable(over.where, merged, elsewhere);
    }

    /**
     * The table at {@code where}, with no key but {@code keys} (any key when null: a table keyed by names the user chose).
     *
     * @param expected what {@code raw} should have been, for the message when it is not a table
     */
    static ConfigTable of(Object raw, String where, String expected, Set<String> keys)
    {
        if (!(raw instanceof Map<?, ?> map))
            throw new IllegalArgumentException(where + " (expected: " + expected + ")");
        for (Object key : map.keySet())
        {
            if (keys != null && !keys.contains(key.toString()))
                throw new IllegalArgumentException(where + ": unknown key " + key + " (expected: " + String.join(", ", new TreeSet<>(keys)) + ")");
        }
        return new ConfigTable(where, map);
    }

    /** The table under {@code key}, which must be there. */
    ConfigTable table(String key, String expected, Set<String> keys)
    {
        Object raw = values.get(key);
        if (!(raw instanceof Map<?, ?>))
            throw new IllegalArgumentException(where + ": " + key + " (expected: " + expected + ")");
        return of(raw, at(key), expected, keys);
    }

    /** The same values, named by another place in messages. */
    ConfigTable named(String where)
    {
        return new ConfigTable(where, values);
    }

    /** Where this table is, for messages: {@code egress.routes[0]}. */
    String where()
    {
        return where;
    }

    /** Where one of its keys is, for messages: {@code egress.routes[0].timeout}. */
    String at(String key)
    {
        return elsewhere.getOrDefault(key, where + "." + key);
    }

    /** The value as YAML or JSON gave it, or null. */
    Object raw(String key)
    {
        return values.get(key);
    }

    /** The value parsed, or {@code fallback} when the key is absent. */
    <T> T get(String key, ValueParser<T> parser, T fallback)
    {
        Object raw = values.get(key);
        if (raw == null)
            return fallback;
        try
        {
            return parser.parse(raw);
        }
        catch (IllegalArgumentException x)
        {
            throw new IllegalArgumentException(at(key) + ": " + raw + " (expected: " + x.getMessage() + ")");
        }
    }

    /** The value parsed, if the key is there. */
    <T> Optional<T> optional(String key, ValueParser<T> parser)
    {
        return Optional.ofNullable(get(key, parser, null));
    }

    /** The value as text, whatever YAML made of it, or {@code fallback} when the key is absent. */
    String text(String key, String fallback)
    {
        Object raw = values.get(key);
        return raw == null ? fallback : raw.toString();
    }

    /** The value as text, if the key is there. */
    Optional<String> text(String key)
    {
        return Optional.ofNullable(text(key, null));
    }

    /** The value as text; its absence is a problem. */
    String required(String key, String expected)
    {
        Object raw = values.get(key);
        if (raw == null)
            throw new IllegalArgumentException(at(key) + ": missing (expected: " + expected + ")");
        return raw.toString();
    }

    /** The items of a list; none when the key is absent or not a list. */
    List<?> items(String key)
    {
        return values.get(key) instanceof List<?> list ? list : List.of();
    }

    /** The values as given, for a table keyed by names the user chose. */
    Map<?, ?> asMap()
    {
        return values;
    }

    /** The table as given, for messages. */
    @Override
    public String toString()
    {
        return values.toString();
    }
}
