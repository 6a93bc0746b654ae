package io.sandgate.controlplane;

import java.time.Duration;
import java.util.HashMap;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.sandgate.core.Secret;
import io.sandgate.ingress.Grants;
import io.sandgate.ingress.Route;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.KubernetesApiDouble;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pod watcher against fabric8's Kubernetes API server double (CRUD mode: list, watch, create,
 * update, delete behave as an API server's do; a real API server cannot run here), writing to a
 * real redis-server, with two gateway replicas competing for leadership.
 */
class PodWatcherIT
{
    private KubernetesMockServer kubernetes;
    private KubernetesClient client;
    private RedisServerProcess redis;
    private RawRedis raw;
    private RunningGateway replicaA;
    private RunningGateway replicaB;

    @RegisterExtension
    final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .redisStore(redis)
        .set("controlplane.watcher.enabled", "true")
        .set("controlplane.watcher.namespaces", "sandboxes")
        .set("controlplane.kubernetes.master-url", client.getConfiguration().getMasterUrl()));

    @BeforeEach
    void start() throws Exception
    {
        kubernetes = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
        kubernetes.init();
        client = kubernetes.createClient();
        redis = RedisServerProcess.start();
        raw = RawRedis.connect(redis.port());
    }

    private RunningGateway gateway() throws Exception
    {
        return gateway("gateway");
    }

    private RunningGateway gateway(String role) throws Exception
    {
        return gateways.startAnother(config -> config.set("server.role", role));
    }

    @AfterEach
    void stop() throws Exception
    {
        Fixtures.closeInOrder(raw, redis);
        client.close();
        kubernetes.destroy();
    }

    private static Pod pod(String name, String uid, String id, String ip, boolean ready, String port)
    {
        return new PodBuilder(KubernetesApiDouble.pod("sandboxes", name, id, ip, ready, port)).editMetadata().withUid(uid).endMetadata().build();
    }

    private String route(String id)
    {
        return raw.hget("vnc_sandboxes", id);
    }

    @Test
    void readyPod_getsARoute_andLosesItWhenNotReadyOrDeleted() throws Exception
    {
        replicaA = gateway();
        Pod created = client.pods().inNamespace("sandboxes").resource(pod("sb-5001", "uid-1", "5001", "10.1.2.3", true, "6081")).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> route("5001") != null);
        Route written = Route.parse(route("5001"));
        assertEquals("10.1.2.3:6081", written.authority());
        assertEquals(Optional.of(created.getMetadata().getUid()), written.generation(), "the pod uid guards the route");

        Pod notReady = pod("sb-5001", created.getMetadata().getUid(), "5001", "10.1.2.3", false, "6081");
        notReady.getMetadata().setResourceVersion(null);
        client.pods().inNamespace("sandboxes").resource(notReady).update();
        await().atMost(Duration.ofSeconds(10)).until(() -> route("5001") == null);

        client.pods().inNamespace("sandboxes").resource(pod("sb-5002", "uid-2", "5002", "10.1.2.4", true, null)).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> route("5002") != null);
        assertEquals("10.1.2.4:6080", Route.parse(route("5002")).authority(), "default port");
        client.pods().inNamespace("sandboxes").withName("sb-5002").delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> route("5002") == null);
    }

    @Test
    void pendingPod_hasNoRoute_untilRunningAndReady_thenWithin100ms() throws Exception
    {
        replicaA = gateway();
        Pod pending = new PodBuilder(pod("sb-5100", "u", "5100", null, false, null)).editStatus().withPhase("Pending").endStatus().build();
        Pod created = client.pods().inNamespace("sandboxes").resource(pending).create();
        // The watcher has seen the pod once the pod list in its informer has it; still no route.
        await().pollDelay(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> true);
        assertEquals(null, route("5100"));

        Pod running = pod("sb-5100", created.getMetadata().getUid(), "5100", "10.2.0.1", true, null);
        long start = System.nanoTime();
        client.pods().inNamespace("sandboxes").resource(running).update();
        await().atMost(Duration.ofMillis(100)).pollInterval(Duration.ofMillis(5)).until(() -> route("5100") != null);
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertEquals("10.2.0.1:6080", Route.parse(route("5100")).authority(), "route after " + millis + " ms");
    }

    @Test
    void eventAboutAnOldPod_neverDeletesItsSuccessorsRoute() throws Exception
    {
        replicaA = gateway();
        client.pods().inNamespace("sandboxes").resource(pod("old", "uid-old", "6001", "10.0.0.1", true, null)).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> route("6001") != null);
        client.pods().inNamespace("sandboxes").resource(pod("new", "uid-new", "6001", "10.0.0.2", true, null)).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> route("6001") != null && route("6001").contains("10.0.0.2"));

        client.pods().inNamespace("sandboxes").withName("old").delete();
        // Give the delete event time to be handled, then check the new pod's route survived it.
        await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> true);
        assertEquals("10.0.0.2:6080", Route.parse(route("6001")).authority());
    }

    @Test
    void resyncAtStart_removesWatcherRoutesOfVanishedPods_andKeepsOthers() throws Exception
    {
        raw.hset("vnc_sandboxes", "7001", "{\"target\":\"10.9.9.9:6080\",\"generation\":\"uid-gone\"}");
        raw.hset("vnc_sandboxes", "7002", "10.9.9.8:6080");
        client.pods().inNamespace("sandboxes").resource(pod("live", "uid-live", "7003", "10.0.0.3", true, null)).create();

        replicaA = gateway();
        await().atMost(Duration.ofSeconds(10)).until(() -> route("7003") != null && route("7001") == null);
        assertEquals("10.9.9.8:6080", route("7002"), "a route no watcher wrote (no generation) is left alone");
    }

    @Test
    void oneReplicaWrites_andLeadershipPassesWhenTheLeaderStops() throws Exception
    {
        replicaA = gateway();
        await().atMost(Duration.ofSeconds(10)).until(() -> leaders() == 1);
        replicaB = gateway();
        client.pods().inNamespace("sandboxes").resource(pod("p1", "uid-p1", "8001", "10.0.1.1", true, null)).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> route("8001") != null);
        assertEquals(1, leaders(), "exactly one leader");

        boolean aLeads = metric(replicaA).contains("sandgate_watcher_leader 1.0");
        if (aLeads)
        {
            replicaA.close();
            replicaA = null;
        }
        else
        {
            replicaB.close();
            replicaB = null;
        }
        RunningGateway survivor = aLeads ? replicaB : replicaA;
        await().atMost(Duration.ofSeconds(20)).until(() -> metric(survivor).contains("sandgate_watcher_leader 1.0"));
        client.pods().inNamespace("sandboxes").resource(pod("p2", "uid-p2", "8002", "10.0.1.2", true, null)).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> route("8002") != null);
    }

    @Test
    void controlPlaneRole_watchesPods_andServesNoTraffic() throws Exception
    {
        replicaA = gateway("controlplane");
        client.pods().inNamespace("sandboxes").resource(pod("cp", "u", "9001", "10.3.0.1", true, null)).create();
        await().atMost(Duration.ofSeconds(10)).until(() -> route("9001") != null);
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        assertEquals(404, http.send(java.net.http.HttpRequest.newBuilder(replicaA.uri().resolve("/vnc/9001/")).build(),
            java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode(), "no ingress in the control plane");
        assertEquals(200, http.send(java.net.http.HttpRequest.newBuilder(replicaA.uri().resolve("/readyz")).build(),
            java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode());
    }

    @Test
    void aReplacedPod_refusesTheOldPodsCookies_andARevocationOutlivesThePod() throws Exception
    {
        String secret = "watcher-it-secret-0123456789abcdef";
        String token = "watcher-it-admin-token-0123456789";
        try (SandboxBackend sandbox = SandboxBackend.start("pod"))
        {
            replicaA = gateways.startAnother(config -> config.set("ingress.access", "signed")
                .set("ingress.cookie.secret", secret).set("admin.token", token));
            String port = Integer.toString(sandbox.port());
            client.pods().inNamespace("sandboxes").resource(pod("sb-5300", "uid-5300a", "5300", "127.0.0.1", true, port)).create();
            await().atMost(Duration.ofSeconds(10)).until(() -> route("5300") != null);
            Grants grants = Grants.create(new Secret(secret), java.time.Clock.systemUTC());
            String cookie = redeem(replicaA, grants.issue("5300", "alice", Duration.ofMinutes(5)));
            assertEquals(200, status(replicaA, "/vnc/5300/", cookie));

            // A successor pod: the watcher writes its uid as the route's generation.
            Pod successor = client.pods().inNamespace("sandboxes").resource(pod("sb-5300-b", "uid-5300b", "5300", "127.0.0.1", true, port)).create();
            await().atMost(Duration.ofSeconds(10)).until(() -> route("5300").contains(successor.getMetadata().getUid()));
            await().atMost(Duration.ofSeconds(1)).until(() -> status(replicaA, "/vnc/5300/", cookie) == 403);

            String fresh = redeem(replicaA, grants.issue("5300", "alice", Duration.ofMinutes(5)));
            assertEquals(200, status(replicaA, "/vnc/5300/", fresh));
            java.net.http.HttpResponse<String> revoked = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(replicaA.uri().resolve("/admin/revoke/5300")).header("Authorization", "Bearer " + token)
                    .POST(java.net.http.HttpRequest.BodyPublishers.noBody()).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(200, revoked.statusCode(), revoked.body());
            await().atMost(Duration.ofSeconds(1)).until(() -> status(replicaA, "/vnc/5300/", fresh) == 403);

            // The pod after that one inherits the stamp: the revoked session stays refused.
            Pod third = client.pods().inNamespace("sandboxes").resource(pod("sb-5300-c", "uid-5300c", "5300", "127.0.0.1", true, port)).create();
            await().atMost(Duration.ofSeconds(10)).until(() -> route("5300").contains(third.getMetadata().getUid()));
            assertTrue(Route.parse(route("5300")).revokedBefore().isPresent(), route("5300"));
            assertEquals(403, status(replicaA, "/vnc/5300/", fresh));
        }
    }

    /** Follows a grant link and returns the session cookie's value. */
    private static String redeem(RunningGateway gateway, String grant) throws Exception
    {
        java.net.http.HttpResponse<String> response = java.net.http.HttpClient.newHttpClient().send(
            java.net.http.HttpRequest.newBuilder(gateway.uri().resolve("/vnc/5300/?sandgate_grant=" + grant)).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(303, response.statusCode(), response.body());
        String setCookie = response.headers().firstValue("Set-Cookie").orElseThrow();
        return setCookie.substring(setCookie.indexOf('=') + 1, setCookie.indexOf(';'));
    }

    private static int status(RunningGateway gateway, String path, String cookie) throws Exception
    {
        return java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(gateway.uri().resolve(path))
            .header("Cookie", "vnc_session_id=" + cookie).build(), java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private int leaders() throws Exception
    {
        int count = 0;
        for (RunningGateway replica : new RunningGateway[]{replicaA, replicaB})
        {
            if (replica != null && metric(replica).contains("sandgate_watcher_leader 1.0"))
                count++;
        }
        return count;
    }

    private static String metric(RunningGateway replica) throws Exception
    {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        return http.send(java.net.http.HttpRequest.newBuilder(replica.uri().resolve("/metrics")).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString()).body();
    }
}
