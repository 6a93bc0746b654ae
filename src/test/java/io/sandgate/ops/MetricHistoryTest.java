package io.sandgate.ops;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.HistoryConfig;
import io.sandgate.testing.MutableClock;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The history the dashboard charts, from meters set by hand and a clock moved by hand. */
class MetricHistoryTest
{
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

    @Test
    void rates_andMeanTimes_areDifferencesBetweenSamples_perFace()
    {
        MetricHistory history = new MetricHistory(new HistoryConfig(Duration.ofSeconds(5), 10), registry, clock);
        registry.counter("sandgate.requests", "face", "ingress", "status", "200").increment(40);
        registry.counter("sandgate.requests", "face", "ingress", "status", "404").increment(10);
        Timer ingress = Timer.builder("sandgate.request.duration").tag("face", "ingress").register(registry);
        ingress.record(10, TimeUnit.MILLISECONDS);
        ingress.record(30, TimeUnit.MILLISECONDS);
        clock.advance(Duration.ofSeconds(5));
        history.sample();
        registry.counter("sandgate.requests", "face", "ingress", "status", "200").increment(5);
        clock.advance(Duration.ofSeconds(5));
        history.sample();

        Map<String, Object> requests = chart(history, "requests");
        assertEquals(List.of(10.0, 1.0), values(requests, "ingress"));
        assertEquals(List.of(0.0, 0.0), values(requests, "egress"));
        // A mean where requests were timed, no point where none were.
        assertEquals(Arrays.asList(20.0, null), values(chart(history, "latency"), "ingress"));
    }

    @Test
    void nodeWeights_followTheGauges_andEjectedSamplesAreMarked()
    {
        MetricHistory history = new MetricHistory(new HistoryConfig(Duration.ofSeconds(5), 10), registry, clock);
        AtomicInteger weight = new AtomicInteger(100);
        Gauge.builder("sandgate.egress.node.weight", weight, AtomicInteger::get).tags("pool", "p", "node", "dl-1").register(registry);
        Gauge.builder("sandgate.egress.node.ejected", weight, w -> w.get() == 0 ? 1 : 0).tags("pool", "p", "node", "dl-1").register(registry);
        history.sample();
        weight.set(0);
        history.sample();

        Map<String, Object> egress = chart(history, "egress");
        assertEquals(List.of(100.0, 0.0), values(egress, "p/dl-1"));
        assertEquals(List.of(false, true), series(egress, "p/dl-1").get("ejected"));
    }

    @Test
    void theRing_keepsOnlyTheNewestSamples()
    {
        MetricHistory history = new MetricHistory(new HistoryConfig(Duration.ofSeconds(5), 3), registry, clock);
        for (int i = 0; i < 5; i++)
        {
            clock.advance(Duration.ofSeconds(5));
            history.sample();
        }
        List<?> times = (List<?>)history.view().get("times");
        assertEquals(List.of(clock.millis() - 10_000, clock.millis() - 5000, clock.millis()), times);
        assertEquals(3, values(chart(history, "requests"), "mcp").size());
    }

    @Test
    void aSeriesThatAppearsLate_isNullBeforeIt()
    {
        MetricHistory history = new MetricHistory(new HistoryConfig(Duration.ofSeconds(5), 10), registry, clock);
        history.sample();
        registry.counter("sandgate.mcp.messages.relayed").increment(0);
        history.sample();
        List<?> relayed = values(chart(history, "mcp"), "messages relayed /s");
        assertNull(relayed.get(0));
        assertEquals(0.0, relayed.get(1));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> chart(MetricHistory history, String id)
    {
        return ((List<Map<String, Object>>)history.view().get("charts")).stream().filter(c -> c.get("id").equals(id)).findFirst().orElseThrow();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> series(Map<String, Object> chart, String name)
    {
        return ((List<Map<String, Object>>)chart.get("series")).stream().filter(s -> s.get("name").equals(name)).findFirst().orElseThrow();
    }

    private static List<?> values(Map<String, Object> chart, String name)
    {
        return (List<?>)series(chart, name).get("values");
    }
}
