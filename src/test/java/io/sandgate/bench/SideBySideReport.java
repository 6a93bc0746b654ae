package io.sandgate.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.function.DoubleBinaryOperator;
import java.util.function.Function;

import io.sandgate.ingress.Route;

/**
 * Writes the "Side by side" section of docs/BENCHMARKS.md from what bench/run.sh measured, replacing
 * that section if it is there and leaving every other section as it was.
 *
 * <p>Input: {@code results.tsv}, one measurement per line, {@code scenario TAB target TAB metric TAB
 * value}; scenario {@code meta} carries the machine description and the commands. Optionally JMH's
 * CSV output for the route-lookup table.</p>
 *
 * <p>Run: {@code java -cp ... io.sandgate.bench.SideBySideReport RESULTS.tsv JMH.csv|- OUT.md [--smoke]}</p>
 */
public final class SideBySideReport
{
    static final String HEADING = "## Side by side: direct, nginx, HAProxy, Sandgate";

    private static final String BASELINE = "sandgate-baseline";
    private static final Map<String, String> TARGETS = new LinkedHashMap<>();

    static
    {
        TARGETS.put("direct", "direct (backend)");
        TARGETS.put("nginx", "nginx");
        TARGETS.put("nginx-headers", "nginx with the gateway's header work (forwarding fields, its policy on answers)");
        TARGETS.put("haproxy", "HAProxy");
        TARGETS.put("jvm-relay", "a bare JVM relay (plain NIO, no HTTP work: the floor for a proxy on the JVM)");
        TARGETS.put("sandgate-memory", "Sandgate, memory store");
        TARGETS.put("sandgate-redis", "Sandgate, Redis store");
        // Optional targets: rows only when measured.
        TARGETS.put("sandgate-servlet", "Sandgate, memory store, ingress on the servlets (as in the WAR)");
        TARGETS.put("sandgate-traced", "Sandgate, memory store, tracing on (every trace sampled, spans exported over OTLP)");
        TARGETS.put("sandgate-baseline", "Sandgate baseline build, memory store");
        TARGETS.put("sandgate-baseline-servlet", "Sandgate baseline build, memory store, ingress on the servlets");
    }

    /** The optional targets, left out of the tables unless the run measured them. */
    private static final List<String> OPTIONAL = List.of("nginx-headers", "jvm-relay", "sandgate-servlet", "sandgate-traced", "sandgate-baseline", "sandgate-baseline-servlet");
    /** Steal above this share of the cores in a pass makes its round a measure of the neighbours too. */
    private static final double STEAL_NOTED_PERCENT = 5;

    private final Map<String, String> values = new LinkedHashMap<>();

    private SideBySideReport()
    {
    }

    public static void main(String[] args) throws IOException
    {
        SideBySideReport report = new SideBySideReport();
        for (String line : Files.readAllLines(Path.of(args[0])))
        {
            String[] f = line.split("\t", 4);
            if (f.length == 4)
                report.values.put(f[0] + "/" + f[1] + "/" + f[2], f[3]);
        }
        List<String[]> jmh = args[1].equals("-") || !Files.exists(Path.of(args[1])) ? List.of() : readCsv(Path.of(args[1]));
        boolean smoke = args.length > 3 && args[3].equals("--smoke");
        String section = report.render(jmh, smoke);
        BenchmarksDocument.writeSection(Path.of(args[2]), HEADING, section);
        System.out.println(section);
    }

    /** The targets with a row: every required one, and the optional ones the run measured. */
    private List<String> targets()
    {
        List<String> targets = new ArrayList<>();
        for (String t : TARGETS.keySet())
        {
            String measured = "/" + t + "/";
            if (!OPTIONAL.contains(t) || values.keySet().stream().anyMatch(key -> key.contains(measured)))
                targets.add(t);
        }
        return targets;
    }

    private String meta(String key)
    {
        return values.getOrDefault("meta/-/" + key, "?");
    }

    private Double number(String scenario, String target, String metric)
    {
        String v = values.get(scenario + "/" + target + "/" + metric);
        if (v == null || v.isEmpty())
            return null;
        try
        {
            double d = Double.parseDouble(v);
            return Double.isNaN(d) ? null : d;
        }
        catch (NumberFormatException x)
        {
            return null;
        }
    }

