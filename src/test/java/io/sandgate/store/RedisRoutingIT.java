package io.sandgate.store;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisReplicas;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.Test;

import static io.sandgate.testing.BrowserRequests.servedBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Redis route store against a real {@code redis-server}: routes written by a plain RESP client
 * (never Redisson) reach two gateway replicas within a second, cached routes cost no Redis round
 * trip, and a Redis outage degrades to cached routes and recovers without a restart. The route
 * store is the same behind either front end: each test runs on one, the class's tests alternating.
 */
@EachIngressFrontEnd(split = true)
class RedisRoutingIT extends RedisReplicas
{
    private static final Duration WITHIN_A_SECOND = Duration.ofMillis(1000);
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Override
    protected void configure(GatewayConfig config)
    {
        config.set("ingress.cookie.secret", "redis-it-secret-0123456789abcdef");
    }

    private static HttpResponse<String> get(Gateway gateway, String path) throws Exception
    {
        HttpRequest request = HttpRequest.newBuilder(gateway.uri().resolve(path)).timeout(Duration.ofSeconds(10)).build();
        return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private long hgetCalls()
    {
        String info = (String)raw.command("INFO", "commandstats");
        Matcher m = Pattern.compile("cmdstat_hget:calls=(\\d+)").matcher(info);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    @Test
    void plainHsetAndHdel_reachBothReplicasWithinOneSecond_evenForCachedRoutes() throws Exception
    {
        raw.hset("vnc_sandboxes", "7001", a.hostPort());
        assertEquals("a", servedBy(replica1, "/vnc/7001/"));
        assertEquals("a", servedBy(replica2, "/vnc/7001/"));

        // Both replicas now hold 7001 -> a in their caches; a plain HSET must still move them.
        raw.hset("vnc_sandboxes", "7001", b.hostPort());
        await().atMost(WITHIN_A_SECOND).pollInterval(Duration.ofMillis(20)).until(() ->
            servedBy(replica1, "/vnc/7001/").equals("b") && servedBy(replica2, "/vnc/7001/").equals("b"));

        raw.hdel("vnc_sandboxes", "7001");
        await().atMost(WITHIN_A_SECOND).pollInterval(Duration.ofMillis(20)).until(() ->
            servedBy(replica1, "/vnc/7001/").equals("404") && servedBy(replica2, "/vnc/7001/").equals("404"));
    }

    @Test
    void cachedRoute_isServedWithoutARedisRoundTrip() throws Exception
    {
        raw.hset("vnc_sandboxes", "7002", a.hostPort());
        assertEquals("a", servedBy(replica1, "/vnc/7002/"));
        long before = hgetCalls();

        for (int i = 0; i < 50; i++)
            assertEquals("a", servedBy(replica1, "/vnc/7002/app/" + i + ".js"));

        assertEquals(before, hgetCalls(), "HGET calls while serving a cached route");
        String metrics = get(replica1, "/metrics").body();
        Matcher hits = Pattern.compile("sandgate_route_cache_total\\{result=\"hit\"} (\\d+)").matcher(metrics);
        assertTrue(hits.find(), metrics);
        assertTrue(Double.parseDouble(hits.group(1)) >= 50, "cache hits: " + hits.group(1));
    }

    @Test
    void jsonRouteValues_areAccepted_andMalformedOnesIgnored() throws Exception
    {
        raw.hset("vnc_sandboxes", "7003", "{\"target\":\"" + b.hostPort() + "\",\"generation\":\"pod-uid-1\"}");
        raw.hset("vnc_sandboxes", "7004", "not a route");

        assertEquals("b", servedBy(replica1, "/vnc/7003/"));
        assertEquals("404", servedBy(replica1, "/vnc/7004/"));
    }

    @Test
    void redisDown_cachedRoutesKeepRouting_missesAre503_andRestartRecoversWithoutGatewayRestart() throws Exception
    {
        raw.hset("vnc_sandboxes", "7005", a.hostPort());
        assertEquals("a", servedBy(replica1, "/vnc/7005/"));
        raw.close();

        redis.kill();

        assertEquals("a", servedBy(replica1, "/vnc/7005/"), "cached route while Redis is down");
        HttpResponse<String> miss = get(replica1, "/vnc/7006/");
        assertEquals(503, miss.statusCode());
        assertTrue(miss.body().contains("route store unavailable"), miss.body());
        await().atMost(Duration.ofSeconds(5)).until(() -> get(replica1, "/readyz").body().contains("\"status\":\"degraded\""));
        assertEquals(200, get(replica1, "/readyz").statusCode(), "degraded but serving stays in the load balancer");

        redis.restart();
        raw = RawRedis.connect(redis.port());
        raw.hset("vnc_sandboxes", "7006", b.hostPort());
        await().atMost(Duration.ofSeconds(10)).until(() -> servedBy(replica1, "/vnc/7006/").equals("b"));
        await().atMost(Duration.ofSeconds(5)).until(() -> get(replica1, "/readyz").body().contains("\"status\":\"ready\""));

        // The restarted server forgot notify-keyspace-events; the store must turn them back on, and
        // say so once it is subscribed again (until then it polls)...
        await().atMost(Duration.ofSeconds(5)).until(() -> raw.configGet("notify-keyspace-events").contains("K")
            && get(replica1, "/readyz").body().contains("changes seen by keyspace notifications"));
        // ...and the route it had cached from before the outage must follow Redis again.
        raw.hset("vnc_sandboxes", "7005", b.hostPort());
        await().atMost(WITHIN_A_SECOND).pollInterval(Duration.ofMillis(20)).until(() -> servedBy(replica1, "/vnc/7005/").equals("b"));
        raw.hdel("vnc_sandboxes", "7006");
        await().atMost(WITHIN_A_SECOND).pollInterval(Duration.ofMillis(20)).until(() -> servedBy(replica1, "/vnc/7006/").equals("404"));
    }

    @Test
    void gatewayStartsWhileRedisIsDown_andRoutesOnceItIsUp() throws Exception
    {
        raw.close();
        redis.kill();
        try (RunningGateway late = gateways.startAnother())
        {
            assertEquals(503, get(late, "/vnc/7007/").statusCode());
            redis.restart();
            raw = RawRedis.connect(redis.port());
            raw.hset("vnc_sandboxes", "7007", a.hostPort());
            await().atMost(Duration.ofSeconds(10)).until(() -> servedBy(late, "/vnc/7007/").equals("a"));
        }
    }
}
