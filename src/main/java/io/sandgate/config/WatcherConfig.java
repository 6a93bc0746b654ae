package io.sandgate.config;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The control plane's pod watcher: which pods are sandboxes and how to reach them.
 *
 * @param enabled whether this process watches pods (one replica writes at a time)
 * @param namespaces namespaces to watch
 * @param idLabel pod label (or annotation) holding the sandbox id; also the watch's label selector
 * @param portAnnotation pod annotation holding the port
 * @param defaultPort port when the annotation is absent
 * @param resyncInterval full re-list, which also removes routes of pods that are gone
 * @param masterUrl Kubernetes API URL; empty: in-cluster service account or kubeconfig
 */
public record WatcherConfig(boolean enabled, List<String> namespaces, String idLabel, String portAnnotation, int defaultPort,
                            Duration resyncInterval, @Setting("controlplane.kubernetes.master-url") Optional<String> masterUrl)
{
    public WatcherConfig
    {
        namespaces = List.copyOf(namespaces);
        if (enabled && namespaces.isEmpty())
            throw new IllegalArgumentException(ConfigKeys.WATCHER_NAMESPACES.name() + ": empty (expected: at least one namespace)");
    }
}
