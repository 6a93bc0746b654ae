package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Under load, requests to nodes reuse pooled connections, and a connection released on one thread
 * may take a queued request before the thread that queued it is done with it. The gateway once set
 * {@code Host} at that moment, and about one request in a thousand reached the target with two
 * {@code Host} headers (a 400). Every request must arrive with one.
 */
class EgressHostHeaderIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final int AGENTS = 16;
    private static final int REQUESTS = 250;

    private TargetServer target;
    private ForwardProxy node;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    @BeforeEach
    void start() throws Exception
    {
        target = TargetServer.start();
        node = ForwardProxy.start("n1");
    }

    private void configure(GatewayConfig config)
    {
        config.trustStoreOf(target);
        config.set("log.access", "false");
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "main")));
        config.set("egress.pools", Map.of("main", Map.of("nodes", List.of(Map.of("id", "n1", "address", node.address())))));
    }

    @AfterEach
    void stop() throws Exception
    {
        node.close();
        target.close();
    }

    @Test
    void concurrentRequestsOnPooledConnections_eachCarryOneHostHeader() throws Exception
    {
        ExecutorService agents = Executors.newFixedThreadPool(AGENTS);
        try
        {
            List<Future<Integer>> statuses = new ArrayList<>();
            for (int i = 0; i < AGENTS * REQUESTS; i++)
            {
                HttpRequest request = HttpRequest.newBuilder(gateway.uri("/egress/127.0.0.1:" + target.httpsPort() + "/echo?i=" + i))
                    .timeout(Duration.ofSeconds(20)).build();
                statuses.add(agents.submit(() -> HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode()));
            }
            int failed = 0;
            for (Future<Integer> status : statuses)
                failed += status.get() == 200 ? 0 : 1;
            assertEquals(0, failed, "requests not answered 200 out of " + statuses.size());
        }
        finally
        {
            agents.shutdownNow();
        }
    }
}
