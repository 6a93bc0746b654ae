package io.sandgate.testing;

import java.util.Arrays;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.stream.Stream;

import io.sandgate.config.ConfigKeys;
import io.sandgate.config.ServerConfig;
import org.junit.jupiter.api.extension.ClassTemplateInvocationContext;
import org.junit.jupiter.api.extension.ClassTemplateInvocationContextProvider;
import org.junit.jupiter.api.extension.ExtensionContext;

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
        return Arrays.stream(ServerConfig.IngressFrontEnd.values()).map(IngressFrontEnds::run);
    }

    private static ClassTemplateInvocationContext run(ServerConfig.IngressFrontEnd frontEnd)
    {
        return new ClassTemplateInvocationContext()
        {
            @Override
            public String getDisplayName(int invocationIndex)
            {
                return "ingress on " + (frontEnd == ServerConfig.IngressFrontEnd.CORE ? "the core handler" : "the servlets");
            }

            @Override
            public void prepareInvocation(ExtensionContext context)
            {
                context.getStore(NAMESPACE).put(ServerConfig.IngressFrontEnd.class, frontEnd);
            }
        };
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
