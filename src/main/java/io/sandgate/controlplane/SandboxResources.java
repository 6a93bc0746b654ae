package io.sandgate.controlplane;

import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.sandgate.config.WatcherConfig;
import io.sandgate.ingress.IdSyntax;

/**
 * What Sandgate reads and writes of agent-sandbox's {@code Sandbox} resource
 * (<a href="https://github.com/kubernetes-sigs/agent-sandbox">kubernetes-sigs/agent-sandbox</a>, group
 * {@code agents.x-k8s.io}): which sandbox one stands for (its name) and whether it is scaled to zero.
 * The versions say the latter in different fields, and the API server converts between them, so a
 * {@code v1alpha1} client and a {@code v1beta1} one see the same object.
 */
final class SandboxResources
{
    static final String GROUP = "agents.x-k8s.io";
    /** RFC 1123 subdomain, what the API server accepts as an object's name: nothing else goes into a request path. */
    private static final Pattern OBJECT_NAME = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private final WatcherConfig.SandboxApi api;
    private final ResourceDefinitionContext context;
    private final IdSyntax ids;

    /** @param api a version, not {@code NONE} */
    SandboxResources(WatcherConfig.SandboxApi api, IdSyntax ids)
    {
        if (api == WatcherConfig.SandboxApi.NONE)
            throw new IllegalArgumentException("sandboxApi: none (expected: a version)");
        this.api = api;
        this.ids = ids;
        this.context = new ResourceDefinitionContext.Builder().withGroup(GROUP).withVersion(version()).withKind("Sandbox")
            .withPlural("sandboxes").withNamespaced(true).build();
    }

    /** {@code v1beta1} or {@code v1alpha1}. */
    String version()
    {
        return api.name().toLowerCase(java.util.Locale.ROOT);
    }

    ResourceDefinitionContext context()
    {
        return context;
    }

    /** Whether {@code name} may be sent as an object's name. */
    static boolean isObjectName(String name)
    {
        return name != null && name.length() <= 253 && OBJECT_NAME.matcher(name).matches();
    }

    /** The sandbox a {@code Sandbox} stands for: its name, when that is a valid sandbox id. */
    Optional<String> sandboxId(GenericKubernetesResource sandbox)
    {
        String name = sandbox.getMetadata() == null ? null : sandbox.getMetadata().getName();
        return ids.isId(name) ? Optional.of(name) : Optional.empty();
    }

    /**
     * Whether the {@code Sandbox} asks for its pod to be gone. Empty when its spec holds what this
     * version does not define: such an object says nothing, rather than something guessed.
     */
    Optional<Boolean> suspended(GenericKubernetesResource sandbox)
    {
        if (!(sandbox.getAdditionalProperties().get("spec") instanceof Map<?, ?> spec))
            return Optional.empty();
        if (api == WatcherConfig.SandboxApi.V1BETA1)
        {
            // Absent means Running: the CRD defaults it.
            Object mode = spec.get("operatingMode");
            if (mode == null || "Running".equals(mode))
                return Optional.of(false);
            return "Suspended".equals(mode) ? Optional.of(true) : Optional.empty();
        }
        Object replicas = spec.get("replicas");
        if (replicas == null)
            return Optional.of(false);
        if (replicas instanceof Integer || replicas instanceof Long)
        {
            long count = ((Number) replicas).longValue();
            if (count == 0 || count == 1)
                return Optional.of(count == 0);
        }
        return Optional.empty();
    }

    /** The JSON merge patch (RFC 7386) that asks for the sandbox running, or suspended. */
    String scale(boolean running)
    {
        if (api == WatcherConfig.SandboxApi.V1BETA1)
            return "{\"spec\":{\"operatingMode\":\"" + (running ? "Running" : "Suspended") + "\"}}";
        return "{\"spec\":{\"replicas\":" + (running ? 1 : 0) + "}}";
    }
}
