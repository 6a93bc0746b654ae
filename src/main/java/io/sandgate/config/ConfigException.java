package io.sandgate.config;

import java.util.List;

/**
 * Thrown when the configuration cannot be used. Carries every problem found, each naming its key and
 * what was expected, so one start-up attempt shows them all.
 */
public class ConfigException extends RuntimeException
{
    private final List<String> problems;

    public ConfigException(List<String> problems)
    {
        super("Invalid Sandgate configuration:\n  - " + String.join("\n  - ", problems));
        this.problems = List.copyOf(problems);
    }

    public ConfigException(String problem)
    {
        this(List.of(problem));
    }

    public List<String> problems()
    {
        return problems;
    }
}
