package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** With the Redis store, every replica pins an agent session to the same egress node. */
class EgressStickyAcrossReplicasIT
{
    private final List<ForwardProxy> nodes = new ArrayList<>();
    private RedisServerProcess redis;
    private TargetServer target;

    @RegisterExtension
    final GatewayExtension gateways = GatewayExtension.manual(config ->
    {
        List<Map<String, Object>> nodeConfig = new ArrayList<>();
        for (ForwardProxy node : nodes)
            nodeConfig.add(Map.of("id", node.name(), "address", node.address()));
        config.redisStore(redis);
        config.trustStoreOf(target);
        // The target runs on loopback, which the SSRF guard refuses unless allowed.
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "p", "sticky_session", true)));
        config.set("egress.pools", Map.of("p", Map.of("region", "eu", "nodes", nodeConfig)));
    });

    @BeforeEach
    void start()
    {
        redis = RedisServerProcess.start();
        target = TargetServer.start();
        for (int i = 0; i < 4; i++)
            nodes.add(ForwardProxy.start("n" + i));
    }

    @AfterEach
    void stop()
    {
        for (ForwardProxy node : nodes)
            node.close();
        target.close();
        redis.close();
    }

    @Test
    void sameSession_sameNode_onEveryReplica() throws Exception
    {
        RunningGateway a = gateways.startAnother();
        RunningGateway b = gateways.startAnother();
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        for (int session = 0; session < 10; session++)
        {
            String pinned = null;
            for (int i = 0; i < 6; i++)
            {
                RunningGateway replica = i % 2 == 0 ? a : b;
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(replica.uri().resolve("/egress/127.0.0.1:" + target.httpsPort() + "/echo"))
                    .header("X-Agent-Session", "agent-" + session).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, response.statusCode(), response.body());
                String node = response.headers().firstValue(EgressServlet.NODE).orElseThrow();
                if (pinned == null)
                    pinned = node;
                assertEquals(pinned, node, "session agent-" + session + " on replica " + (i % 2 == 0 ? "A" : "B"));
            }
        }
    }
}
