package io.sandgate.config;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each setting is declared once, as a constant of {@link ConfigKeys}; the key list, the loader's
 * unknown-key check and the reference table all come from {@link ConfigKeys#ALL}. These checks fail
 * when a declaration is incomplete or escapes that list.
 */
class ConfigKeysTest
{
    @Test
    void everyDeclaredConstant_isInAll_once()
    {
        List<ConfigKey<?>> constants = constants();
        for (ConfigKey<?> key : constants)
            assertTrue(ConfigKeys.ALL.stream().anyMatch(k -> k == key), key.name() + " is declared but missing from ConfigKeys.ALL");
        assertEquals(constants.size(), ConfigKeys.ALL.size(), "ConfigKeys.ALL holds a key that is no constant of ConfigKeys");
        Set<String> names = new HashSet<>();
        for (ConfigKey<?> key : ConfigKeys.ALL)
        {
            assertTrue(names.add(key.name()), key.name() + " is declared twice");
            assertEquals(key, ConfigKeys.byName(key.name()));
        }
    }

    @Test
    void everyKey_hasADescriptionAndADefaultText()
    {
        for (ConfigKey<?> key : ConfigKeys.ALL)
        {
            assertFalse(key.description() == null || key.description().isBlank(), key.name() + " has no description");
            assertFalse(key.defaultText() == null || key.defaultText().isBlank(), key.name() + " has no default text");
            assertFalse(key.description().contains("\n"), key.name() + ": the description is one line of the reference table");
        }
    }

    @Test
    void everyDefault_parses()
    {
        for (ConfigKey<?> key : ConfigKeys.ALL)
        {
            if (key.defaultValue() != null)
                key.parser().parse(key.defaultValue());
        }
    }

    /** The public static ConfigKey fields, read by reflection so that this test does not share the list it checks. */
    private static List<ConfigKey<?>> constants()
    {
        List<ConfigKey<?>> keys = new ArrayList<>();
        for (Field field : ConfigKeys.class.getDeclaredFields())
        {
            if (field.getType() == ConfigKey.class)
            {
                assertTrue(Modifier.isPublic(field.getModifiers()) && Modifier.isStatic(field.getModifiers()) && Modifier.isFinal(field.getModifiers()),
                    field.getName() + " must be public static final");
                try
                {
                    keys.add((ConfigKey<?>) field.get(null));
                }
                catch (IllegalAccessException x)
                {
                    throw new AssertionError(x);
                }
            }
        }
        assertFalse(keys.isEmpty());
        return keys;
    }

    /**
     * Every key reaches the configuration: a key declared but bound to nothing would be accepted and
     * ignored. The Vault keys are read only with that source, each auth method's with that method.
     */
    @Test
    void everyKey_isReadByTheLoader()
    {
        Set<String> read = new HashSet<>(ConfigLoader.keysRead(Map.of()));
        Map<String, Object> vault = Map.of("egress.secrets.source", "vault", "egress.secrets.vault.address", "https://vault:8200");
        read.addAll(ConfigLoader.keysRead(with(vault, "egress.secrets.vault.token", "vault-token")));
        read.addAll(ConfigLoader.keysRead(with(with(with(vault, "egress.secrets.vault.auth", "approle"), "egress.secrets.vault.role-id", "role"),
            "egress.secrets.vault.secret-id", "secret")));
        read.addAll(ConfigLoader.keysRead(with(with(vault, "egress.secrets.vault.auth", "kubernetes"), "egress.secrets.vault.kubernetes-role", "r")));
        List<String> unread = new ArrayList<>();
        for (ConfigKey<?> key : ConfigKeys.ALL)
        {
            // The file's own path is read before the file, by load().
            if (key != ConfigKeys.CONFIG && !read.contains(key.name()))
                unread.add(key.name());
        }
        assertEquals(List.of(), unread, "declared keys that no record or table takes");
    }

    private static Map<String, Object> with(Map<String, Object> values, String name, Object value)
    {
        Map<String, Object> copy = new HashMap<>(values);
        copy.put(name, value);
        return copy;
    }
}