    private String render(List<String[]> jmh, boolean smoke)
    {
        StringBuilder s = new StringBuilder(HEADING).append("\n\n");
        if (smoke)
            s.append("**Smoke run (`bench/run.sh --quick`): seconds per scenario on a busy machine. These numbers only show that the harness works; they are not results.**\n\n");
        s.append("One backend (`io.sandgate.bench.BenchBackend`: Jetty, `/1k`, `/1m`, WebSocket echo at `/ws`; or with `BENCH_BACKEND=nginx`, an nginx serving the two files) behind each proxy on loopback; ")
            .append("all proxies run at once, idle except the one measured, with configurations generated by `bench/run.sh` (see bench/README.md). ")
            .append("Sandgate requests carry the signed session cookie and no id in the path (`/vnc/1k`), so every request resolves its sandbox from the cookie. ")
            .append("Load generators run on the same cores as the proxies.\n\n")
            .append("Machine: ").append(meta("cores")).append(" cores (").append(meta("cpu")).append("), ").append(meta("ram")).append(" RAM, ")
            .append(meta("kernel")).append("; Java ").append(meta("java")).append("; nginx ").append(meta("nginx")).append("; HAProxy ")
            .append(meta("haproxy")).append("; wrk ").append(meta("wrk")).append("; Redis ").append(meta("redis")).append(". Sandgate JVM options: `")
            .append(meta("sandgate_java_opts")).append("`. Backend: ").append(meta("backend")).append(".\n")
            .append("Command: `").append(meta("command")).append("` (run ").append(meta("date")).append(").\n");
        if (targets().contains("sandgate-baseline"))
            s.append("Baseline build: ").append(meta("baseline")).append(".\n");
        s.append("\n");

        s.append("### HTTP 1 KB, keep-alive, maximum throughput\n\n");
        maxTable(s, "http_small_max");
        // Only when measured: reports of runs from before it have no such table.
        if (values.keySet().stream().anyMatch(key -> key.startsWith("http_small_browser/")))
        {
            s.append("\n### HTTP 1 KB with a browser's request headers, maximum throughput\n\n")
                .append("The same load with the header lines a browser sends for a script of a page it shows (Chromium 131: `User-Agent`, `Accept-*`, ")
                .append("`sec-ch-ua*`, `Sec-Fetch-*`, a `Referer` naming the page under the target), fourteen lines in all against wrk's two. ")
                .append("Through Sandgate the `Referer` finds the sandbox, ahead of the cookie.\n\n");
            maxTable(s, "http_small_browser");
        }

        s.append("\n### HTTP 1 KB at a fixed rate: latency added\n\n`").append(meta("cmd_http_small_rate"))
            .append("` (open loop at ").append(meta("rate")).append(" req/s, ").append(meta("rate_basis")).append("; latency counted from each request's due time)\n\n")
            .append("| target | p50 ms | p99 ms | p99.9 ms | added p50 ms | added p99 ms | added p99.9 ms | p99 vs nginx | proxy CPU us per request | errors | p99 ms by round | added p99 ms by round | steal % by round |\n")
            .append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        List<String> behind = new ArrayList<>();
        for (String t : targets())
        {
            row(s, t, fmt(number("http_small_rate", t, "p50_ms"), "%.3f"), fmt(number("http_small_rate", t, "p99_ms"), "%.3f"),
                fmt(number("http_small_rate", t, "p999_ms"), "%.3f"), added("http_small_rate", t, "p50_ms"), added("http_small_rate", t, "p99_ms"),
                added("http_small_rate", t, "p999_ms"), ratio("http_small_rate", t, "p99_ms", "nginx"), fmt(cpuPerDueRequest(t), "%.1f"),
                fmt(number("http_small_rate", t, "errors"), "%.0f"), values.getOrDefault("http_small_rate/" + t + "/rounds", "-"),
                byRound("http_small_rate", t, "direct", (v, d) -> v - d, "%+.3f"), values.getOrDefault("http_small_rate/" + t + "/steal", "-"));
            Double p50 = number("http_small_rate", t, "p50_ms");
            if (!t.equals("direct") && p50 != null && p50 > 5)
                behind.add(TARGETS.get(t));
        }
        stealNote(s, "http_small_rate");
        s.append("\nProxy CPU is utime+stime of the proxy's processes from the end of the warm-up to the end of the run, per request due in the recorded seconds.\n");
        if (meta("cmd_http_small_rate").startsWith("wrk2"))
            s.append("wrk2 sends each request on a millisecond timer, rounded up, and counts its latency from when it was due: every row's median carries most of a millisecond of that, the direct row's too, so the added columns are the ones to read.\n");
        if (!behind.isEmpty())
        {
            s.append("\n**").append(String.join(", ", behind))
                .append(": median over 5 ms, so behind the rate; these rows measure a backlog, not what the proxy adds. Run again with a lower `BENCH_RATE`.**\n");
        }

        Double directP50 = number("http_small_rate", "direct", "p50_ms");
        if (directP50 != null && directP50 > 5)
        {
            s.append("\n**The direct row's median is ").append(fmt(directP50, "%.1f"))
                .append(" ms: at this rate the load generator or the backend itself is saturated, so the rows above measure queueing, not the proxies. ")
                .append("Run again with a lower `BENCH_RATE`.**\n");
        }

        s.append("\n### HTTP 1 KB: proxy CPU per request\n\n`").append(meta("cmd_http_small_cpu"))
            .append("`; CPU is utime+stime of the proxy's processes from /proc over the measured run, split into user (utime: the proxy's own code) and kernel (stime: its socket calls); the targets take turns in each round, and each target's row is its median round by CPU per request\n\n")
            .append("| target | requests | proxy CPU s | CPU s per 100k requests | CPU us per request | of which user + kernel | vs nginx | CPU us per request by round | steal % by round |\n|---|---|---|---|---|---|---|---|---|\n");
        for (String t : targets())
        {
            if (t.equals("direct"))
                continue;
            row(s, t, fmt(number("http_small_cpu", t, "requests"), "%.0f"), fmt(number("http_small_cpu", t, "cpu_s"), "%.2f"),
                fmt(cpuPerRequest(t, 1e5), "%.2f"), fmt(cpuPerRequest(t, 1e6), "%.1f"), userAndKernel(t),
                ratioOf(target -> cpuPerRequest(target, 1), t, "nginx"),
                values.getOrDefault("http_small_cpu/" + t + "/rounds", "-"), values.getOrDefault("http_small_cpu/" + t + "/steal", "-"));
        }
        stealNote(s, "http_small_cpu");

        paired(s, "http_small_paired", "HTTP 1 KB: CPU per request beside the baseline build, at the same time", "request");

        s.append("\n### HTTP 1 MB: throughput and proxy CPU\n\n`").append(meta("cmd_http_large"))
            .append("`; CPU is utime+stime of the proxy's processes (nginx: master and workers) from /proc, before and after; the targets take turns in each round, and each target's row is its median round\n\n")
            .append("| target | MB/s | vs direct | vs nginx | proxy CPU, % of one core | proxy CPU s per GB | MB/s by round | vs that round's nginx | steal % by round |\n|---|---|---|---|---|---|---|---|---|\n");
        for (String t : targets())
        {
            Double cpu = number("http_large", t, "cpu_s");
            Double seconds = number("http_large", t, "seconds");
            Double bytes = number("http_large", t, "bytes");
            boolean proxied = !t.equals("direct") && cpu != null && seconds != null && bytes != null && bytes > 0;
            row(s, t, fmt(mbPerSecond(t), "%.0f"), ratioOf(this::mbPerSecond, t, "direct"), ratioOf(this::mbPerSecond, t, "nginx"),
                proxied ? fmt(100 * cpu / seconds, "%.0f") : "-", proxied ? fmt(cpu / (bytes / 1e9), "%.2f") : "-",
                values.getOrDefault("http_large/" + t + "/rounds", "-"), byRound("http_large", t, "nginx", (v, b) -> v / b, "%.2f"),
                values.getOrDefault("http_large/" + t + "/steal", "-"));
        }
        stealNote(s, "http_large");

        s.append("\n### WebSocket echo through the bridge\n\n`").append(meta("cmd_ws_echo"))
            .append("` (each connection sends a text message and waits for its echo before the next; the targets take turns in each round, and each target's row is its median round, with the errors of every round; ")
            .append("CPU is utime+stime of the proxy's processes over that round, on cores shared with the client and the backend)\n\n")
            .append("| target | messages/s | vs direct | vs nginx | RTT p50 ms | RTT p99 ms | RTT p99.9 ms | proxy CPU us per message | errors | messages/s by round | vs that round's nginx | steal % by round |\n")
            .append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (String t : targets())
        {
            row(s, t, fmt(number("ws_echo", t, "msgs_per_s"), "%.0f"), ratio("ws_echo", t, "msgs_per_s", "direct"),
                ratio("ws_echo", t, "msgs_per_s", "nginx"), fmt(number("ws_echo", t, "p50_ms"), "%.3f"), fmt(number("ws_echo", t, "p99_ms"), "%.3f"),
                fmt(number("ws_echo", t, "p999_ms"), "%.3f"), fmt(number("ws_echo", t, "cpu_us"), "%.1f"), fmt(number("ws_echo", t, "errors"), "%.0f"),
                values.getOrDefault("ws_echo/" + t + "/rounds", "-"), byRound("ws_echo", t, "nginx", (v, b) -> v / b, "%.2f"),
                values.getOrDefault("ws_echo/" + t + "/steal", "-"));
        }
        stealNote(s, "ws_echo");
        paired(s, "ws_echo_paired", "WebSocket echo: CPU per message beside the baseline build, at the same time", "message");

        s.append("\n### Memory per idle bridged WebSocket session\n\n`").append(meta("cmd_idle_ws"))
            .append("`; heap used after a full GC (`jcmd GC.run`, then `GC.heap_info`) and VmRSS (all of the proxy's processes), with the sessions open minus before, divided by the sessions open\n\n")
            .append("| target | sessions open | failed | heap per session KB | RSS per session KB | RSS before MB | RSS with sessions MB |\n|---|---|---|---|---|---|---|\n");
        for (String t : targets())
        {
            if (t.equals("direct"))
                continue;
            Double open = number("idle_ws", t, "open");
            row(s, t, fmt(open, "%.0f"), fmt(number("idle_ws", t, "failed"), "%.0f"),
                perSession("heap_before_kb", "heap_after_kb", t, open), perSession("rss_before_kb", "rss_after_kb", t, open),
                fmt(div(number("idle_ws", t, "rss_before_kb"), 1024), "%.0f"), fmt(div(number("idle_ws", t, "rss_after_kb"), 1024), "%.0f"));
        }

        s.append("\n### Route lookup (JMH)\n\n`").append(meta("cmd_jmh")).append("`: `io.sandgate.ingress.RouteLookupBenchmark` calls the resolver and route store the ingress uses; ")
            .append("`cookieToRoute` decodes and verifies the signed cookie, resolves the id and reads the cached route; `pathToRoute` takes the id from the path; `cachedRoute` is the cache read alone. ")
            .append("No benchmark does a Redis round trip: the route is cached.\n\n")
            .append("| benchmark | store | ns/op | error (99.9 %) |\n|---|---|---|---|\n");
        if (jmh.size() > 1)
        {
            List<String> header = List.of(jmh.get(0));
            int name = header.indexOf("Benchmark");
            int score = header.indexOf("Score");
            int error = header.indexOf("Score Error (99.9%)");
            int store = header.indexOf("Param: store");
            for (String[] r : jmh.subList(1, jmh.size()))
            {
                s.append("| ").append(r[name].substring(r[name].lastIndexOf('.') + 1)).append(" | ").append(store < 0 ? "memory" : r[store])
                    .append(" | ").append(fmt(parse(r[score]), "%.1f")).append(" | ").append(fmt(parse(r[error]), "%.1f")).append(" |\n");
            }
        }
        else
        {
            s.append("| (not run) | | | |\n");
        }
        return s.append('\n').toString();
    }

