package io.sandgate.secrets;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EnvSecretSourceTest
{
    @Test
    void variableNameIsUpperCasedWithEveryOtherCharacterAnUnderscore()
    {
        assertEquals("SANDGATE_SECRET_OPENAI", EnvSecretSource.variableName("openai"));
        assertEquals("SANDGATE_SECRET_GITHUB_APP_KEY", EnvSecretSource.variableName("github/app-key"));
        assertEquals("SANDGATE_SECRET_A_B_C9", EnvSecretSource.variableName("a.b c9"));
        assertEquals("SANDGATE_SECRET_Z_", EnvSecretSource.variableName("zé"));
    }

    @Test
    void readsTheValueOfTheVariable()
    {
        EnvSecretSource source = new EnvSecretSource(Map.of(
            "SANDGATE_SECRET_OPENAI", "sk-live-1",
            "SANDGATE_SECRET_GITHUB_APP_KEY", "ghs_2"));

        assertEquals("sk-live-1", source.get("openai").reveal());
        assertEquals("ghs_2", source.get("github/app-key").reveal());
        assertEquals("env", source.kind());
    }

    @Test
    void missingOrEmptyVariableIsUnknownAndNamesTheVariable()
    {
        EnvSecretSource source = new EnvSecretSource(Map.of("SANDGATE_SECRET_EMPTY", "", "OTHER", "sk-other"));

        SecretUnavailableException missing = assertThrows(SecretUnavailableException.class, () -> source.get("openai"));
        assertEquals(SecretUnavailableException.Reason.UNKNOWN, missing.reason());
        assertTrue(missing.getMessage().contains("SANDGATE_SECRET_OPENAI"), missing.getMessage());
        assertTrue(missing.getMessage().contains("'openai'"), missing.getMessage());
        assertFalse(missing.getMessage().contains("sk-other"), missing.getMessage());

        SecretUnavailableException empty = assertThrows(SecretUnavailableException.class, () -> source.get("empty"));
        assertEquals(SecretUnavailableException.Reason.UNKNOWN, empty.reason());
    }

    @Test
    void laterChangesToTheGivenMapAreNotSeen()
    {
        java.util.HashMap<String, String> environment = new java.util.HashMap<>(Map.of("SANDGATE_SECRET_A", "one"));
        EnvSecretSource source = new EnvSecretSource(environment);
        environment.put("SANDGATE_SECRET_A", "two");

        assertEquals("one", source.get("a").reveal());
    }
}
