package io.sandgate.secrets;

import java.time.Clock;

import io.sandgate.config.CredentialsConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.core.Secret;

/** Opens the secret source the configuration names. */
public final class SecretSources
{
    private SecretSources()
    {
    }

    /**
     * The configured source; with no credentials and no agents configured, an empty one, so that a
     * gateway without credential injection needs no secrets file.
     *
     * @param schedulers the gateway's threads, for sources that refresh in the background
     */
    public static SecretSource open(CredentialsConfig config, Clock clock, Schedulers schedulers)
    {
        if (config.credentials().isEmpty() && config.agents().isEmpty())
            return empty();
        return source(config, clock, schedulers);
    }

    /**
     * The configured source for another face than egress's (the MCP face's upstream and client
     * secrets), or an empty one when it needs none.
     */
    public static SecretSource open(CredentialsConfig config, boolean needed, Clock clock, Schedulers schedulers)
    {
        return needed ? source(config, clock, schedulers) : empty();
    }

    private static SecretSource source(CredentialsConfig config, Clock clock, Schedulers schedulers)
    {
        return switch (config.source())
        {
            case FILE -> new FileSecretSource(new FileSecretSettings(config.file()), clock);
            case ENV -> EnvSecretSource.of(config.environment());
            case VAULT -> new VaultSecretSource(config.vault().orElseThrow(), clock, schedulers);
        };
    }

    private static SecretSource empty()
    {
        return new SecretSource()
        {
            @Override
            public Secret get(String name)
            {
                throw new SecretUnavailableException(SecretUnavailableException.Reason.UNKNOWN, "no secret source configured (secret '" + name + "')");
            }

            @Override
            public String kind()
            {
                return "none";
            }
        };
    }
}
