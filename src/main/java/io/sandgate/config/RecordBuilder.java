package io.sandgate.config;

import java.lang.invoke.MethodType;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;

/**
 * Builds a record through its canonical constructor from values given by component name, so that
 * records of a dozen values and more are bound by name rather than by position, with one builder
 * for all of them instead of one written out per record.
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
