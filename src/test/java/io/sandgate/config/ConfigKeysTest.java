package io.sandgate.config;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
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
}
