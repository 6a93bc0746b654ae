package io.sandgate.controlplane;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.IngressConfig;
import io.sandgate.config.WatcherConfig;
import io.sandgate.core.Leadership;
import io.sandgate.ingress.IdSyntax;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RouteStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The trusted manager of the seed architecture: List/Watches sandbox pods (a fabric8 informer per
 * namespace, selected by the sandbox-id label) and keeps {@code id -> podIP:port} in the route
 * store. Sandboxes never register themselves. Only the leader writes; when it dies another
 * replica is elected and starts with a full list. Each route carries the pod's uid, so a late
 * event about an old pod never removes the route its successor wrote, and a resync removes only
 * routes the watcher wrote (those with a generation) whose pods are gone.
 */
public final class PodWatcher implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(PodWatcher.class);

    private final WatcherConfig config;
    private final RouteStore routes;
    private final Leadership leadership;
    private final PodRoutes pods;
    private final KubernetesClient client;
    private final List<SharedIndexInformer<Pod>> informers = new ArrayList<>();
    private final Counter written;
    private final Counter removed;

    public PodWatcher(WatcherConfig config, IngressConfig ingress, RouteStore routes, Leadership leadership, MeterRegistry registry)
    {
        this.config = config;
        this.routes = routes;
        this.leadership = leadership;
        this.pods = new PodRoutes(config, IdSyntax.of(ingress));
        Config kubernetes = config.masterUrl().isPresent()
            ? new ConfigBuilder().withMasterUrl(config.masterUrl().get()).withTrustCerts(false).build()
            : Config.autoConfigure(null);
        this.client = new KubernetesClientBuilder().withConfig(kubernetes).build();
        this.written = Counter.builder("sandgate.watcher.routes.written").description("Routes written from pod events").register(registry);
        this.removed = Counter.builder("sandgate.watcher.routes.removed").description("Routes removed from pod events and resyncs").register(registry);
        registry.gauge("sandgate.watcher.leader", leadership, l -> l.isLeader() ? 1 : 0);
    }

    public void start()
    {
        leadership.run(this::lead, this::stopInformers);
    }

    private synchronized void lead()
    {
        for (String namespace : config.namespaces())
        {
            SharedIndexInformer<Pod> informer = client.pods().inNamespace(namespace).withLabel(config.idLabel())
                .inform(new Handler(), config.resyncInterval().toMillis());
            informers.add(informer);
        }
        for (SharedIndexInformer<Pod> informer : informers)
        {
            try
            {
                informer.start().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
            }
            catch (Exception x)
            {
                LOG.warn("Pod informer did not sync: {}", x.toString());
            }
        }
        resync();
        LOG.info("Pod watcher leading: namespaces {}, label {}", config.namespaces(), config.idLabel());
    }

    /** Removes watcher-written routes whose pods are no longer known to any informer. */
    private void resync()
    {
        Set<String> live = new HashSet<>();
        for (SharedIndexInformer<Pod> informer : informers)
        {
            for (Pod pod : informer.getStore().list())
                pods.sandboxId(pod).ifPresent(id -> live.add(id + "\n" + pod.getMetadata().getUid()));
        }
        for (Map.Entry<String, Route> entry : routes.all().entrySet())
        {
            Optional<String> generation = entry.getValue().generation();
            if (generation.isPresent() && !live.contains(entry.getKey() + "\n" + generation.get())
                && routes.removeIf(entry.getKey(), generation.get()))
                removed.increment();
        }
    }

    private synchronized void stopInformers()
    {
        informers.forEach(SharedIndexInformer::stop);
        informers.clear();
    }

    private final class Handler implements ResourceEventHandler<Pod>
    {
        @Override
        public void onAdd(Pod pod)
        {
            apply(pod);
        }

        @Override
        public void onUpdate(Pod old, Pod pod)
        {
            apply(pod);
        }

        @Override
        public void onDelete(Pod pod, boolean deletedFinalStateUnknown)
        {
            pods.sandboxId(pod).ifPresent(id ->
            {
                if (routes.removeIf(id, pod.getMetadata().getUid()))
                    removed.increment();
            });
        }

        @Override
        public void onNothing()
        {
            // A relist after a watch gap: routes of pods that vanished meanwhile go now.
            resync();
        }

        private void apply(Pod pod)
        {
            if (!leadership.isLeader())
                return;
            Optional<String> id = pods.sandboxId(pod);
            if (id.isEmpty())
                return;
            Optional<Route> route = pods.route(pod);
            if (route.isPresent())
            {
                Optional<Route> current = routes.find(id.get());
                // A revocation outlives the pod: its stamp moves to the route of the pod after it.
                Route wanted = route.get().keepingRevocationOf(current);
                if (current.isEmpty() || !current.get().equals(wanted))
                {
                    routes.put(id.get(), wanted);
                    written.increment();
                }
            }
            else if (routes.removeIf(id.get(), pod.getMetadata().getUid()))
            {
                // Failed, not ready, or lost its IP: this pod's route goes, a successor's stays.
                removed.increment();
            }
        }
    }

    @Override
    public void close()
    {
        stopInformers();
        leadership.close();
        client.close();
    }
}