    /** The proxy's CPU microseconds per request due in the fixed-rate run. */
    private Double cpuPerDueRequest(String target)
    {
        Double cpu = number("http_small_rate", target, "cpu_s");
        Double due = number("http_small_rate", target, "due");
        return cpu == null || due == null || due == 0 ? null : cpu / due * 1e6;
    }

    /** The proxy's CPU seconds per request of the pinned 1 KB run, times {@code scale}. */
    private Double cpuPerRequest(String target, double scale)
    {
        Double cpu = number("http_small_cpu", target, "cpu_s");
        Double requests = number("http_small_cpu", target, "requests");
        return cpu == null || requests == null || requests == 0 ? null : cpu / requests * scale;
    }

    /** "user + kernel" CPU microseconds per request of the pinned 1 KB run, or "-" for a run that did not split them. */
    private String userAndKernel(String target)
    {
        Double cpu = number("http_small_cpu", target, "cpu_s");
        Double user = number("http_small_cpu", target, "user_s");
        Double requests = number("http_small_cpu", target, "requests");
        if (cpu == null || user == null || requests == null || requests == 0)
            return "-";
        return fmt(user / requests * 1e6, "%.1f") + " + " + fmt((cpu - user) / requests * 1e6, "%.1f");
    }

    private Double mbPerSecond(String target)
    {
        Double bytes = number("http_large", target, "bytes");
        Double seconds = number("http_large", target, "seconds");
        return bytes == null || seconds == null || seconds == 0 ? null : bytes / 1e6 / seconds;
    }

