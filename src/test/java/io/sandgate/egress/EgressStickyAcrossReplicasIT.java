package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.sandgate.config.ConfigLoader;
import io.sandgate.launcher.EmbeddedServer;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** With the Redis store, every replica pins an agent session to the same egress node. */
class EgressStickyAcrossReplicasIT
{
    @Test
    void sameSession_sameNode_onEveryReplica() throws Exception
    {
        List<ForwardProxy> nodes = new ArrayList<>();
        try (RedisServerProcess redis = RedisServerProcess.start(); TargetServer target = TargetServer.start())
        {
            for (int i = 0; i < 4; i++)
                nodes.add(ForwardProxy.start("n" + i));
            List<Map<String, Object>> nodeConfig = new ArrayList<>();
            for (ForwardProxy node : nodes)
                nodeConfig.add(Map.of("id", node.name(), "address", node.address()));
            Map<String, Object> values = new HashMap<>();
            values.put("server.host", "127.0.0.1");
            values.put("server.port", "0");
            values.put("store.type", "redis");
            values.put("store.redis.address", redis.address());
            values.put("egress.tls.trust-store", target.trustStore().toString());
            values.put("egress.tls.trust-store-password", target.trustStorePassword());
            // The target runs on loopback, which the SSRF guard refuses unless allowed.
            values.put("egress.ssrf.allow", "127.0.0.0/8");
            values.put("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "p", "sticky_session", true)));
            values.put("egress.pools", Map.of("p", Map.of("region", "eu", "nodes", nodeConfig)));
            try (EmbeddedServer a = EmbeddedServer.start(ConfigLoader.fromValues(values));
                 EmbeddedServer b = EmbeddedServer.start(ConfigLoader.fromValues(values)))
            {
                HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                for (int session = 0; session < 10; session++)
                {
                    String pinned = null;
                    for (int i = 0; i < 6; i++)
                    {
                        EmbeddedServer replica = i % 2 == 0 ? a : b;
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
        finally
        {
            for (ForwardProxy node : nodes)
                node.close();
        }
    }
}
