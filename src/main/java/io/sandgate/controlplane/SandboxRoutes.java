package io.sandgate.controlplane;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.micrometer.core.instrument.Counter;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RouteStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a sandbox's route should be, from what the informers know of its pods and its {@code Sandbox}:
 * running towards a ready pod, or paused while the sandbox is scaled to zero or labelled paused.
 *
 * <p>Pods and {@code Sandbox} objects come on separate watches, so their events reach the watcher in
 * either order. Each event is therefore judged against both caches, one event at a time, and the
 * outcome does not depend on which came first:</p>
 * <ul>
 *   <li>A paused route is never removed by a pod's end, only replaced by a ready pod's route or
 *   removed with its {@code Sandbox}: waiting requests keep waiting for the wake.</li>
 *   <li>A pod removed just before its {@code Sandbox} is seen suspended leaves its route behind for a
 *   moment, so that the pause keeps its target, generation and revocation stamp either way.</li>
 *   <li>The pods alive when a {@code Sandbox} is seen suspended are being deleted by its controller:
 *   a late event saying one is ready does not route to it again, unless it still has not shown it
 *   is going once a grace is over (the controller saw the suspension undone before it acted).</li>
 * </ul>
 */
final class SandboxRoutes
{
    private static final Logger LOG = LoggerFactory.getLogger(SandboxRoutes.class);
    /** Routes remembered after their pod's end; only the last moments matter, so a bound keeps churn from growing it. */
    private static final int REMEMBERED = 4096;

    /** What the informers hold, by sandbox id. */
    interface Known
    {
        List<Pod> pods(String sandboxId);

        List<GenericKubernetesResource> sandboxes(String sandboxId);

        Collection<Pod> allPods();
    }

