package io.sandgate.ops;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.sandgate.config.HistoryConfig;
import io.sandgate.core.Schedulers;

/**
 * The last minutes of what the dashboard charts, sampled from the gateway's own meters: request rate
 * and mean time per face, each egress node's weight and ejection, open MCP streams and the rates of
 * relayed messages and dead sessions. A ring of {@code admin.history.samples}, so memory is bounded
 * whatever the uptime; nothing leaves the process, and each replica keeps its own (Prometheus, with
 * the Grafana dashboard in {@code deploy/}, is where replicas are added up).
 *
 * <p>Rates are differences between two samples of the cumulative meters, the way Prometheus's
 * {@code rate()} reads the same counters, so the charts and Grafana agree.</p>
 */
public final class MetricHistory implements AutoCloseable
{
    /** The faces charted, in the order drawn. */
    private static final List<String> FACES = List.of("ingress", "mcp", "egress");
    /** Nodes charted at most: a chart of more lines says nothing, and this bounds a sample's size. */
    private static final int MAX_NODES = 40;

    private final HistoryConfig config;
    private final MeterRegistry registry;
    private final Clock clock;
    private final Sample[] ring;
    private int next;
    private int size;
    /** The cumulative values read at the previous sample, by key, to take differences from. */
    private Map<String, Double> previous;
    private long previousMillis;
    private ScheduledFuture<?> schedule;

    /** One sample: when, and each value by key ({@code rate.ingress}, {@code weight.pool/node}...). */
    private record Sample(long millis, Map<String, Double> values)
    {
    }

    public MetricHistory(HistoryConfig config, MeterRegistry registry, Clock clock)
    {
        this.config = config;
        this.registry = registry;
        this.clock = clock;
        this.ring = new Sample[config.samples()];
        this.previous = cumulative();
        this.previousMillis = clock.millis();
    }

    /** Samples every {@code admin.history.interval} from now on. */
    public void start(Schedulers schedulers)
    {
        schedule = schedulers.every(config.interval(), config.interval(), "Dashboard history", this::sample);
    }

    /** Takes one sample now. */
    synchronized void sample()
    {
        long now = clock.millis();
        Map<String, Double> cumulative = cumulative();
        double seconds = Math.max(1, now - previousMillis) / 1000.0;
        Map<String, Double> values = new HashMap<>();
        for (String face : FACES)
        {
            double requests = delta(cumulative, "requests." + face);
            values.put("rate." + face, requests / seconds);
            double timed = delta(cumulative, "timed." + face);
            // No request timed in the interval: no point, rather than a mean of zero.
            if (timed > 0)
                values.put("latency." + face, delta(cumulative, "time." + face) / timed);
        }
        for (String key : List.of("mcp.relayed", "mcp.dead"))
        {
            if (cumulative.containsKey(key))
                values.put(key, delta(cumulative, key) / seconds);
        }
        Gauge streams = registry.find("sandgate.mcp.streams").gauge();
        if (streams != null)
            values.put("mcp.streams", streams.value());
        nodes(values);
        previous = cumulative;
        previousMillis = now;
        ring[next] = new Sample(now, Map.copyOf(values));
        next = (next + 1) % ring.length;
        size = Math.min(size + 1, ring.length);
    }

    /** The counters and timers the rates come from, summed over their other tags. */
    private Map<String, Double> cumulative()
    {
        Map<String, Double> values = new HashMap<>();
        for (String face : FACES)
        {
            values.put("requests." + face, registry.find("sandgate.requests").tag("face", face).counters().stream().mapToDouble(Counter::count).sum());
            Timer timer = registry.find("sandgate.request.duration").tag("face", face).timer();
            values.put("timed." + face, timer == null ? 0.0 : timer.count());
            values.put("time." + face, timer == null ? 0.0 : timer.totalTime(TimeUnit.MILLISECONDS));
        }
        Counter relayed = registry.find("sandgate.mcp.messages.relayed").counter();
        if (relayed != null)
            values.put("mcp.relayed", relayed.count());
        Counter dead = registry.find("sandgate.mcp.sessions.dead").counter();
        if (dead != null)
            values.put("mcp.dead", dead.count());
        return values;
    }

