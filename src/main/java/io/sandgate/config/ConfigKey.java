package io.sandgate.config;

import java.util.Locale;
import java.util.Objects;

/**
 * One setting: its dotted name, its default (null: none), how its value is parsed, and what it
 * means. The same name is used in the YAML file, as context-param and system property
 * {@code sandgate.<name>}, and as environment variable {@code SANDGATE_<NAME_UPPER_SNAKE>}.
 *
 * @param name dotted name, e.g. {@code ingress.cookie.name}
 * @param defaultValue the raw default, parsed like any other value; null when the key has none
 * @param defaultText how the default reads in the reference table
 * @param parser parses raw values, refuses those outside the key's range or shape, and says in a few words
 *               what it accepts (the reference table's "accepts" column)
 * @param description one line for the reference table
 * @param secret whether the value must be redacted wherever it is shown
 * @param <T> the parsed type
 */
public record ConfigKey<T>(String name, String defaultValue, String defaultText, ValueParser<T> parser,
                           String description, boolean secret)
{
    public ConfigKey
    {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(parser, "parser");
        if (!name.matches("[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)*"))
            throw new IllegalArgumentException("name: " + name + " (expected: lower-case dotted words)");
    }

    public static <T> ConfigKey<T> of(String name, String defaultValue, ValueParser<T> parser, String description)
    {
        return new ConfigKey<>(name, defaultValue, defaultValue == null ? "(none)" : defaultValue, parser, description, false);
    }

    public String propertyName()
    {
        return "sandgate." + name;
    }

    public String envName()
    {
        return envName(name);
    }

    static String envName(String dottedName)
    {
        return "SANDGATE_" + dottedName.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }
}
