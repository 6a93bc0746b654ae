package io.sandgate.secrets;

import io.sandgate.config.VaultAuth;
import io.sandgate.config.VaultSettings;
import io.sandgate.core.Secret;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Where a secret name points in KV v2. */
class VaultLocationTest
{
    private static final VaultSettings SETTINGS = VaultSettings.of("https://vault.internal:8200", new VaultAuth.Token(new Secret("s.root")));

    @Test
    void plainName_isTheDefaultFieldUnderThePrefix()
    {
        VaultLocation location = VaultLocation.of(SETTINGS, "openai");

        assertEquals(new VaultLocation("secret", "sandgate/openai", "value"), location);
        assertEquals("secret/sandgate/openai", location.logicalPath());
        assertEquals("secret/data/sandgate/openai", location.apiPath());
    }

    @Test
    void pathAndField_nameBothWithoutThePrefix()
    {
        assertEquals(new VaultLocation("secret", "team/keys", "github"), VaultLocation.of(SETTINGS, "/team/keys/#github"));
    }

    @Test
    void emptyPrefix_putsNamesAtTheMountsRoot()
    {
        VaultSettings settings = SETTINGS.withPathPrefix("/");

        assertEquals("secret/openai", VaultLocation.of(settings, "openai").logicalPath());
    }

    @ParameterizedTest
    @ValueSource(strings = {"#value", "keys#", "../other#value", "a?b"})
    void namesThatPointNowhereOrElsewhere_areRefused(String name)
    {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, () -> VaultLocation.of(SETTINGS, name));
        assertEquals("secret name '" + name + "' (expected: name or some/path#field)", x.getMessage());
    }
}
