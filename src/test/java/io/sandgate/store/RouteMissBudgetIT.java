package io.sandgate.store;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.testing.BrowserRequests;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RedisReplicas;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client spraying made-up sandbox ids, behind a trusted proxy as browsers usually are, against a
 * real {@code redis-server}: each id it makes up costs Redis an HGET until its budget of lookups
 * without a route is spent, then it is refused with 429 before Redis is asked, while the sandbox it
 * really uses keeps routing and other clients keep theirs.
 */
@EachIngressFrontEnd
class RouteMissBudgetIT extends RedisReplicas
{
    private static final int BUDGET = 10;
    private static final String SPRAYER = "203.0.113.7";
    private static final String NEIGHBOUR = "203.0.113.8";

    @Override
    protected void configure(GatewayConfig config)
    {
        config.set("ingress.cookie.secret", "route-miss-it-secret-0123456789abcdef");
        config.set("ingress.route-misses-per-client-per-minute", Integer.toString(BUDGET));
        config.set("ingress.trusted-proxies", List.of("127.0.0.0/8"));
    }

    private static HttpResponse<String> from(String client, RunningGateway gateway, String path) throws Exception
    {
        return BrowserRequests.get(gateway.uri(), path, "X-Forwarded-For", client);
    }

    private long hgetCalls()
    {
        Matcher m = Pattern.compile("cmdstat_hget:calls=(\\d+)").matcher((String)raw.command("INFO", "commandstats"));
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    @Test
    void madeUpIds_costRedisAReadEachUntilTheBudgetIsSpent_thenAre429_whileRealRoutesAndOtherClientsAreServed() throws Exception
    {
        raw.hset("vnc_sandboxes", "8001", a.hostPort());
        assertEquals("a", from(SPRAYER, replica1, "/vnc/8001/").headers().firstValue("X-Backend").orElse(null));
        long start = hgetCalls();
        for (int i = 0; i < BUDGET; i++)
            assertEquals(404, from(SPRAYER, replica1, "/vnc/" + (90_000 + i) + "/").statusCode(), "made-up id " + i);
        assertEquals(start + BUDGET, hgetCalls(), "one HGET per made-up id within the budget");

        for (int i = BUDGET; i < 5 * BUDGET; i++)
        {
            HttpResponse<String> refused = from(SPRAYER, replica1, "/vnc/" + (90_000 + i) + "/");
            assertEquals(429, refused.statusCode(), "made-up id " + i);
            long retryAfter = Long.parseLong(refused.headers().firstValue("Retry-After").orElse("0"));
            assertTrue(retryAfter >= 1 && retryAfter <= 7, "Retry-After: " + retryAfter);
            assertTrue(refused.body().contains("too_many_route_misses") && refused.body().contains("ingress.route-misses-per-client-per-minute"),
                refused.body());
        }

        assertEquals(start + BUDGET, hgetCalls(), "HGETs past the budget");
        assertEquals(200, from(SPRAYER, replica1, "/vnc/8001/app/ui.js").statusCode(), "the sprayer's own sandbox, cached");
        assertEquals(404, from(NEIGHBOUR, replica1, "/vnc/90100/").statusCode(), "another client behind the same proxy");
        assertEquals(404, from(SPRAYER, replica2, "/vnc/90101/").statusCode(), "each replica keeps its own budgets");
        String metrics = BrowserRequests.get(replica1.uri(), "/metrics").body();
        Matcher refusedCount = Pattern.compile("^sandgate_ingress_route_misses_refused_total (\\S+)$", Pattern.MULTILINE).matcher(metrics);
        assertTrue(refusedCount.find(), metrics);
        assertEquals(4 * BUDGET, Double.parseDouble(refusedCount.group(1)));
    }

    @Test
    void sandboxesThatExist_neverSpendTheBudget() throws Exception
    {
        for (int i = 0; i < 3 * BUDGET; i++)
        {
            raw.hset("vnc_sandboxes", Integer.toString(8100 + i), b.hostPort());
            assertEquals("b", from(SPRAYER, replica1, "/vnc/" + (8100 + i) + "/").headers().firstValue("X-Backend").orElse(null), "sandbox " + i);
        }

        assertEquals(404, from(SPRAYER, replica1, "/vnc/90200/").statusCode());
    }
}
