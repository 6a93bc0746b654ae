package io.sandgate.testing;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import io.sandgate.config.ConfigKeys;
import io.sandgate.config.ServerConfig;
import org.junit.jupiter.api.extension.ClassTemplateInvocationContext;
import org.junit.jupiter.api.extension.ClassTemplateInvocationContextProvider;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.annotation.Testable;
import org.junit.platform.commons.support.AnnotationSupport;
import org.junit.platform.commons.support.HierarchyTraversalMode;

/** The runs of an {@link EachIngressFrontEnd} class: one per front-end, named after it. */
final class IngressFrontEnds implements ClassTemplateInvocationContextProvider
{
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(IngressFrontEnds.class);

    @Override
    public boolean supportsClassTemplate(ExtensionContext context)
    {
        return true;
    }

    @Override
    public Stream<ClassTemplateInvocationContext> provideClassTemplateInvocationContexts(ExtensionContext context)
    {
        Class<?> testClass = context.getRequiredTestClass();
        boolean split = AnnotationSupport.findAnnotation(testClass, EachIngressFrontEnd.class)
            .map(EachIngressFrontEnd::split)
            .orElse(false);
        Map<Method, ServerConfig.IngressFrontEnd> owners = split ? owners(testClass) : Map.of();
        return Arrays.stream(ServerConfig.IngressFrontEnd.values()).map(frontEnd -> run(frontEnd, split, owners));
    }

    /**
     * The front-end each test of a split class runs on: the tests sorted by name (a stable order,
     * unlike the reflection's or JUnit's default one), dealt to the front-ends in turn.
     */
    private static Map<Method, ServerConfig.IngressFrontEnd> owners(Class<?> testClass)
    {
        List<Method> tests = AnnotationSupport.findAnnotatedMethods(testClass, Testable.class, HierarchyTraversalMode.TOP_DOWN).stream()
            .sorted(Comparator.comparing(Method::getName).thenComparing(method -> Arrays.toString(method.getParameterTypes())))
            .toList();
        ServerConfig.IngressFrontEnd[] frontEnds = ServerConfig.IngressFrontEnd.values();
        return IntStream.range(0, tests.size()).boxed()
            .collect(Collectors.toMap(tests::get, i -> frontEnds[i % frontEnds.length]));
    }

    private static ClassTemplateInvocationContext run(ServerConfig.IngressFrontEnd frontEnd, boolean split, Map<Method, ServerConfig.IngressFrontEnd> owners)
    {
        return new ClassTemplateInvocationContext()
        {
            @Override
            public String getDisplayName(int invocationIndex)
            {
                return "ingress on " + name(frontEnd);
            }

            @Override
            public List<Extension> getAdditionalExtensions()
            {
                return split ? List.of(onlyItsOwnTests(frontEnd, owners)) : List.of();
            }

            @Override
            public void prepareInvocation(ExtensionContext context)
            {
                context.getStore(NAMESPACE).put(ServerConfig.IngressFrontEnd.class, frontEnd);
            }
        };
    }

    /** In the run of a split class on {@code frontEnd}: the tests dealt to another front-end do not run. */
    private static ExecutionCondition onlyItsOwnTests(ServerConfig.IngressFrontEnd frontEnd, Map<Method, ServerConfig.IngressFrontEnd> owners)
    {
        return context -> {
            if (context.getTestMethod().isEmpty())
            {
                // A run that none of the tests was dealt to (a class of one test) starts nothing.
                return owners.containsValue(frontEnd)
                    ? ConditionEvaluationResult.enabled("tests dealt to " + name(frontEnd))
                    : ConditionEvaluationResult.disabled("no test dealt to " + name(frontEnd));
            }
            ServerConfig.IngressFrontEnd owner = owners.get(context.getTestMethod().get());
            return owner == null || owner == frontEnd
                ? ConditionEvaluationResult.enabled("runs on " + name(frontEnd))
                : ConditionEvaluationResult.disabled("runs on " + name(owner) + " only (@EachIngressFrontEnd(split = true))");
        };
    }

    private static String name(ServerConfig.IngressFrontEnd frontEnd)
    {
        return frontEnd == ServerConfig.IngressFrontEnd.CORE ? "the core handler" : "the servlets";
    }

    /**
     * What sets the front-end of the run the context belongs to; nothing outside a run. What a test
     * sets itself comes after it and wins.
     */
    static Consumer<GatewayConfig> of(ExtensionContext context)
    {
        ServerConfig.IngressFrontEnd frontEnd = context.getStore(NAMESPACE).get(ServerConfig.IngressFrontEnd.class, ServerConfig.IngressFrontEnd.class);
        if (frontEnd == null)
            return GatewayConfig.defaults();
        return config -> config.set(ConfigKeys.SERVER_INGRESS_FRONT_END.name(), frontEnd.name().toLowerCase(Locale.ROOT));
    }
}
