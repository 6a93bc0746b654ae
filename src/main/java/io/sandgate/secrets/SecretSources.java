package io.sandgate.secrets;

import java.time.Clock;
import java.util.Optional;

import io.sandgate.config.CredentialsConfig;
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
     */
    public static SecretSource open(CredentialsConfig config, Clock clock)
    {
        if (config.credentials().isEmpty() && config.agents().isEmpty())
            return empty();
        return switch (config.source())
        {
            case FILE -> new FileSecretSource(new FileSecretSettings(config.file()), clock);
            case ENV -> EnvSecretSource.fromSystem();
            case VAULT -> new VaultSecretSource(vault(config.vault()), clock);
        };
    }

    static VaultSettings vault(CredentialsConfig.Vault vault)
    {
        VaultAuth auth = switch (vault.auth())
        {
            case TOKEN -> new VaultAuth.Token(vault.token().orElseThrow(() -> missing("egress.secrets.vault.token", "token")));
            case APPROLE -> new VaultAuth.AppRole(new Secret(vault.roleId().orElseThrow(() -> missing("egress.secrets.vault.role-id", "approle"))),
                vault.secretId().orElseThrow(() -> missing("egress.secrets.vault.secret-id", "approle")));
            case KUBERNETES -> new VaultAuth.Kubernetes(vault.kubernetesRole().orElseThrow(() -> missing("egress.secrets.vault.kubernetes-role", "kubernetes")),
                vault.kubernetesJwtPath(), "kubernetes");
        };
        return VaultSettings.of(vault.address().orElseThrow(), auth)
            .withNamespace(vault.namespace().orElse(null))
            .withKvMount(vault.mount())
            .withPathPrefix(vault.prefix())
            .withRefreshInterval(vault.refresh())
            .withCacheMaxAge(vault.maxAge());
    }

    private static IllegalArgumentException missing(String key, String auth)
    {
        return new IllegalArgumentException(key + ": missing (expected: a value when egress.secrets.vault.auth is " + auth + ")");
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
