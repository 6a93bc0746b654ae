package io.sandgate.secrets;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

import io.sandgate.config.CredentialsConfig;
import io.sandgate.core.Secret;

/**
 * Secrets from environment variables: the secret {@code openai} is {@code SANDGATE_SECRET_OPENAI},
 * {@code github/app-key} is {@code SANDGATE_SECRET_GITHUB_APP_KEY}. The environment is read when the
 * process starts and never changes after, so a rotation needs a restart; use the file or Vault
 * source where that matters.
 */
public final class EnvSecretSource implements SecretSource
{
    public static final String PREFIX = CredentialsConfig.SECRET_VARIABLE_PREFIX;

    private final Map<String, String> environment;

    /** @param environment {@code System.getenv()} in production, a plain map in tests */
    public EnvSecretSource(Map<String, String> environment)
    {
        this.environment = Map.copyOf(Objects.requireNonNull(environment, "environment"));
    }

    /**
     * The source over the {@code SANDGATE_SECRET_*} variables the configuration captured at start-up
     * (from the process's environment, or the map a test passed in its place).
     */
    public static EnvSecretSource of(Map<String, Secret> variables)
    {
        Map<String, String> values = new HashMap<>();
        variables.forEach((name, value) -> values.put(name, value.reveal()));
        return new EnvSecretSource(values);
    }

    /** The variable that holds a secret: upper case, every character outside [A-Z0-9] becomes '_'. */
    public static String variableName(String secretName)
    {
        String upper = secretName.toUpperCase(Locale.ROOT);
        StringBuilder variable = new StringBuilder(PREFIX.length() + upper.length()).append(PREFIX);
        for (int i = 0; i < upper.length(); i++)
        {
            char c = upper.charAt(i);
            boolean plain = (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
            variable.append(plain ? c : '_');
        }
        return variable.toString();
    }

    @Override
    public Secret get(String name)
    {
        Objects.requireNonNull(name, "name");
        String variable = variableName(name);
        String value = environment.get(variable);
        // An empty variable is how shells "unset" things by accident; treat it as absent.
        if (value == null || value.isEmpty())
            throw new SecretUnavailableException(SecretUnavailableException.Reason.UNKNOWN,
                "secret '" + name + "' not found: environment variable " + variable + " is not set");
        return new Secret(value);
    }

    @Override
    public String kind()
    {
        return "env";
    }
}
