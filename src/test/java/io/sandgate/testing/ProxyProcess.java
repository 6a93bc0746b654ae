package io.sandgate.testing;

import java.util.Objects;

/**
 * A real forward-proxy program run as an egress node ({@link Tinyproxy}, {@link Squid}): its name
 * in the pool, the free port its launch was given, and its process.
 */
public abstract class ProxyProcess extends ProcessFixture implements ProxyNode
{
    private final String name;
    /** Set by the subclass's launch, to the port it tries. */
    protected int port;
    protected Process process;

    protected ProxyProcess(String program, String name)
    {
        super(program);
        this.name = Objects.requireNonNull(name, "name");
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public int port()
    {
        return port;
    }

    @Override
    public String toString()
    {
        return getClass().getSimpleName() + "[" + name + " " + address() + "]";
    }
}