    private String perSession(String before, String after, String target, Double open)
    {
        Double b = number("idle_ws", target, before);
        Double a = number("idle_ws", target, after);
        return b == null || a == null || open == null || open == 0 ? "-" : fmt((a - b) / open, "%.1f");
    }

    /** A 1 KB maximum's table: the command, then a row per target. */
    private void maxTable(StringBuilder s, String scenario)
    {
        s.append('`').append(meta("cmd_" + scenario))
            .append("` (closed loop; latency as wrk sees it; the targets take turns in each round, and each target's row is its median round, with the errors of every round)\n\n")
            .append("| target | req/s | vs direct | vs nginx | p50 ms | p99 ms | errors | req/s by round | vs that round's nginx | steal % by round |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for (String t : targets())
        {
            row(s, t, fmt(number(scenario, t, "rps"), "%.0f"), ratio(scenario, t, "rps", "direct"),
                ratio(scenario, t, "rps", "nginx"), fmt(number(scenario, t, "p50_ms"), "%.3f"),
                fmt(number(scenario, t, "p99_ms"), "%.3f"), fmt(number(scenario, t, "errors"), "%.0f"),
                values.getOrDefault(scenario + "/" + t + "/rounds", "-"), byRound(scenario, t, "nginx", (v, b) -> v / b, "%.2f"),
                values.getOrDefault(scenario + "/" + t + "/steal", "-"));
        }
        stealNote(s, scenario);
    }

    private String ratio(String scenario, String target, String metric, String base)
    {
        return ratioOf(t -> number(scenario, t, metric), target, base);
    }

    private String ratioOf(Function<String, Double> metric, String target, String base)
    {
        Double v = metric.apply(target);
        Double b = metric.apply(base);
        return v == null || b == null || b == 0 ? "-" : fmt(v / b, "%.2fx");
    }

    /**
     * Each round's figure against {@code base}'s in the same round: the machine's speed moves
     * between rounds, often by more than a change is worth, and a round's two figures saw the
     * same minutes. With three rounds or more their median follows, the figure to judge a target
     * by: the "vs" column divides each target's median round by the base's, figures of different
     * minutes, and once read 0.90x where the rounds' median was 0.80.
     */
    private String byRound(String scenario, String target, String base, DoubleBinaryOperator against, String format)
    {
        String[] mine = values.getOrDefault(scenario + "/" + target + "/rounds", "").split(", ");
        String[] theirs = values.getOrDefault(scenario + "/" + base + "/rounds", "").split(", ");
        if (target.equals(base) || mine.length != theirs.length)
            return "-";
        StringJoiner figures = new StringJoiner(", ");
        List<Double> each = new ArrayList<>();
        for (int i = 0; i < mine.length; i++)
        {
            Double v = parse(mine[i]);
            Double b = parse(theirs[i]);
            if (v == null || b == null || b == 0)
            {
                figures.add("-");
                continue;
            }
            double figure = against.applyAsDouble(v, b);
            each.add(figure);
            figures.add(fmt(figure, format));
        }
        if (each.size() < 3 || each.size() < mine.length)
            return figures.toString();
        Collections.sort(each);
        int middle = each.size() / 2;
        double median = each.size() % 2 == 1 ? each.get(middle) : (each.get(middle - 1) + each.get(middle)) / 2;
        return figures + " (median " + fmt(median, format) + ")";
    }

    /**
     * The section of a paired scenario ({@code http_small_paired}, {@code ws_echo_paired}): each
     * build's CPU per {@code unit} beside the baseline build's over the same seconds; none when the
     * run had no baseline.
     */
    private void paired(StringBuilder s, String scenario, String title, String unit)
    {
        List<String> paired = targets().stream().filter(t -> number(scenario, t, "ratio") != null).toList();
        if (paired.isEmpty())
            return;
        s.append("\n### ").append(title).append("\n\n`").append(meta("cmd_" + scenario))
            .append("`; CPU is utime+stime of each gateway from /proc over the same seconds; each row is its median round by ratio\n\n")
            .append("| target | CPU us per ").append(unit).append(" | baseline build's, same seconds | vs baseline | vs baseline by round |\n|---|---|---|---|---|\n");
        for (String t : paired)
        {
            row(s, t, fmt(number(scenario, t, "cpu_us"), "%.1f"), fmt(number(scenario, t, "baseline_cpu_us"), "%.1f"),
                fmt(number(scenario, t, "ratio"), "%.3fx"), values.getOrDefault(scenario + "/" + t + "/rounds", "-"));
        }
    }

    /**
     * Names the passes that ran while the hypervisor gave much of the cores to other guests. The
     * gateway needs more CPU per request than nginx, so it reaches its limit first as the cores
     * shrink, and its tail in such a round is the machine's as much as its own.
     */
    private void stealNote(StringBuilder s, String scenario)
    {
        List<String> noted = new ArrayList<>();
        for (String t : targets())
        {
            int round = 0;
            for (String figure : values.getOrDefault(scenario + "/" + t + "/steal", "").split(", "))
            {
                round++;
                Double percent = parse(figure);
                if (percent != null && percent > STEAL_NOTED_PERCENT)
                    noted.add(TARGETS.get(t) + " in round " + round + " (" + figure + " %)");
            }
        }
        if (!noted.isEmpty())
        {
            s.append("\n**The hypervisor took more than ").append(fmt(STEAL_NOTED_PERCENT, "%.0f")).append(" % of the cores (steal, from /proc/stat) during: ")
                .append(String.join("; ", noted)).append(". Those passes measure the machine's other guests as well as the proxy; ")
                .append("compare rounds of like steal, or run again when the machine is quieter.**\n");
        }
    }

    private String added(String scenario, String target, String metric)
    {
        Double v = number(scenario, target, metric);
        Double d = number(scenario, "direct", metric);
        return v == null || d == null ? "-" : fmt(v - d, "%+.3f");
    }

    private static void row(StringBuilder s, String target, String... cells)
    {
        s.append("| ").append(TARGETS.get(target));
        for (String cell : cells)
            s.append(" | ").append(cell);
        s.append(" |\n");
    }

    private static Double div(Double v, double by)
    {
        return v == null ? null : v / by;
    }

    private static String fmt(Double v, String format)
    {
        return v == null ? "-" : String.format(Locale.ROOT, format, v);
    }

    private static Double parse(String v)
    {
        try
        {
            double d = Double.parseDouble(v);
            return Double.isNaN(d) ? null : d;   // JMH writes NaN for the error of too few iterations
        }
        catch (NumberFormatException x)
        {
            return null;
        }
    }

    /** JMH's CSV: every field quoted, no commas inside fields except in quoted ones. */
    private static List<String[]> readCsv(Path csv) throws IOException
    {
        List<String[]> rows = new ArrayList<>();
        for (String line : Files.readAllLines(csv))
        {
            if (line.isBlank())
                continue;
            List<String> fields = new ArrayList<>();
            StringBuilder field = new StringBuilder();
            boolean quoted = false;
            for (char c : line.toCharArray())
            {
                if (c == '"')
                    quoted = !quoted;
                else if (c == ',' && !quoted)
                {
                    fields.add(field.toString());
                    field.setLength(0);
                }
                else
                    field.append(c);
            }
            fields.add(field.toString());
            rows.add(fields.toArray(new String[0]));
        }
        return rows;
    }
}
