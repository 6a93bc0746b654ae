package io.sandgate.config;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The control plane's pod watcher: which pods are sandboxes, how to reach them, and how to tell that
 * a sandbox is paused.
 *
 * @param enabled whether this process watches pods (one replica writes at a time)
 * @param namespaces namespaces to watch
 * @param idLabel pod label (or annotation) holding the sandbox id; also the watch's label selector
 * @param portAnnotation pod annotation holding the port
 * @param defaultPort port when the annotation is absent
 * @param resyncInterval full re-list, which also removes routes of pods that are gone
 * @param sandboxApi which version of agent-sandbox's {@code Sandbox} resource is watched (and scaled), if any
 * @param pausedLabel label whose value {@code true} on a pod or a {@code Sandbox} marks its sandbox paused
 * @param masterUrl Kubernetes API URL; empty: in-cluster service account or kubeconfig
 */
public record WatcherConfig(boolean enabled, List<String> namespaces, String idLabel, String portAnnotation, int defaultPort,
                            Duration resyncInterval, SandboxApi sandboxApi, Optional<String> pausedLabel,
                            @Setting("controlplane.kubernetes.master-url") Optional<String> masterUrl)
{
    public WatcherConfig
    {
        namespaces = List.copyOf(namespaces);
        Objects.requireNonNull(sandboxApi, "sandboxApi");
        if (enabled && namespaces.isEmpty())
            throw new IllegalArgumentException(ConfigKeys.WATCHER_NAMESPACES.name() + ": empty (expected: at least one namespace)");
    }

    /** Whether this process can scale {@code Sandbox} resources: it watches them, with a client of its own. */
    public boolean scalesSandboxes()
    {
        return enabled && sandboxApi != SandboxApi.NONE;
    }

    /**
     * The version of agent-sandbox's {@code Sandbox} resource (group {@code agents.x-k8s.io}) the
     * watcher reads: the two say "scaled to zero" in different fields.
     */
    public enum SandboxApi
    {
        /** Pods only; no {@code Sandbox} is read or written. */
        NONE,
        /** agent-sandbox 0.5 and later, the stored version: {@code spec.operatingMode} {@code Running} or {@code Suspended}. */
        V1BETA1,
        /** Earlier releases (still served, deprecated, by later ones): {@code spec.replicas} 1 or 0. */
        V1ALPHA1
    }
}
