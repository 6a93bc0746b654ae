package io.sandgate.ingress;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LogCapture;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.sandgate.testing.BrowserRequests.get;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The access line says how long the sandbox took to answer, apart from the whole exchange, so that
 * an operator can tell a slow sandbox from a slow gateway; so do the histograms of {@code /metrics},
 * for percentiles over many exchanges. On both front-ends.
 */
@EachIngressFrontEnd
class AccessLogUpstreamIT
{
    /** The duration, then the upstream's time, as the text line writes them. */
    private static final Pattern TIMES = Pattern.compile(" (\\d+)us face=ingress sandbox=\\S+ via=\\S+ upstream=(\\d+us|-)$");
    /** The histograms of the sandboxes' time and of whole exchanges, as Prometheus names them. */
    private static final String SANDBOX = "sandgate_ingress_sandbox_duration_seconds";
    private static final String EXCHANGE = "sandgate_request_duration_seconds";

    private static SandboxBackend sandbox;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.static-routes", Map.of("37579", sandbox.hostPort(), "500", "127.0.0.1:1")));

    @BeforeAll
    static void start()
    {
        sandbox = SandboxBackend.start("upstream-time");
    }

    @AfterAll
    static void stop()
    {
        sandbox.close();
    }

    @Test
    void aSlowSandboxsTime_isLogged_withinTheExchangesOwn() throws Exception
    {
        try (LogCapture accessLog = LogCapture.accessLog())
        {
            assertEquals(200, get(gateway.uri(), "/vnc/37579/slow?ms=300").statusCode());
            long[] times = times(accessLog, " /vnc/37579/slow?ms=300 200 ");
            assertTrue(times[1] >= 300_000, "the sandbox waited 300 ms before its head: " + times[1] + "us");
            assertTrue(times[1] <= times[0], "the sandbox's part of the exchange is no longer than the exchange: " + times[1] + " > " + times[0]);
        }
    }

    @Test
    void anExchangeNoSandboxAnswered_logsNoUpstreamTime() throws Exception
    {
        try (LogCapture accessLog = LogCapture.accessLog())
        {
            // A route to a port nothing listens on: the gateway answers 502 itself.
            assertEquals(502, get(gateway.uri(), "/vnc/500/").statusCode());
            assertEquals(-1, times(accessLog, " /vnc/500/ 502 ")[1]);
        }
    }

    @Test
    void aSlowSandboxsTime_landsInItsBucket_andTheExchangesToo() throws Exception
    {
        assertSlowSandboxIsInTheHistograms(gateway);
    }

    @Test
    void withoutAccessLines_theSandboxesTimeIsStillMeasured() throws Exception
    {
        // The histograms are for the gateways that write no line: they must not hang on the log.
        assertSlowSandboxIsInTheHistograms(gateway.startAnother(config -> config.set("log.access", false)));
    }

    @Test
    void anExchangeNoSandboxAnswered_isNotInTheSandboxesHistogram() throws Exception
    {
        String before = metrics(gateway);
        assertEquals(502, get(gateway.uri(), "/vnc/500/").statusCode());
        await().atMost(Duration.ofSeconds(5)).until(() -> count(metrics(gateway), EXCHANGE + "_count{face=\"ingress\"}")
            > count(before, EXCHANGE + "_count{face=\"ingress\"}"));
        assertEquals(count(before, SANDBOX + "_count"), count(metrics(gateway), SANDBOX + "_count"));
    }

    @Test
    void whatASandboxAnswers_addsNoSeries() throws Exception
    {
        // A sandbox chooses its status, its fields and how long it takes; none of it may name a
        // series, or a hostile one could grow the scrape without bound.
        long before = count(metrics(gateway), SANDBOX + "_count");
        assertEquals(200, get(gateway.uri(), "/vnc/37579/slow?ms=1").statusCode());
        assertEquals(418, get(gateway.uri(), "/vnc/37579/status/418").statusCode());
        await().atMost(Duration.ofSeconds(5)).until(() -> count(metrics(gateway), SANDBOX + "_count") == before + 2);
        List<String> series = metrics(gateway).lines().filter(l -> l.startsWith(SANDBOX)).map(l -> l.substring(0, l.lastIndexOf(' '))).toList();
        assertEquals(List.of(SANDBOX + "_count", SANDBOX + "_sum", SANDBOX + "_max"), series.stream().filter(l -> !l.contains("_bucket{")).toList());
        assertTrue(series.stream().filter(l -> l.contains("_bucket{")).allMatch(l -> l.matches(Pattern.quote(SANDBOX) + "_bucket\\{le=\"[^\"]+\"}")), series.toString());
    }

    /**
     * An exchange with a sandbox that holds its head for 300 ms is over the 250 ms buckets, once, in
     * the sandboxes' histogram and the exchanges'. (Not asserted to be within 500 ms: a loaded
     * machine can take longer than the sandbox's 300 ms.)
     */
    private static void assertSlowSandboxIsInTheHistograms(Gateway gateway) throws Exception
    {
        String before = metrics(gateway);
        assertEquals(200, get(gateway.uri(), "/vnc/37579/slow?ms=300").statusCode());
        // The meters are recorded once the exchange has ended, which may be just after the browser has its answer.
        await().atMost(Duration.ofSeconds(5)).until(() -> count(metrics(gateway), EXCHANGE + "_count{face=\"ingress\"}")
            > count(before, EXCHANGE + "_count{face=\"ingress\"}") && count(metrics(gateway), SANDBOX + "_count") > count(before, SANDBOX + "_count"));
        String after = metrics(gateway);
        assertEquals(count(before, SANDBOX + "_bucket{le=\"0.25\"}"), count(after, SANDBOX + "_bucket{le=\"0.25\"}"), "300 ms is over 250 ms");
        assertEquals(count(before, SANDBOX + "_count") + 1, count(after, SANDBOX + "_count"));
        assertEquals(count(before, EXCHANGE + "_bucket{face=\"ingress\",le=\"0.25\"}"), count(after, EXCHANGE + "_bucket{face=\"ingress\",le=\"0.25\"}"),
            "the whole exchange took the sandbox's 300 ms at least");
    }

    private static String metrics(Gateway gateway) throws Exception
    {
        HttpResponse<String> response = get(gateway.uri(), "/metrics");
        assertEquals(200, response.statusCode());
        return response.body();
    }

    /** The value of the series {@code series} (name and labels as written), 0 when it is not there yet. */
    private static long count(String metrics, String series)
    {
        return metrics.lines().filter(l -> l.startsWith(series + " ")).mapToLong(l -> (long)Double.parseDouble(l.substring(series.length() + 1)))
            .findFirst().orElse(0);
    }

    /** The duration and the upstream's time in microseconds (-1 for none) of the line containing {@code part}. */
    private static long[] times(LogCapture accessLog, String part)
    {
        String line = await().atMost(Duration.ofSeconds(5))
            .until(() -> accessLog.lines().stream().filter(l -> l.contains(part)).findFirst().orElse(null), l -> l != null);
        Matcher m = TIMES.matcher(line);
        assertTrue(m.find(), line);
        String upstream = m.group(2);
        return new long[] {Long.parseLong(m.group(1)), upstream.equals("-") ? -1 : Long.parseLong(upstream.substring(0, upstream.length() - 2))};
    }
}