    private final RouteStore routes;
    private final PodRoutes pods;
    private final Optional<SandboxResources> sandboxes;
    private final Optional<String> pausedLabel;
    private final Known known;
    private final Counter written;
    private final Counter removed;
    private final Map<String, Route> lastRemoved = new LinkedHashMap<>(16, 0.75f, true)
    {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Route> eldest)
        {
            return size() > REMEMBERED;
        }
    };
    /** Uids of the pods being deleted because their {@code Sandbox} was suspended, with when that was seen. */
    private final Map<String, Long> doomed = new HashMap<>();
    /** How long a doomed pod has to show it is going before it is taken for alive again. */
    private final long graceNanos;
    /** Calls {@link #reconsider} with the id after the grace. */
    private final Consumer<String> later;

    /**
     * @param grace how long a pod of a suspended {@code Sandbox} has to show it is going (its
     *        deletion seen on the pod watch) before it is taken for alive again
     * @param later runs {@link #reconsider} with the sandbox id once the grace is over, off this thread
     */
    SandboxRoutes(RouteStore routes, PodRoutes pods, Optional<SandboxResources> sandboxes, Optional<String> pausedLabel, Known known,
                  Counter written, Counter removed, Duration grace, Consumer<String> later)
    {
        this.routes = routes;
        this.pods = pods;
        this.sandboxes = sandboxes;
        this.pausedLabel = pausedLabel;
        this.known = known;
        this.written = written;
        this.removed = removed;
        this.graceNanos = grace.toNanos();
        this.later = later;
    }

    /** A pod was added or changed. */
    synchronized void podChanged(Pod pod)
    {
        Optional<String> id = sandboxId(pod);
        if (id.isEmpty())
            return;
        if (paused(id.get()))
        {
            pause(id.get());
            return;
        }
        Optional<Route> route = doomed(pod) ? Optional.empty() : pods.route(pod);
        if (route.isPresent())
            run(id.get(), route.get());
        else
            // Failed, not ready, or lost its IP: this pod's route goes, a successor's stays.
            dropIfRunning(id.get(), pod.getMetadata().getUid());
    }

    synchronized void podDeleted(Pod pod)
    {
        doomed.remove(pod.getMetadata().getUid());
        Optional<String> id = sandboxId(pod);
        if (id.isEmpty())
            return;
        if (paused(id.get()))
            pause(id.get());
        else
            dropIfRunning(id.get(), pod.getMetadata().getUid());
    }

    /** A {@code Sandbox} was added ({@code old} null) or changed. */
    synchronized void sandboxChanged(GenericKubernetesResource old, GenericKubernetesResource sandbox)
    {
        SandboxResources resources = sandboxes.orElseThrow();
        Optional<String> id = resources.sandboxId(sandbox);
        if (id.isEmpty())
        {
            LOG.warn("Sandbox {}/{}: its name is not a sandbox id; ignored", namespace(sandbox), name(sandbox));
            return;
        }
        Optional<Boolean> suspended = resources.suspended(sandbox);
        if (suspended.isEmpty())
        {
            LOG.warn("Sandbox {}/{}: its spec says neither running nor suspended in {}; ignored", namespace(sandbox), name(sandbox), resources.version());
            return;
        }
        if (suspended.get() && (old == null || !resources.suspended(old).orElse(false)) && !known.pods(id.get()).isEmpty())
        {
            long now = System.nanoTime();
            known.pods(id.get()).forEach(pod -> doomed.put(pod.getMetadata().getUid(), now));
            later.accept(id.get());
        }
        if (paused(id.get()))
            pause(id.get());
        else
            resumeFromKnownPods(id.get());
    }

    synchronized void sandboxDeleted(GenericKubernetesResource sandbox)
    {
        Optional<String> id = sandboxes.orElseThrow().sandboxId(sandbox);
        if (id.isEmpty())
            return;
        if (paused(id.get()))
        {
            pause(id.get());
            return;
        }
        resumeFromKnownPods(id.get());
        Optional<Route> current = routes.find(id.get());
        // Gone with its Sandbox: no wake can bring it back now.
        if (current.isPresent() && !current.get().running()
            && (current.get().generation().isPresent() ? routes.removeIf(id.get(), current.get().generation().get()) : routes.remove(id.get())))
            removed.increment();
        lastRemoved.remove(id.get());
    }

    /**
     * After a suspension's grace: a pod that was to be deleted and still has not shown it is going
     * was never deleted (the controller saw the suspension undone before it acted), so a resumed
     * sandbox may run on it again.
     */
    synchronized void reconsider(String id)
    {
        if (!paused(id))
            resumeFromKnownPods(id);
    }

    /**
     * Removes running routes the watcher wrote (those with a generation) whose pods are no longer
     * known. Paused routes stay: their pods are meant to be gone.
     */
    synchronized void resync()
    {
        Set<String> live = new HashSet<>();
        Set<String> uids = new HashSet<>();
        for (Pod pod : known.allPods())
        {
            uids.add(pod.getMetadata().getUid());
            pods.sandboxId(pod).ifPresent(id -> live.add(id + "\n" + pod.getMetadata().getUid()));
        }
        doomed.keySet().retainAll(uids);
        for (Map.Entry<String, Route> entry : routes.all().entrySet())
        {
            Optional<String> generation = entry.getValue().generation();
            if (entry.getValue().running() && generation.isPresent() && !live.contains(entry.getKey() + "\n" + generation.get())
                && routes.removeIf(entry.getKey(), generation.get()))
                removed.increment();
        }
    }

    /** Whether the pod is being deleted with its suspended {@code Sandbox}, as far as is known yet. */
    private boolean doomed(Pod pod)
    {
        Long since = doomed.get(pod.getMetadata().getUid());
        if (since == null)
            return false;
        if (System.nanoTime() - since < graceNanos)
            return true;
        doomed.remove(pod.getMetadata().getUid());
        return false;
    }

    private Optional<String> sandboxId(Pod pod)
    {
        Optional<String> id = pods.sandboxId(pod);
        if (id.isEmpty() && pods.claimsSandbox(pod))
            LOG.warn("Pod {}/{}: its sandbox id is not a valid one; ignored", namespace(pod), name(pod));
        return id;
    }

    /** Whether the sandbox is paused: its {@code Sandbox} suspended or labelled, or a live pod of it labelled. */
    private boolean paused(String id)
    {
        for (Pod pod : known.pods(id))
        {
            if (PodRoutes.alive(pod) && labelledPaused(pod))
                return true;
        }
        if (sandboxes.isEmpty())
            return false;
        for (GenericKubernetesResource sandbox : known.sandboxes(id))
        {
            if (sandboxes.get().suspended(sandbox).orElse(false) || labelledPaused(sandbox))
                return true;
        }
        return false;
    }

    private boolean labelledPaused(HasMetadata resource)
    {
        Map<String, String> labels = resource.getMetadata().getLabels();
        return pausedLabel.isPresent() && labels != null && "true".equals(labels.get(pausedLabel.get()));
    }

    /** Turns the route paused, keeping what it led to; a sandbox without one gets a paused route with no target. */
    private void pause(String id)
    {
        Optional<Route> current = routes.find(id);
        if (current.isPresent() && !current.get().running())
            return;
        routes.put(id, Route.paused(current.isPresent() ? current : Optional.ofNullable(lastRemoved.get(id))));
        written.increment();
    }

    private void run(String id, Route route)
    {
        Optional<Route> current = routes.find(id);
        // A revocation outlives the pod: its stamp moves to the route of the pod after it.
        Route wanted = route.keepingRevocationOf(current.isPresent() ? current : Optional.ofNullable(lastRemoved.get(id)));
        lastRemoved.remove(id);
        if (current.isEmpty() || !current.get().equals(wanted))
        {
            routes.put(id, wanted);
            written.increment();
        }
    }

    /** Removes the route if it is running towards this pod; remembers it for a pause that may follow. */
    private void dropIfRunning(String id, String uid)
    {
        Optional<Route> current = routes.find(id);
        if (current.isPresent() && current.get().running() && current.get().generation().equals(Optional.of(uid)) && routes.removeIf(id, uid))
        {
            lastRemoved.put(id, current.get());
            removed.increment();
        }
    }

    /** A paused route whose sandbox is no longer paused turns running if a pod of it is ready already. */
    private void resumeFromKnownPods(String id)
    {
        Optional<Route> current = routes.find(id);
        if (current.isEmpty() || current.get().running())
            return;
        for (Pod pod : known.pods(id))
        {
            Optional<Route> route = doomed(pod) ? Optional.empty() : pods.route(pod);
            if (route.isPresent())
            {
                run(id, route.get());
                return;
            }
        }
    }

    private static String namespace(HasMetadata resource)
    {
        return resource.getMetadata() == null ? null : resource.getMetadata().getNamespace();
    }

    private static String name(HasMetadata resource)
    {
        return resource.getMetadata() == null ? null : resource.getMetadata().getName();
    }
}
