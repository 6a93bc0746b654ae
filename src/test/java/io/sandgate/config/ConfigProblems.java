package io.sandgate.config;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertThrows;

/** For tests of what the loader refuses: the message of the one {@link ConfigException} it throws. */
final class ConfigProblems
{
    private ConfigProblems()
    {
    }

    /** Every problem {@link ConfigLoader#fromValues} reports about {@code values}, as one message; fails if it reports none. */
    static String problems(Map<String, ?> values)
    {
        return assertThrows(ConfigException.class, () -> ConfigLoader.fromValues(values)).getMessage();
    }
}
