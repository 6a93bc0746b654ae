package io.sandgate.web;

import jakarta.servlet.ServletRequest;

/**
 * A typed request attribute: one constant per value, so that no code reads an untyped string-keyed
 * bag. Attribute names are prefixed with {@code io.sandgate.}.
 *
 * @param <T> the value type
 */
public final class RequestAttribute<T>
{
    private final String name;
    private final Class<T> type;

    private RequestAttribute(String name, Class<T> type)
    {
        this.name = "io.sandgate." + name;
        this.type = type;
    }

    public static <T> RequestAttribute<T> of(String name, Class<T> type)
    {
        return new RequestAttribute<>(name, type);
    }

    /** The attribute's full name, for code below the servlet layer that sets it. */
    public String name()
    {
        return name;
    }

    public T get(ServletRequest request)
    {
        return type.cast(request.getAttribute(name));
    }

    public void set(ServletRequest request, T value)
    {
        request.setAttribute(name, value);
    }
}
