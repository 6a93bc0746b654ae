package io.sandgate.controlplane;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
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
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.IdSyntax;
import io.sandgate.ingress.RouteStore;
import io.sandgate.ingress.lifecycle.SandboxManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The trusted manager of the seed architecture: List/Watches sandbox pods (a fabric8 informer per
 * namespace, selected by the sandbox-id label) and keeps {@code id -> podIP:port} in the route
 * store. Sandboxes never register themselves. Only the leader writes; when it dies another
 * replica is elected and starts with a full list. Each route carries the pod's uid, so a late
 * event about an old pod never removes the route its successor wrote, and a resync removes only
 * routes the watcher wrote (those with a generation) whose pods are gone.
 *
 * <p>With {@code controlplane.watcher.sandbox-api} set it also watches agent-sandbox's {@code Sandbox}
 * resources, and a sandbox scaled to zero (or labelled paused) gets a paused route, which traffic
 * wakes through {@link #sandboxManager}; {@link SandboxRoutes} says how the two watches combine.</p>
 */
public final class PodWatcher implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(PodWatcher.class);
    /** The informers' index of their objects by sandbox id. */
    private static final String BY_ID = "sandbox-id";

    /**
     * How long the pods of a suspended Sandbox have to show they are going: the controller deletes
     * them within moments, and the watch says so about as fast, unless the suspension was undone
     * before the controller acted on it.
     */
    static final Duration DELETION_GRACE = Duration.ofSeconds(10);

    private final WatcherConfig config;
    private final Leadership leadership;
    private final PodRoutes pods;
    private final Optional<SandboxResources> sandboxes;
    private final SandboxRoutes decisions;
    private final KubernetesClient client;
    private final Schedulers schedulers;
    private final Duration deletionGrace;
    /** Read by the event handlers of informers started before the last of these was added. */
    private final List<SharedIndexInformer<Pod>> informers = new CopyOnWriteArrayList<>();
    private final List<SharedIndexInformer<GenericKubernetesResource>> sandboxInformers = new CopyOnWriteArrayList<>();

    /** @param schedulers runs the second look at a sandbox whose suspension's grace is over */
    public PodWatcher(WatcherConfig config, IngressConfig ingress, RouteStore routes, Leadership leadership, MeterRegistry registry,
                      Schedulers schedulers)
    {
        this(config, ingress, routes, leadership, registry, schedulers, DELETION_GRACE);
    }

    PodWatcher(WatcherConfig config, IngressConfig ingress, RouteStore routes, Leadership leadership, MeterRegistry registry, Schedulers schedulers,
               Duration deletionGrace)
    {
        this.config = config;
        this.leadership = leadership;
        IdSyntax ids = IdSyntax.of(ingress);
        this.pods = new PodRoutes(config, ids);
        this.sandboxes = config.sandboxApi() == WatcherConfig.SandboxApi.NONE ? Optional.empty()
            : Optional.of(new SandboxResources(config.sandboxApi(), ids));
        Config kubernetes = config.masterUrl().isPresent()
            ? new ConfigBuilder().withMasterUrl(config.masterUrl().get()).withTrustCerts(false).build()
            : Config.autoConfigure(null);
        this.client = new KubernetesClientBuilder().withConfig(kubernetes).build();
        Counter written = Counter.builder("sandgate.watcher.routes.written").description("Routes written from pod and Sandbox events").register(registry);
        Counter removed = Counter.builder("sandgate.watcher.routes.removed").description("Routes removed from pod and Sandbox events and resyncs").register(registry);
        this.schedulers = schedulers;
        this.deletionGrace = deletionGrace;
        this.decisions = new SandboxRoutes(routes, pods, sandboxes, config.pausedLabel(), new Informed(), written, removed, deletionGrace,
            this::lookAgainLater);
        registry.gauge("sandgate.watcher.leader", leadership, l -> l.isLeader() ? 1 : 0);
    }

    public void start()
    {
        leadership.run(this::lead, this::stopInformers);
    }

    /**
     * Resumes and pauses sandboxes by scaling their {@code Sandbox} resources through this watcher's
     * client, on {@code workers}: every replica may be asked, leader or not.
     *
     * @throws IllegalStateException if no {@code Sandbox} version is configured
     */
    public SandboxManager sandboxManager(Executor workers)
    {
        SandboxResources resources = sandboxes.orElseThrow(() -> new IllegalStateException("controlplane.watcher.sandbox-api: none"));
        return new KubernetesSandboxManager(client, resources, config.namespaces(), workers);
    }

    private synchronized void lead()
    {
        // Sandboxes first: a pod's event is judged against its Sandbox, which must be known by then.
        for (String namespace : config.namespaces())
        {
            sandboxes.ifPresent(resources -> sandboxInformers.add(start(client.genericKubernetesResources(resources.context()).inNamespace(namespace)
                .runnableInformer(config.resyncInterval().toMillis()), s -> resources.sandboxId(s).map(List::of).orElse(List.of()), new SandboxHandler())));
        }
        awaitSync(sandboxInformers, "Sandbox");
        for (String namespace : config.namespaces())
        {
            informers.add(start(client.pods().inNamespace(namespace).withLabel(config.idLabel()).runnableInformer(config.resyncInterval().toMillis()),
                pod -> pods.sandboxId(pod).map(List::of).orElse(List.of()), new PodHandler()));
        }
        awaitSync(informers, "Pod");
        decisions.resync();
        LOG.info("Pod watcher leading: namespaces {}, label {}, Sandbox resources {}", config.namespaces(), config.idLabel(),
            sandboxes.map(r -> SandboxResources.GROUP + "/" + r.version()).orElse("not watched"));
    }

    /** On a worker: the look reads and writes the store, which a timer thread must never wait for. */
    private void lookAgainLater(String sandboxId)
    {
        schedulers.timer().schedule(() -> schedulers.workers().execute(() ->
        {
            if (leadership.isLeader())
                decisions.reconsider(sandboxId);
        }), deletionGrace.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static <T> SharedIndexInformer<T> start(SharedIndexInformer<T> informer, Function<T, List<String>> ids, ResourceEventHandler<T> handler)
    {
        informer.addIndexers(Map.of(BY_ID, ids));
        informer.addEventHandler(handler);
        informer.start();
        return informer;
    }

    private static void awaitSync(List<? extends SharedIndexInformer<?>> started, String kind)
    {
        for (SharedIndexInformer<?> informer : started)
        {
            try
            {
                informer.start().toCompletableFuture().get(30, TimeUnit.SECONDS);
            }
            catch (Exception x)
            {
                LOG.warn("{} informer did not sync (is the resource served, and may this service account list it?): {}", kind, x.toString());
            }
        }
    }

    private synchronized void stopInformers()
    {
        informers.forEach(SharedIndexInformer::stop);
        informers.clear();
        sandboxInformers.forEach(SharedIndexInformer::stop);
        sandboxInformers.clear();
    }

    /** The informers' caches, by sandbox id over every watched namespace. */
    private final class Informed implements SandboxRoutes.Known
    {
        @Override
        public List<Pod> pods(String sandboxId)
        {
            return byId(informers, sandboxId);
        }

        @Override
        public List<GenericKubernetesResource> sandboxes(String sandboxId)
        {
            return byId(sandboxInformers, sandboxId);
        }

        @Override
        public Collection<Pod> allPods()
        {
            List<Pod> all = new ArrayList<>();
            for (SharedIndexInformer<Pod> informer : informers)
                all.addAll(informer.getStore().list());
            return all;
        }

        private static <T> List<T> byId(List<SharedIndexInformer<T>> informers, String sandboxId)
        {
            List<T> found = new ArrayList<>();
            for (SharedIndexInformer<T> informer : informers)
                found.addAll(informer.getIndexer().byIndex(BY_ID, sandboxId));
            return found;
        }
    }

    private final class PodHandler implements ResourceEventHandler<Pod>
    {
        @Override
        public void onAdd(Pod pod)
        {
            if (leadership.isLeader())
                decisions.podChanged(pod);
        }

        @Override
        public void onUpdate(Pod old, Pod pod)
        {
            if (leadership.isLeader())
                decisions.podChanged(pod);
        }

        @Override
        public void onDelete(Pod pod, boolean deletedFinalStateUnknown)
        {
            if (leadership.isLeader())
                decisions.podDeleted(pod);
        }

        @Override
        public void onNothing()
        {
            // A relist after a watch gap: routes of pods that vanished meanwhile go now.
            if (leadership.isLeader())
                decisions.resync();
        }
    }

    private final class SandboxHandler implements ResourceEventHandler<GenericKubernetesResource>
    {
        @Override
        public void onAdd(GenericKubernetesResource sandbox)
        {
            if (leadership.isLeader())
                decisions.sandboxChanged(null, sandbox);
        }

        @Override
        public void onUpdate(GenericKubernetesResource old, GenericKubernetesResource sandbox)
        {
            if (leadership.isLeader())
                decisions.sandboxChanged(old, sandbox);
        }

        @Override
        public void onDelete(GenericKubernetesResource sandbox, boolean deletedFinalStateUnknown)
        {
            if (leadership.isLeader())
                decisions.sandboxDeleted(sandbox);
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
