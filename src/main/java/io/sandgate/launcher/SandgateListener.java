package io.sandgate.launcher;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.sandgate.Sandgate;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.SandgateConfig;
import io.sandgate.ops.Drain;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts Sandgate inside a servlet context. Declared in {@code web.xml} for the WAR (so it may
 * register servlets in any container, with or without annotation scanning), and added by the
 * embedded runner with a configuration it has already loaded.
 */
public class SandgateListener implements ServletContextListener
{
    private static final Logger LOG = LoggerFactory.getLogger(SandgateListener.class);
    /** Where the running instance is kept, for the embedded runner and tests. */
    public static final String ATTRIBUTE = Sandgate.class.getName();

    private final SandgateConfig preloaded;
    private final java.util.function.Supplier<SandgateConfig> reloader;
    /** Built by the embedded runner, which also closes it; null in the WAR. */
    private final Sandgate built;
    private final Sandgate.Listener listener;
    private Sandgate sandgate;

    /** For web.xml: configuration from context-params, system properties, environment and YAML. */
    public SandgateListener()
    {
        this((SandgateConfig)null, null);
    }

    /**
     * @param preloaded the configuration, already loaded by the embedded runner
     * @param reloader reads it again from the same sources (admin reloads)
     */
    public SandgateListener(SandgateConfig preloaded, java.util.function.Supplier<SandgateConfig> reloader)
    {
        this.preloaded = preloaded;
        this.reloader = reloader;
        this.built = null;
        this.listener = Sandgate.Listener.ALL;
    }

    /**
     * For the embedded runner: registers part of a gateway it has already built (and will close)
     * in one of its contexts.
     */
    SandgateListener(Sandgate built, Sandgate.Listener listener)
    {
        this.preloaded = null;
        this.reloader = null;
        this.built = built;
        this.listener = listener;
    }

    @Override
    public void contextInitialized(ServletContextEvent event)
    {
        ServletContext context = event.getServletContext();
        if (built != null)
        {
            built.install(context, listener);
            context.setAttribute(ATTRIBUTE, built);
            return;
        }
        SandgateConfig config = preloaded != null ? preloaded : load(context);
        if (config.server().internalPort().isPresent())
        {
            // Here every face is on the container's connectors, and its clients counted as the public listener's.
            LOG.warn("server.internal-port is the embedded runner's; in a servlet container the container's connectors serve every face");
            config = config.withServer(config.server().withoutInternalPort());
        }
        // Reloads read the same sources again.
        sandgate = Sandgate.create(config, context.getContextPath(), reloader != null ? reloader : () -> load(context));
        try
        {
            sandgate.install(context, Sandgate.Listener.ALL);
        }
        catch (RuntimeException x)
        {
            sandgate.close();
            throw x;
        }
        context.setAttribute(ATTRIBUTE, sandgate);
    }

    /**
     * Drains, then closes the gateway. The container sends the context nothing new by now, so there
     * is no grace: the bridged WebSockets still open are closed with 1012 spread over
     * {@code server.drain.spread} and the MCP streams ended, within {@code server.drain.timeout}.
     * Best effort: a container that has cut its upgraded connections already leaves nothing to
     * close, and one that bounds its own stop may end the wait first.
     */
    @Override
    public void contextDestroyed(ServletContextEvent event)
    {
        // The embedded runner's gateway outlives its contexts; it closes it itself.
        if (sandgate == null)
            return;
        Drain drain = sandgate.drain();
        drain.begin(Drain.Cause.CONTEXT);
        try
        {
            drain.finished().get(drain.remaining().toMillis() + 1000, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
        catch (ExecutionException | TimeoutException x)
        {
            LOG.warn("The drain did not finish; closing anyway", x);
        }
        finally
        {
            sandgate.close();
        }
    }

    private static SandgateConfig load(ServletContext context)
    {
        Map<String, String> params = new HashMap<>();
        for (String name : Collections.list(context.getInitParameterNames()))
            params.put(name, context.getInitParameter(name));
        Map<String, String> properties = new HashMap<>();
        System.getProperties().forEach((k, v) -> properties.put(k.toString(), v.toString()));
        return ConfigLoader.load(params, properties, System.getenv());
    }
}