    private double delta(Map<String, Double> cumulative, String key)
    {
        // A counter that went down was removed and registered again (an egress reload): count from zero.
        double now = cumulative.getOrDefault(key, 0.0);
        double before = previous.getOrDefault(key, 0.0);
        return now >= before ? now - before : now;
    }

    /** Each node's weight and whether it is ejected, for the first {@link #MAX_NODES} by pool and id. */
    private void nodes(Map<String, Double> values)
    {
        registry.find("sandgate.egress.node.weight").gauges().stream()
            .sorted(Comparator.comparing((Gauge g) -> g.getId().getTag("pool")).thenComparing(g -> g.getId().getTag("node")))
            .limit(MAX_NODES)
            .forEach(weight ->
            {
                String pool = weight.getId().getTag("pool");
                String node = weight.getId().getTag("node");
                Gauge ejected = registry.find("sandgate.egress.node.ejected").tags("pool", pool, "node", node).gauge();
                // NaN: the node left with a reload between the search and the read.
                if (Double.isNaN(weight.value()) || ejected == null || Double.isNaN(ejected.value()))
                    return;
                values.put("weight." + pool + "/" + node, weight.value());
                values.put("ejected." + pool + "/" + node, ejected.value());
            });
    }

    /**
     * The history as the dashboard draws it: sample times, and charts of series whose values line
     * up with the times (null where a series had no value, such as a node added by a reload).
     */
    public synchronized Map<String, Object> view()
    {
        List<Sample> samples = new ArrayList<>(size);
        for (int i = 0; i < size; i++)
            samples.add(ring[(next - size + i + ring.length) % ring.length]);
        List<Long> times = samples.stream().map(Sample::millis).toList();
        TreeSet<String> nodes = new TreeSet<>();
        samples.forEach(sample -> sample.values().keySet().stream().filter(key -> key.startsWith("weight.")).forEach(key -> nodes.add(key.substring("weight.".length()))));

        List<Map<String, Object>> charts = new ArrayList<>();
        List<Map<String, Object>> rates = new ArrayList<>();
        List<Map<String, Object>> latencies = new ArrayList<>();
        for (String face : FACES)
        {
            rates.add(series(face, samples, "rate." + face));
            latencies.add(series(face, samples, "latency." + face));
        }
        charts.add(chart("requests", "Requests by face", "/s", rates));
        charts.add(chart("latency", "Mean time per request by face", "ms", latencies));
        List<Map<String, Object>> weights = new ArrayList<>();
        for (String node : nodes)
        {
            Map<String, Object> series = series(node, samples, "weight." + node);
            series.put("ejected", samples.stream().map(sample ->
            {
                Double ejected = sample.values().get("ejected." + node);
                return ejected == null ? null : ejected > 0;
            }).toList());
            weights.add(series);
        }
        charts.add(chart("egress", "Egress node weight (red: ejected)", "", weights));
        charts.add(chart("mcp", "MCP", "", List.of(series("open streams", samples, "mcp.streams"),
            series("messages relayed /s", samples, "mcp.relayed"), series("sessions dead /s", samples, "mcp.dead"))));

        Map<String, Object> view = new LinkedHashMap<>();
        view.put("intervalMillis", config.interval().toMillis());
        view.put("times", times);
        view.put("charts", charts);
        return view;
    }

    private static Map<String, Object> series(String name, List<Sample> samples, String key)
    {
        Map<String, Object> series = new LinkedHashMap<>();
        series.put("name", name);
        series.put("values", samples.stream().map(sample -> sample.values().get(key)).toList());
        return series;
    }

    private static Map<String, Object> chart(String id, String title, String unit, List<Map<String, Object>> series)
    {
        Map<String, Object> chart = new LinkedHashMap<>();
        chart.put("id", id);
        chart.put("title", title);
        chart.put("unit", unit);
        chart.put("series", series);
        return chart;
    }

    @Override
    public void close()
    {
        if (schedule != null)
            schedule.cancel(false);
    }
}
