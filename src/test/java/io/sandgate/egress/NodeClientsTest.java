package io.sandgate.egress;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.EgressConfig;
import io.sandgate.core.Schedulers;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The nodes' clients and the configured trust store: read once per start, and a bad one stops the start with a clear word. */
@ExtendWith(WorkDirExtension.class)
class NodeClientsTest
{
    private static final String PASSWORD = "trust-store-password-0123";
    private static final EgressConfig.Health HEALTH = new EgressConfig.Health(Duration.ofSeconds(3), Duration.ofSeconds(2), 3,
        Duration.ofSeconds(15), Optional.empty(), Duration.ofSeconds(3), 10, Duration.ofMillis(50), Duration.ofMillis(100), 3,
        Duration.ofSeconds(10), List.of(10, 50, 100), Duration.ofSeconds(10), 0.5, 0.8);

    public WorkDir workDir;
    private final Schedulers schedulers = Schedulers.create();
    private NodeClients clients;

    @AfterEach
    void stop()
    {
        if (clients != null)
            clients.close();
        schedulers.close();
    }

    private NodeClients clients(String trustStore, String password)
    {
        Map<String, Object> values = new HashMap<>();
        values.put("egress.tls.trust-store", trustStore);
        values.put("egress.tls.trust-store-password", password);
        values.put("egress.pools", Map.of("main", Map.of("nodes", List.of(Map.of("id", "n1", "address", "192.0.2.1:3128")))));
        EgressConfig config = ConfigLoader.fromValues(values).egress();
        clients = new NodeClients(config, schedulers, new EgressMetrics(new SimpleMeterRegistry(), new NodePools(config, NodeSelector.weighted())));
        return clients;
    }

    private static NodeState node(String id)
    {
        return new NodeState("main", new EgressConfig.Node(id, "192.0.2.1", 3128, "eu", 100), HEALTH);
    }

    private Path trustStore() throws Exception
    {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setCertificateEntry("ca", InspectionCa.generate().certificate());
        Path file = workDir.getEmptyPathDir().resolve("trust.p12");
        try (OutputStream out = Files.newOutputStream(file))
        {
            store.store(out, PASSWORD.toCharArray());
        }
        return file;
    }

    @Test
    void everyClientOfAStart_trustsTheOneReadOfTheTrustStore() throws Exception
    {
        NodeClients made = clients(trustStore().toString(), PASSWORD);
        NodeState first = node("n1");
        NodeState second = node("n2");
        made.start(List.of(first, second));

        KeyStore read = made.traffic(first).getSslContextFactory().getTrustStore();
        assertNotNull(read);
        assertTrue(read.containsAlias("ca"));
        for (NodeState node : List.of(first, second))
        {
            for (HttpClient client : List.of(made.traffic(node), made.probe(node), made.oneShot(node)))
                assertSame(read, client.getSslContextFactory().getTrustStore(), "read once for the six clients of two nodes");
        }
    }

    @Test
    void aMissingTrustStore_orAWrongPassword_stopsTheStart_namingTheSettingAndNeverThePassword() throws Exception
    {
        Path missing = workDir.getEmptyPathDir().resolve("nowhere.p12");
        Exception notFound = assertThrows(Exception.class, () -> clients(missing.toString(), PASSWORD).start(List.of(node("n1"))));
        assertTrue(notFound.getMessage().contains("egress.tls.trust-store") && notFound.getMessage().contains("nowhere.p12"), notFound::toString);

        String wrong = "not-the-password-4567";
        Exception refused = assertThrows(Exception.class, () -> clients(trustStore().toString(), wrong).start(List.of(node("n1"))));
        assertTrue(refused.getMessage().contains("egress.tls.trust-store") && refused.getMessage().contains("cannot be read"), refused::toString);
        for (Throwable cause = refused; cause != null; cause = cause.getCause())
            assertFalse(String.valueOf(cause.getMessage()).contains(wrong), () -> "the password in " + refused);
    }
}
