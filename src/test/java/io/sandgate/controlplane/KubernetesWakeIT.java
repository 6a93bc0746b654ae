package io.sandgate.controlplane;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.sandgate.config.ConfigException;
import io.sandgate.ingress.Route;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.KubernetesApiDouble;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.sandgate.testing.KubernetesApiDouble.pod;
import static io.sandgate.testing.KubernetesApiDouble.sandbox;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Wake on traffic on Kubernetes, end to end: a gateway whose pod watcher watches fabric8's
 * Kubernetes API server test double in CRUD mode (a real API server cannot run here) and wakes
 * sandboxes with {@code ingress.wake.kubernetes}. A request for a suspended sandbox patches its
 * {@code Sandbox} running; the test then plays agent-sandbox's controller (it makes the sandbox's pod,
 * ready, in front of a real HTTP backend), and the request that waited meanwhile is answered by it.
 */
class KubernetesWakeIT
{
    private static final String NS = "sandboxes";
    private static final HttpClient HTTP = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();

    private KubernetesApiDouble kubernetes;
    private SandboxBackend desktop;

    @RegisterExtension
    final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .set("controlplane.watcher.enabled", "true")
        .set("controlplane.watcher.namespaces", NS)
        .set("controlplane.kubernetes.master-url", kubernetes.masterUrl())
        .set("controlplane.watcher.sandbox-api", "v1beta1")
        .set("ingress.wake.kubernetes", "true")
        .set("ingress.wake.timeout", "15s"));

    @BeforeEach
    void start()
    {
        kubernetes = KubernetesApiDouble.start();
        desktop = SandboxBackend.start("desktop");
    }

    @AfterEach
    void stop() throws Exception
    {
        Fixtures.closeInOrder(desktop, kubernetes);
    }

    private Object operatingMode(String name)
    {
        GenericKubernetesResource read = kubernetes.sandbox("v1beta1", NS, name).get();
        return ((Map<?, ?>) read.getAdditionalProperties().get("spec")).get("operatingMode");
    }

    @Test
    void requestForASuspendedSandbox_patchesItRunning_andIsAnsweredByItsPodOnceReady() throws Exception
    {
        kubernetes.create("v1beta1", sandbox("v1beta1", NS, "8001", Map.of("operatingMode", "Suspended")));
        RunningGateway gateway = gateways.startAnother();
        await().atMost(Duration.ofSeconds(10)).until(() -> gateway.sandgate().store().routes().find("8001").filter(r -> !r.running()).isPresent());

        CompletableFuture<HttpResponse<String>> answer = HTTP.sendAsync(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/8001/echo"))
            .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(10)).until(() -> "Running".equals(operatingMode("8001")));
        assertFalse(answer.isDone(), "answered before its sandbox ran");

        kubernetes.create(pod(NS, "8001", "8001", "127.0.0.1", true, Integer.toString(desktop.port())));
        HttpResponse<String> response = answer.get(15, TimeUnit.SECONDS);
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().startsWith("backend=desktop"), response.body());
        assertTrue(gateway.sandgate().store().routes().find("8001").map(Route::running).orElse(false));
    }

    @Test
    void requestForASandboxWithoutSandboxObject_isNotFound_andPatchesNothing() throws Exception
    {
        RunningGateway gateway = gateways.startAnother();
        // Paused by some other hand, but no Sandbox of that name exists: the manager says unknown.
        gateway.sandgate().store().routes().put("8002", Route.paused(java.util.Optional.empty()));
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/8002/echo"))
            .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(404, response.statusCode(), response.body());
        assertEquals(null, kubernetes.sandbox("v1beta1", NS, "8002").get());
    }

    @Test
    void wakeKubernetes_withoutTheWatcherOrASandboxVersion_stopsStartUpNamingTheKey()
    {
        ConfigException noWatcher = assertThrows(ConfigException.class, () -> new GatewayConfig().set("ingress.wake.kubernetes", "true").build());
        assertTrue(noWatcher.getMessage().contains("ingress.wake.kubernetes"), noWatcher.getMessage());
        ConfigException noVersion = assertThrows(ConfigException.class, () -> new GatewayConfig().set("ingress.wake.kubernetes", "true")
            .set("controlplane.watcher.enabled", "true").build());
        assertTrue(noVersion.getMessage().contains("controlplane.watcher.sandbox-api"), noVersion.getMessage());
    }
}
