package io.sandgate.secrets;

import java.net.ConnectException;

import io.github.jopenlibs.vault.VaultException;
import io.sandgate.config.VaultAuth;
import io.sandgate.config.VaultSettings;
import io.sandgate.core.Secret;
import io.sandgate.secrets.SecretUnavailableException.Reason;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** How failed Vault calls are told, without a Vault: what happened, never what Vault sent. */
class VaultConnectionTest
{
    private final VaultConnection connection = new VaultConnection(
        VaultSettings.of("https://vault.internal:8200", new VaultAuth.Token(new Secret("s.root"))), Runnable::run);

    @Test
    void sealedVault_isSaidSo()
    {
        SecretUnavailableException sealed = connection.unavailable(new VaultException("Vault responded with HTTP status code: 503\n"
            + "Response body: {\"errors\":[\"Vault is sealed\"]}", 503), "read of secret/data/sandgate/openai");

        assertEquals(Reason.SOURCE_DOWN, sealed.reason());
        assertEquals("vault is sealed (read of secret/data/sandgate/openai)", sealed.getMessage());
    }

    @Test
    void unreachableVault_namesTheAddressAndTheKindOfFailure()
    {
        SecretUnavailableException unreachable = connection.unavailable(
            new VaultException(new ConnectException("Connection refused")), "token lookup");

        assertEquals("vault unreachable at https://vault.internal:8200 (ConnectException) during token lookup", unreachable.getMessage());
    }

    @Test
    void otherAnswers_giveTheStatusOnly()
    {
        SecretUnavailableException other = connection.unavailable(new VaultException("Response body: sk-leaked", 500), "approle login");

        assertEquals("vault answered HTTP 500 to the approle login", other.getMessage());
        assertFalse(other.getMessage().contains("sk-leaked"));
    }
}
