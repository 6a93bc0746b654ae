package io.sandgate.config;

import java.lang.invoke.MethodType;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Builds a record through its canonical constructor from values given by component name, so that
 * records of a dozen values and more are bound by name rather than by position, with one builder
 * for all of them instead of one written out per record. {@link #bind} fills a settings record
 * from the keys its components are named after.
 *
 * <p>Naming a component the record does not have, naming one twice, leaving one out or giving it a
 * value of the wrong type is a mistake in the code, not in the configuration: it fails as
 * {@link IllegalStateException}, which the loader does not report as a config problem. What the
 * record's own constructor throws (its "expected:" messages) passes through unchanged.
 *
 * @param <R> the record built
 */
final class RecordBuilder<R extends Record>
{
    private final Class<R> type;
    private final RecordComponent[] components;
    private final Object[] values;
    private final boolean[] set;

    private RecordBuilder(Class<R> type)
    {
        this.type = type;
        this.components = type.getRecordComponents();
        this.values = new Object[components.length];
        this.set = new boolean[components.length];
    }

    static <R extends Record> RecordBuilder<R> of(Class<R> type)
    {
        return new RecordBuilder<>(type);
    }

    /**
     * Builds a settings record: each component takes the value of the key named by its
     * {@link Setting}, or else by {@code prefix} and its name in kebab case ({@code maxThreads}
     * under {@code server.} is {@code server.max-threads}), unless {@code given} holds a value for it
     * (nested records, tables, values computed from several keys). An optional component takes an
     * unset key as empty, a collection as empty; a list key fills a set component.
     *
     * @param values the parsed value of a key, null when unset
     */
    static <R extends Record> R bind(Class<R> type, String prefix, Function<ConfigKey<?>, Object> values, Map<String, ?> given)
    {
        RecordBuilder<R> builder = of(type);
        for (RecordComponent component : builder.components)
        {
            String name = component.getName();
            if (given.containsKey(name))
            {
                builder.set(name, given.get(name));
                continue;
            }
            Setting setting = component.getAnnotation(Setting.class);
            String keyName = setting != null ? setting.value() : prefix + kebab(name);
            ConfigKey<?> key = ConfigKeys.byName(keyName);
            if (key == null)
                throw new IllegalStateException(builder.describe(name) + ": no key " + keyName + " (name it with @Setting, or give its value)");
            builder.set(name, adapt(component.getType(), values.apply(key)));
        }
        for (String name : given.keySet())
            builder.indexOf(name);
        return builder.build();
    }

    private static Object adapt(Class<?> type, Object value)
    {
        if (type == Optional.class)
            return Optional.ofNullable(value);
        if (type == Set.class && value instanceof Collection<?> items)
            return Set.copyOf(items);
        if (value != null)
            return value;
        if (type == List.class)
            return List.of();
        if (type == Set.class)
            return Set.of();
        if (type == Map.class)
            return Map.of();
        return null;
    }

    private static String kebab(String camel)
    {
        StringBuilder kebab = new StringBuilder();
        for (char c : camel.toCharArray())
        {
            if (Character.isUpperCase(c))
                kebab.append('-').append(Character.toLowerCase(c));
            else
                kebab.append(c);
        }
        return kebab.toString();
    }

    /**
     * Sets the component of this name. Only its raw type is checked, not type arguments; the value
     * itself is never shown, as it may be secret.
     */
    RecordBuilder<R> set(String name, Object value)
    {
        int i = indexOf(name);
        if (set[i])
            throw new IllegalStateException(describe(name) + " set twice");
        Class<?> expected = components[i].getType();
        boolean fits = value == null ? !expected.isPrimitive() : MethodType.methodType(expected).wrap().returnType().isInstance(value);
        if (!fits)
            throw new IllegalStateException(describe(name) + " takes " + expected.getSimpleName() + ", given "
                + (value == null ? "null" : "a " + value.getClass().getSimpleName()));
        values[i] = value;
        set[i] = true;
        return this;
    }

    R build()
    {
        for (int i = 0; i < components.length; i++)
        {
            if (!set[i])
                throw new IllegalStateException(describe(components[i].getName()) + " not set");
        }
        Class<?>[] parameters = Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new);
        try
        {
            return type.getDeclaredConstructor(parameters).newInstance(values);
        }
        catch (InvocationTargetException x)
        {
            if (x.getCause() instanceof RuntimeException thrown)
                throw thrown;
            throw new IllegalStateException(x.getCause());
        }
        catch (ReflectiveOperationException x)
        {
            throw new IllegalStateException(x);
        }
    }

    private int indexOf(String name)
    {
        for (int i = 0; i < components.length; i++)
        {
            if (components[i].getName().equals(name))
                return i;
        }
        throw new IllegalStateException(describe(name) + ": no such component");
    }

    private String describe(String name)
    {
        return type.getSimpleName() + "." + name;
    }
}
