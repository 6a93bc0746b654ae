package io.sandgate.controlplane;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.SandgateConfig;
import io.sandgate.core.Leadership;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RouteStore;
import io.sandgate.store.Store;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.KubernetesApiDouble;
import io.sandgate.testing.LogCapture;
import org.junit.jupiter.api.Test;

import static io.sandgate.testing.KubernetesApiDouble.pod;
import static io.sandgate.testing.KubernetesApiDouble.sandbox;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pod watcher with agent-sandbox's {@code Sandbox} resources, against fabric8's Kubernetes API
 * server test double in CRUD mode (list, watch, create, merge patch and delete behave as an API
 * server's do; a real one cannot run here), writing to the in-memory route store: a sandbox scaled
 * to zero, or labelled paused, gets a paused route that keeps its last target, its pod's end never
 * removes it, and a ready pod runs it again, whichever order the two watches deliver their events in.
 *
 * <p>The two watches are separate streams, each delivered in order. To show that an event changed
 * nothing, a test sends a marker after it on the same watch and waits for the marker's effect.</p>
 */
class SandboxPauseIT extends KubernetesFixture
{
    private static final String NS = "sandboxes";
    private static final String PAUSED_LABEL = "sandgate.io/paused";
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final AtomicInteger markers = new AtomicInteger(9000);
    private String version;

    private void startWatcher(String sandboxApi)
    {
        startWatcher(sandboxApi, PodWatcher.DELETION_GRACE);
    }

    private void startWatcher(String sandboxApi, Duration deletionGrace)
    {
        version = sandboxApi;
        SandgateConfig config = new GatewayConfig().set("controlplane.watcher.enabled", "true")
            .set("controlplane.watcher.namespaces", NS)
            .set("controlplane.kubernetes.master-url", kubernetes.masterUrl())
            .set("controlplane.watcher.sandbox-api", sandboxApi)
            .set("controlplane.watcher.paused-label", PAUSED_LABEL).build();
        if (store == null)
            store = Store.create(config, new SimpleMeterRegistry(), schedulers);
        watcher = new PodWatcher(config.watcher(), config.ingress(), store.routes(), Leadership.always(), new SimpleMeterRegistry(), schedulers,
            deletionGrace);
        watcher.start();
    }

    private RouteStore routes()
    {
        return store.routes();
    }

    private Optional<Route> route(String id)
    {
        return routes().find(id);
    }

    private Route awaitRoute(String id, Predicate<Route> wanted)
    {
        await().atMost(WAIT).until(() -> route(id).filter(wanted).isPresent());
        return route(id).orElseThrow();
    }

    private static Predicate<Route> runningTo(String ip)
    {
        return route -> route.running() && ip.equals(route.host());
    }

    private static Predicate<Route> paused()
    {
        return route -> !route.running();
    }

    private Pod readyPod(String name, String id, String ip)
    {
        return kubernetes.create(pod(NS, name, id, ip, true, null));
    }

    /** A {@code Sandbox} running on a ready pod named after it, once its route says so. */
    private Pod runningSandbox(String id, String ip)
    {
        createSandbox(id, true);
        Pod pod = readyPod("sb-" + id, id, ip);
        awaitRoute(id, runningTo(ip));
        return pod;
    }

    private void createSandbox(String name, boolean running)
    {
        kubernetes.create(version, sandbox(version, NS, name, spec(running)));
    }

    private Map<String, Object> spec(boolean running)
    {
        return version.equals("v1beta1") ? Map.of("operatingMode", running ? "Running" : "Suspended") : Map.of("replicas", running ? 1 : 0);
    }

    private void scale(String name, boolean running)
    {
        String patch = version.equals("v1beta1") ? "{\"spec\":{\"operatingMode\":\"" + (running ? "Running" : "Suspended") + "\"}}"
            : "{\"spec\":{\"replicas\":" + (running ? 1 : 0) + "}}";
        kubernetes.patch(version, NS, name, patch);
    }

    /** Suspends the sandbox, as its owner would, and returns its route once the watcher has paused it. */
    private Route suspend(String id)
    {
        scale(id, false);
        return awaitRoute(id, paused());
    }

    /** Waits until an event sent now on the pod watch has been handled: those before it have been too. */
    private void podWatchDrained()
    {
        String id = Integer.toString(markers.incrementAndGet());
        readyPod("marker-" + id, id, "10.99.0.1");
        awaitRoute(id, runningTo("10.99.0.1"));
    }

    /** As {@link #podWatchDrained}, on the {@code Sandbox} watch. */
    private void sandboxWatchDrained()
    {
        String id = Integer.toString(markers.incrementAndGet());
        createSandbox(id, false);
        awaitRoute(id, paused());
    }

    @Test
    void suspendedSandbox_pausesTheRouteKeepingItsTarget_itsPodsEndKeepsItPaused_andANewReadyPodRunsIt()
    {
        startWatcher("v1beta1");
        Pod first = runningSandbox("5001", "10.0.0.1");
        Instant revoked = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        Route running = routes().revoke("5001", revoked).orElseThrow();

        Route pausedRoute = suspend("5001");
        assertEquals(Route.paused(Optional.of(running)), pausedRoute, "target, generation and revocation stamp kept");
        assertEquals("10.0.0.1:6080", pausedRoute.authority());

        kubernetes.delete(first);
        podWatchDrained();
        assertEquals(Optional.of(pausedRoute), route("5001"), "the pod of a paused sandbox leaves, its route stays");

        // Resumed, but no pod is ready yet: requests keep waiting on the paused route.
        scale("5001", true);
        sandboxWatchDrained();
        assertEquals(Optional.of(pausedRoute), route("5001"));

        Pod second = readyPod("sb-5001-b", "5001", "10.0.0.2");
        Route resumed = awaitRoute("5001", runningTo("10.0.0.2"));
        assertEquals(Optional.of(second.getMetadata().getUid()), resumed.generation());
        assertEquals(Optional.of(revoked), resumed.revokedBefore(), "a revocation outlives the pause");
    }

    @Test
    void podGoneBeforeOrAfterItsSandboxIsSuspended_theRouteEndsPausedTheSameEitherWay()
    {
        startWatcher("v1beta1");
        Pod a = runningSandbox("5101", "10.0.1.1");
        Pod b = runningSandbox("5102", "10.0.1.2");
        Route runningA = route("5101").orElseThrow();
        Route runningB = route("5102").orElseThrow();

        // Suspended first, then the controller deletes the pod.
        suspend("5101");
        kubernetes.delete(a);

        // The pod's deletion seen first (its route goes), the suspension after.
        kubernetes.delete(b);
        await().atMost(WAIT).until(() -> route("5102").isEmpty());
        suspend("5102");

        podWatchDrained();
        assertEquals(Optional.of(Route.paused(Optional.of(runningA))), route("5101"));
        assertEquals(Optional.of(Route.paused(Optional.of(runningB))), route("5102"));
    }

    @Test
    void aLateReadyEventOfAPodItsSandboxIsDeleting_neverRunsTheRouteAgain()
    {
        startWatcher("v1beta1");
        Pod doomed = runningSandbox("5201", "10.0.2.1");
        Route pausedRoute = suspend("5201");

        // The sandbox is resumed before the watch has said the old pod is going; it still says ready.
        scale("5201", true);
        sandboxWatchDrained();
        kubernetes.update(new PodBuilder(doomed).editMetadata().addToAnnotations("note", "late").endMetadata().build());
        podWatchDrained();
        assertEquals(Optional.of(pausedRoute), route("5201"), "never running towards the pod being deleted");

        kubernetes.delete(doomed);
        readyPod("sb-5201-b", "5201", "10.0.2.2");
        awaitRoute("5201", runningTo("10.0.2.2"));
    }

    @Test
    void suspensionUndoneBeforeTheControllerDeletedThePod_runsOnThatPodOnceItsGraceIsOver()
    {
        Duration grace = Duration.ofMillis(600);
        startWatcher("v1beta1", grace);
        runningSandbox("5251", "10.0.2.51");
        Route running = route("5251").orElseThrow();
        suspend("5251");
        long resumed = System.nanoTime();
        scale("5251", true);

        // No event follows: the pod was never deleted. The second look after the grace finds it alive.
        assertEquals(running, awaitRoute("5251", Route::running));
        assertTrue(System.nanoTime() - resumed >= grace.toNanos() / 2, "not before most of the grace");
    }

    @Test
    void pausedLabel_onTheSandboxOrThePod_pausesIt_andLiftingItRunsTheSamePodAgain()
    {
        startWatcher("v1beta1");
        Pod pod = runningSandbox("5301", "10.0.3.1");
        Route running = route("5301").orElseThrow();

        kubernetes.patch(version, NS, "5301", "{\"metadata\":{\"labels\":{\"" + PAUSED_LABEL + "\":\"true\"}}}");
        assertEquals(Route.paused(Optional.of(running)), awaitRoute("5301", paused()));
        kubernetes.patch(version, NS, "5301", "{\"metadata\":{\"labels\":{\"" + PAUSED_LABEL + "\":null}}}");
        assertEquals(running, awaitRoute("5301", Route::running), "its pod never left");

        Pod labelled = kubernetes.update(new PodBuilder(pod).editMetadata().addToLabels(PAUSED_LABEL, "true").endMetadata().build());
        assertEquals(Route.paused(Optional.of(running)), awaitRoute("5301", paused()));
        kubernetes.update(new PodBuilder(labelled).editMetadata().removeFromLabels(PAUSED_LABEL).endMetadata().build());
        assertEquals(running, awaitRoute("5301", Route::running));

        // A pod of a sandbox without any Sandbox object is paused by the label too.
        readyPod("plain-5302", "5302", "10.0.3.2");
        awaitRoute("5302", runningTo("10.0.3.2"));
        Pod plain = kubernetes.client().pods().inNamespace(NS).withName("plain-5302").get();
        kubernetes.update(new PodBuilder(plain).editMetadata().addToLabels(PAUSED_LABEL, "true").endMetadata().build());
        awaitRoute("5302", paused());
    }

    @Test
    void v1alpha1_replicasZero_pausesTheRoute_andReplicasOneWithAReadyPodRunsIt()
    {
        startWatcher("v1alpha1");
        Pod first = runningSandbox("5401", "10.0.4.1");
        Route running = route("5401").orElseThrow();
        assertEquals(Route.paused(Optional.of(running)), suspend("5401"));
        kubernetes.delete(first);
        scale("5401", true);
        readyPod("sb-5401-b", "5401", "10.0.4.2");
        awaitRoute("5401", runningTo("10.0.4.2"));
    }

    @Test
    void sandboxCreatedSuspended_getsAPausedRouteWithoutTarget_andItsDeletionRemovesIt()
    {
        startWatcher("v1beta1");
        createSandbox("5451", false);
        Route pausedRoute = awaitRoute("5451", paused());
        assertEquals(null, pausedRoute.authority());
        kubernetes.sandbox(version, NS, "5451").delete();
        await().atMost(WAIT).until(() -> route("5451").isEmpty());
    }

    @Test
    void newLeader_keepsPausedRoutesWhosePodsAreGone()
    {
        startWatcher("v1beta1");
        Pod pod = runningSandbox("5461", "10.0.4.61");
        Route pausedRoute = suspend("5461");
        kubernetes.delete(pod);
        podWatchDrained();

        watcher.close();
        startWatcher("v1beta1");
        podWatchDrained();
        assertEquals(Optional.of(pausedRoute), route("5461"), "a resync removes running routes of gone pods, never paused ones");
    }

    @Test
    void malformedSandboxesAndPods_areIgnoredWithALog_andWriteNothing()
    {
        try (LogCapture log = new LogCapture(SandboxRoutes.class.getName()); LogCapture pods = new LogCapture(PodRoutes.class.getName()))
        {
            startWatcher("v1beta1");
            runningSandbox("5501", "10.0.5.1");
            Route running = route("5501").orElseThrow();

            kubernetes.patch(version, NS, "5501", "{\"spec\":{\"operatingMode\":\"Hibernating\"}}");
            kubernetes.create(version, new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder(sandbox(version, NS, "5502", Map.of()))
                .withAdditionalProperties(Map.of("spec", "suspended")).build());
            sandboxWatchDrained();
            kubernetes.create(pod(NS, "bad-id", "55x03", "10.0.5.3", true, null));
            kubernetes.create(pod(NS, "bad-port", "5504", "10.0.5.4", true, "http"));
            podWatchDrained();

            assertEquals(Optional.of(running), route("5501"));
            assertTrue(route("5502").isEmpty());
            assertTrue(route("5504").isEmpty());
            assertFalse(routes().all().keySet().stream().anyMatch(id -> id.contains("x")), routes().all().toString());
            await().atMost(WAIT).until(() -> log.lines().stream().anyMatch(line -> line.contains("sandboxes/5501") && line.contains("ignored"))
                && log.lines().stream().anyMatch(line -> line.contains("sandboxes/5502") && line.contains("ignored"))
                && log.lines().stream().anyMatch(line -> line.contains("sandboxes/bad-id") && line.contains("ignored"))
                && pods.lines().stream().anyMatch(line -> line.contains("sandboxes/bad-port")));
        }
    }

    @Test
    void attack_resourcesOutsideTheWatchOrWithoutAValidId_neitherPauseNorRerouteASandbox()
    {
        startWatcher("v1beta1");
        runningSandbox("5601", "10.0.6.1");
        Route running = route("5601").orElseThrow();

        // Another namespace: its Sandbox of the same name is suspended, its pod of the same id is elsewhere.
        kubernetes.create(version, sandbox(version, "elsewhere", "5601", Map.of("operatingMode", "Suspended")));
        kubernetes.create(new PodBuilder(pod("elsewhere", "sb-5601", "5601", "10.6.6.6", true, null))
            .editMetadata().addToLabels(PAUSED_LABEL, "true").endMetadata().build());
        // The watched namespace: a Sandbox whose name is no sandbox id, labelled with the victim's id.
        kubernetes.create(version, new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder(
            sandbox(version, NS, "sb-5601", Map.of("operatingMode", "Suspended")))
            .editMetadata().addToLabels(KubernetesApiDouble.ID_LABEL, "5601").addToLabels(PAUSED_LABEL, "true").endMetadata().build());
        // A pod named after the sandbox but without its id label, labelled paused, elsewhere.
        kubernetes.create(new PodBuilder(pod(NS, "5601", "5601", "10.6.6.7", true, null))
            .editMetadata().removeFromLabels(KubernetesApiDouble.ID_LABEL).addToLabels(PAUSED_LABEL, "true").endMetadata().build());
        sandboxWatchDrained();
        podWatchDrained();

        assertEquals(Optional.of(running), route("5601"));
        assertTrue(routes().all().keySet().stream().allMatch(id -> id.equals("5601") || Integer.parseInt(id) > 9000), routes().all().toString());
    }
}
