package io.sandgate.secrets;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.concurrent.Executor;

import io.github.jopenlibs.vault.EnvironmentLoader;
import io.github.jopenlibs.vault.Vault;
import io.github.jopenlibs.vault.VaultConfig;
import io.github.jopenlibs.vault.VaultException;
import io.sandgate.config.VaultSettings;
import io.sandgate.core.Secret;
import io.sandgate.secrets.SecretUnavailableException.Reason;

/**
 * One Vault as the settings describe it: clients bound to a token, sharing one HTTP client, and
 * failed calls described without anything Vault sent back.
 */
final class VaultConnection
{
    /** The client reads VAULT_ADDR and VAULT_TOKEN when unset; this source takes only its settings. */
    private static final EnvironmentLoader NO_ENVIRONMENT = new EnvironmentLoader()
    {
        @Override
        public String loadVariable(String name)
        {
            return null;
        }
    };

    private final VaultSettings settings;
    private final HttpClient httpClient;

    /** @param executor runs the HTTP client's asynchronous work (the gateway's workers) */
    VaultConnection(VaultSettings settings, Executor executor)
    {
        this.settings = settings;
        this.httpClient = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(settings.openTimeout())
            .executor(executor)
            .build();
    }

    /** A client that sends {@code token}; with null, one for logging in. */
    Vault client(Secret token)
    {
        try
        {
            VaultConfig config = new VaultConfig()
                .address(settings.address())
                .httpClient(httpClient)
                .openTimeout(seconds(settings.openTimeout()))
                .readTimeout(seconds(settings.readTimeout()))
                .prefixPath(settings.kvMount())
                .engineVersion(2)
                .environmentLoader(NO_ENVIRONMENT);
            if (token != null)
                config.token(token.reveal());
            if (settings.namespace().isPresent())
                config.nameSpace(settings.namespace().get());
            return Vault.create(config.build(), 2);
        }
        catch (VaultException x)
        {
            throw new IllegalArgumentException("vault client settings rejected: address " + settings.address());
        }
    }

    /**
     * A safe description of a failed call: the client's own message quotes Vault's response body,
     * so it is read for the seal marker but never passed on.
     */
    SecretUnavailableException unavailable(VaultException x, String what)
    {
        int status = x.getHttpStatusCode();
        String message = x.getMessage() == null ? "" : x.getMessage();
        if (status == 503 && message.contains("Vault is sealed"))
            return new SecretUnavailableException(Reason.SOURCE_DOWN, "vault is sealed (" + what + ")");
        if (status == 0)
        {
            Throwable cause = x.getCause();
            while (cause != null && cause.getCause() != null && cause.getCause() != cause)
                cause = cause.getCause();
            String why = cause == null ? "" : " (" + cause.getClass().getSimpleName() + ")";
            return new SecretUnavailableException(Reason.SOURCE_DOWN,
                "vault unreachable at " + settings.address() + why + " during " + what);
        }
        return new SecretUnavailableException(Reason.SOURCE_DOWN, "vault answered HTTP " + status + " to the " + what);
    }

    /** Vault's client counts in whole seconds. */
    private static int seconds(Duration duration)
    {
        long ceil = (duration.toMillis() + 999) / 1000;
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, ceil));
    }
}
