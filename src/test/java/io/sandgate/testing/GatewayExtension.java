package io.sandgate.testing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

import io.sandgate.Sandgate;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterClassTemplateInvocationCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeClassTemplateInvocationCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.BeforeTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs a gateway for a test class, as Armeria's {@code ServerExtension} runs a server:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final GatewayExtension gateway = new GatewayExtension(config -> config.set("ingress.access", "signed"));
 * }</pre>
 *
 * <p>In a static field the gateway serves every test of the class; in an instance field each test
 * gets a fresh one. The configuration lambda runs when the gateway starts, so it may use fixtures
 * the class starts in {@code @BeforeAll} (static field) or {@code @BeforeEach} (instance field):
 * the gateway starts after those methods, and a per-test gateway stops before {@code @AfterEach}
 * closes them (a class-wide one stops after {@code @AfterAll}, as JUnit calls extensions).
 * {@link #startAnother(Consumer)} starts a variant or a second replica beside it, and
 * {@link #manual(Consumer)} makes an extension that starts nothing by itself. In a class run once per
 * ingress front-end ({@link EachIngressFrontEnd}), its gateways serve ingress on the run's front-end,
 * and a class-wide gateway stops at the end of each run; such a class declares a class-wide variant as
 * an extension of its own rather than starting it in {@code @BeforeAll}, which runs once for all runs.
 */
public final class GatewayExtension implements Gateway, BeforeAllCallback, BeforeClassTemplateInvocationCallback, BeforeEachCallback,
    BeforeTestExecutionCallback, AfterTestExecutionCallback, AfterEachCallback, AfterClassTemplateInvocationCallback, AfterAllCallback
{
    private final Consumer<GatewayConfig> configuration;
    /** The front-end of the run, set before the class's own configuration; nothing outside a run. */
    private volatile Consumer<GatewayConfig> frontEnd = GatewayConfig.defaults();
    private final boolean autoStart;
    /** Started outside any test (in {@code @BeforeAll}, or for the whole class): stopped after all. */
    private final List<RunningGateway> classGateways = new ArrayList<>();
    /** Started during one test or its {@code @BeforeEach}: stopped when the test has run. */
    private final List<RunningGateway> testGateways = new ArrayList<>();
    private boolean classScoped;
    private boolean inTest;
    private volatile RunningGateway own;

    /** @param configuration sets what this class's gateways need beyond the loopback defaults */
    public GatewayExtension(Consumer<GatewayConfig> configuration)
    {
        this(configuration, true);
    }

    private GatewayExtension(Consumer<GatewayConfig> configuration, boolean autoStart)
    {
        this.configuration = Objects.requireNonNull(configuration, "configuration");
        this.autoStart = autoStart;
    }

    /**
     * An extension that runs no gateway of its own: the tests start each one with
     * {@link #startAnother()} when they need it (replicas, a gateway started after some state is
     * in place), and the extension stops them.
     */
    public static GatewayExtension manual(Consumer<GatewayConfig> configuration)
    {
        return new GatewayExtension(configuration, false);
    }

    @Override
    public void beforeAll(ExtensionContext context)
    {
        // Only extensions in static fields are called here.
        classScoped = true;
    }

    @Override
    public void beforeClassTemplateInvocation(ExtensionContext context) throws Exception
    {
        frontEnd = IngressFrontEnds.of(context);
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception
    {
        // An extension in an instance field is made after the run began: it learns its front-end here.
        frontEnd = IngressFrontEnds.of(context);
        inTest = true;
        if (classScoped)
            running();
    }

    @Override
    public void beforeTestExecution(ExtensionContext context) throws Exception
    {
        running();
    }

    @Override
    public void afterTestExecution(ExtensionContext context) throws Exception
    {
        if (!classScoped && own != null)
        {
            testGateways.add(own);
            own = null;
        }
        closeAll(testGateways);
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception
    {
        inTest = false;
        // Whatever @AfterEach started, if anything.
        closeAll(testGateways);
    }

    @Override
    public void afterClassTemplateInvocation(ExtensionContext context) throws Exception
    {
        // The next run starts its gateways on its own front-end.
        afterAll(context);
        frontEnd = GatewayConfig.defaults();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception
    {
        if (own != null)
        {
            classGateways.add(own);
            own = null;
        }
        closeAll(classGateways);
    }

    /**
     * Starts one more gateway from this extension's configuration, with {@code overrides} applied
     * after it. It is stopped with the test that started it, or after all tests when started
     * outside a test; closing it earlier (a replica that dies) is fine.
     */
    public RunningGateway startAnother(Consumer<GatewayConfig> overrides) throws Exception
    {
        RunningGateway gateway = RunningGateway.start(configured().andThen(overrides));
        (inTest ? testGateways : classGateways).add(gateway);
        return gateway;
    }

    public RunningGateway startAnother() throws Exception
    {
        return startAnother(GatewayConfig.defaults());
    }

    /**
     * Stops this extension's gateway and starts it again with {@code overrides}; the addresses
     * change. A class-wide gateway keeps the overrides for the tests that follow.
     */
    public synchronized void restart(Consumer<GatewayConfig> overrides) throws Exception
    {
        requireOwn();
        if (own != null)
            own.close();
        own = null;
        own = RunningGateway.start(configured().andThen(overrides));
    }

    @Override
    public int port()
    {
        return unchecked().port();
    }

    @Override
    public int internalPort()
    {
        return unchecked().internalPort();
    }

    @Override
    public int forwardProxyPort()
    {
        return unchecked().forwardProxyPort();
    }

    @Override
    public Sandgate sandgate()
    {
        return unchecked().sandgate();
    }

    @Override
    public int connectedEndPoints()
    {
        return unchecked().connectedEndPoints();
    }

    @Override
    public String toString()
    {
        return own == null ? "gateway (not running)" : own.toString();
    }

    /** This extension's gateway, started now if the class's fixtures asked for it before a test did. */
    private synchronized RunningGateway running() throws Exception
    {
        if (own == null && autoStart)
            own = RunningGateway.start(configured());
        return own;
    }

    private Consumer<GatewayConfig> configured()
    {
        return frontEnd.andThen(configuration);
    }

    private RunningGateway unchecked()
    {
        requireOwn();
        try
        {
            return running();
        }
        catch (RuntimeException x)
        {
            throw x;
        }
        catch (Exception x)
        {
            throw new IllegalStateException("the gateway did not start", x);
        }
    }

    private void requireOwn()
    {
        if (!autoStart)
            throw new IllegalStateException("a manual GatewayExtension runs no gateway of its own; use the one startAnother() returned");
    }

    private static void closeAll(List<RunningGateway> gateways) throws Exception
    {
        // Newest first, as try-with-resources would.
        List<RunningGateway> newestFirst = new ArrayList<>(gateways);
        Collections.reverse(newestFirst);
        gateways.clear();
        Fixtures.closeInOrder(newestFirst.toArray(AutoCloseable[]::new));
    }
}
