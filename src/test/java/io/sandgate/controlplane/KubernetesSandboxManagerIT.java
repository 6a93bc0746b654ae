package io.sandgate.controlplane;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.SandgateConfig;
import io.sandgate.core.Leadership;
import io.sandgate.ingress.lifecycle.SandboxManager;
import io.sandgate.ingress.lifecycle.SandboxManager.ManagerException;
import io.sandgate.store.Store;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.LoopbackServers;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;

import static io.sandgate.testing.KubernetesApiDouble.sandbox;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Kubernetes sandbox manager against fabric8's Kubernetes API server test double in CRUD mode
 * (merge patches and reads behave as an API server's do; a real one cannot run here): what it
 * changes is read back from the double. Refusals that double cannot give (403, a resource type the
 * server does not serve) come from a real HTTP server answering as an API server does.
 */
class KubernetesSandboxManagerIT extends KubernetesFixture
{
    private static final String NS = "sandboxes";

    /** Runs nothing until the test says: a patch that happened on the caller's thread would show at once. */
    private final ConcurrentLinkedQueue<Runnable> queued = new ConcurrentLinkedQueue<>();
    private final Executor workers = queued::add;

    /** A manager from a watcher that is built but not started: a replica that is not the leader asks too. */
    private SandboxManager manager(String sandboxApi, String namespaces, String masterUrl)
    {
        SandgateConfig config = new GatewayConfig().set("controlplane.watcher.enabled", "true")
            .set("controlplane.watcher.namespaces", namespaces)
            .set("controlplane.kubernetes.master-url", masterUrl)
            .set("controlplane.watcher.sandbox-api", sandboxApi).build();
        store = Store.create(config, new SimpleMeterRegistry(), schedulers);
        watcher = new PodWatcher(config.watcher(), config.ingress(), store.routes(), Leadership.always(), new SimpleMeterRegistry(), schedulers);
        return watcher.sandboxManager(workers);
    }

    private SandboxManager manager(String sandboxApi)
    {
        return manager(sandboxApi, NS, kubernetes.masterUrl());
    }

    /** Runs what the manager queued and returns the outcome of {@code asked}. */
    private static ManagerException failureOf(CompletableFuture<Void> asked, Runnable drain) throws Exception
    {
        drain.run();
        ExecutionException x = assertThrows(ExecutionException.class, () -> asked.get(10, TimeUnit.SECONDS));
        return assertInstanceOf(ManagerException.class, x.getCause());
    }

    private void drain()
    {
        for (Runnable task = queued.poll(); task != null; task = queued.poll())
            task.run();
    }

    private Object spec(String version, String namespace, String name, String field)
    {
        GenericKubernetesResource read = kubernetes.sandbox(version, namespace, name).get();
        return ((Map<?, ?>) read.getAdditionalProperties().get("spec")).get(field);
    }

    @Test
    void resumeAndPause_patchTheNamedSandboxsOperatingMode_inItsNamespace_offTheCallersThread() throws Exception
    {
        kubernetes.create("v1beta1", sandbox("v1beta1", NS, "7001", Map.of("operatingMode", "Suspended")));
        kubernetes.create("v1beta1", sandbox("v1beta1", NS, "7002", Map.of("operatingMode", "Suspended")));
        SandboxManager manager = manager("v1beta1");
        int before = kubernetes.requestCount();

        CompletableFuture<Void> resumed = manager.resume("7001");
        assertFalse(resumed.isDone(), "the patch waits for a worker");
        assertEquals(before, kubernetes.requestCount(), "nothing was sent from the caller's thread");
        drain();
        resumed.get(10, TimeUnit.SECONDS);
        assertEquals("Running", spec("v1beta1", NS, "7001", "operatingMode"));
        assertEquals("Suspended", spec("v1beta1", NS, "7002", "operatingMode"), "another sandbox untouched");

        CompletableFuture<Void> paused = manager.pause("7001");
        drain();
        paused.get(10, TimeUnit.SECONDS);
        assertEquals("Suspended", spec("v1beta1", NS, "7001", "operatingMode"));
    }

    @Test
    void v1alpha1_resumeSetsReplicasToOne_andPauseToZero() throws Exception
    {
        kubernetes.create("v1alpha1", sandbox("v1alpha1", NS, "7011", Map.of("replicas", 0)));
        SandboxManager manager = manager("v1alpha1");
        CompletableFuture<Void> resumed = manager.resume("7011");
        drain();
        resumed.get(10, TimeUnit.SECONDS);
        assertEquals(1, ((Number) spec("v1alpha1", NS, "7011", "replicas")).intValue());
        CompletableFuture<Void> paused = manager.pause("7011");
        drain();
        paused.get(10, TimeUnit.SECONDS);
        assertEquals(0, ((Number) spec("v1alpha1", NS, "7011", "replicas")).intValue());
    }

    @Test
    void unknownSandbox_isUnknown() throws Exception
    {
        SandboxManager manager = manager("v1beta1");
        assertTrue(failureOf(manager.resume("7999"), this::drain).unknown());
        assertTrue(kubernetes.sandbox("v1beta1", NS, "7999").get() == null, "a patch creates nothing");
    }

    @Test
    void severalNamespaces_theOneHoldingTheSandboxIsPatched_andOneInTwoIsRefused() throws Exception
    {
        kubernetes.create("v1beta1", sandbox("v1beta1", "team-b", "7101", Map.of("operatingMode", "Suspended")));
        kubernetes.create("v1beta1", sandbox("v1beta1", "team-a", "7102", Map.of("operatingMode", "Suspended")));
        kubernetes.create("v1beta1", sandbox("v1beta1", "team-b", "7102", Map.of("operatingMode", "Suspended")));
        SandboxManager manager = manager("v1beta1", "team-a,team-b", kubernetes.masterUrl());

        CompletableFuture<Void> resumed = manager.resume("7101");
        drain();
        resumed.get(10, TimeUnit.SECONDS);
        assertEquals("Running", spec("v1beta1", "team-b", "7101", "operatingMode"));

        ManagerException ambiguous = failureOf(manager.resume("7102"), this::drain);
        assertFalse(ambiguous.unknown(), ambiguous.getMessage());
        assertEquals("Suspended", spec("v1beta1", "team-a", "7102", "operatingMode"));
        assertEquals("Suspended", spec("v1beta1", "team-b", "7102", "operatingMode"));
        assertTrue(failureOf(manager.resume("7103"), this::drain).unknown());
    }

    @Test
    void attack_anIdThatIsNoObjectName_orASandboxOutsideTheWatch_isNeverPatched() throws Exception
    {
        kubernetes.create("v1beta1", sandbox("v1beta1", "elsewhere", "7201", Map.of("operatingMode", "Suspended")));
        SandboxManager manager = manager("v1beta1");
        int before = kubernetes.requestCount();
        for (String id : List.of("../../../api/v1/namespaces/x/pods/y", "7201/status", "7201?dryRun=All", "Sandbox-7201", ""))
        {
            CompletableFuture<Void> asked = manager.resume(id);
            assertTrue(asked.isCompletedExceptionally(), id);
            assertTrue(failureOf(asked, this::drain).unknown(), id);
        }
        assertEquals(before, kubernetes.requestCount(), "no request was sent for them");

        assertTrue(failureOf(manager.resume("7201"), this::drain).unknown());
        assertEquals("Suspended", spec("v1beta1", "elsewhere", "7201", "operatingMode"));
    }

    @Test
    void apiServerRefusals_areFailures_andOnlyAMissingObjectIsAnUnknownSandbox() throws Exception
    {
        // A real HTTP server answering as an API server does: 403 without RBAC; 404 naming the object
        // when there is no such Sandbox, and naming none when the resource type is not served.
        String[] answer = {"403", "Forbidden", "{}"};
        Server api = LoopbackServers.serve("kubernetes-api", new Handler.Abstract()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                response.setStatus(Integer.parseInt(answer[0]));
                response.getHeaders().put("Content-Type", "application/json");
                response.write(true, java.nio.ByteBuffer.wrap(("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\""
                    + answer[1] + "\",\"details\":" + answer[2] + ",\"code\":" + answer[0] + "}").getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        try
        {
            SandboxManager manager = manager("v1beta1", NS, "http://127.0.0.1:" + LoopbackServers.port(api));
            ManagerException forbidden = failureOf(manager.resume("7301"), this::drain);
            assertFalse(forbidden.unknown());
            assertEquals("Kubernetes API answered 403", forbidden.getMessage());

            answer[0] = "404";
            answer[1] = "NotFound";
            ManagerException notServed = failureOf(manager.pause("7301"), this::drain);
            assertFalse(notServed.unknown(), notServed.getMessage());

            answer[2] = "{\"name\":\"7301\",\"group\":\"agents.x-k8s.io\",\"kind\":\"sandboxes\"}";
            assertTrue(failureOf(manager.resume("7301"), this::drain).unknown());
        }
        finally
        {
            api.stop();
        }
    }
}
