package io.sandgate.mcp;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.LocalResources;
import org.eclipse.jetty.toolchain.test.FS;
import org.eclipse.jetty.toolchain.test.MavenPaths;

/**
 * The official MCP conformance suite ({@code @modelcontextprotocol/conformance}, locked in
 * {@code src/test/conformance}) run as its CLI runs in CI: {@code server --requirements <revision>},
 * and its outcome read back scenario by scenario.
 */
final class ConformanceSuite
{
    static final Path SUITE_DIR = MavenPaths.projectBase().resolve("src/test/conformance");
    private static final Path CLI = SUITE_DIR.resolve("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    /** A scenario of the reference server ends within a second or two; one stuck scenario must not cost 30 s. */
    private static final Duration SCENARIO_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration RUN_TIMEOUT = Duration.ofMinutes(3);
    /** {@code ✓ tools-list: 3 passed, 0 failed}: one scored or unscored scenario's count. */
    private static final Pattern COUNT_LINE = Pattern.compile("^[✓✗] ([\\w./-]+): (\\d+) passed, (\\d+) failed$");
    /** {@code   ✓ json-schema-2020-12 (pending)} under "Not scored for ...". */
    private static final Pattern NOT_SCORED_LINE = Pattern.compile("^\\s+[✓✗] ([\\w./-]+) \\([\\w-]+\\)$");
    /** {@code server-tools-list-2026-11-30T07-28-52-355Z}: the scenario's results directory. */
    private static final Pattern RESULT_DIR = Pattern.compile("^server-(.+)-\\d{4}-\\d{2}-\\d{2}T[\\d-]+Z$");
    private static final Set<String> QUIET_STATUSES = Set.of("SUCCESS", "INFO");
    /** What {@code bearer.mjs} reads the token from. */
    private static final String TOKEN_VARIABLE = "SANDGATE_CONFORMANCE_TOKEN";

    private ConformanceSuite()
    {
    }

    /**
     * One scenario's checks: how many passed and failed, whether the revision scores it, and
     * "check-id=STATUS" of each check that neither succeeded nor only informed (failures,
     * warnings, skips).
     */
    record Scenario(int passed, int failed, boolean scored, Set<String> notPassed)
    {
        /** What is compared between two runs: the counts, and which checks failed. */
        String score()
        {
            List<String> failures = notPassed.stream().filter(id -> id.endsWith("=FAILURE")).toList();
            return passed + " passed, " + failed + " failed" + (failures.isEmpty() ? "" : " " + failures);
        }

        String summary()
        {
            return passed + " passed, " + failed + " failed" + (notPassed.isEmpty() ? "" : " " + notPassed);
        }
    }

    /** A whole run: the scenarios by name, and what the CLI printed. */
    record Outcome(String target, Map<String, Scenario> scenarios, String report, Duration took)
    {
        Map<String, Scenario> scored()
        {
            Map<String, Scenario> scored = new TreeMap<>(scenarios);
            scored.values().removeIf(s -> !s.scored());
            return scored;
        }

        int passed()
        {
            return scored().values().stream().mapToInt(Scenario::passed).sum();
        }

        int failed()
        {
            return scored().values().stream().mapToInt(Scenario::failed).sum();
        }
    }

    /** Runs the scenarios {@code revision} requires against {@code url}; results go under {@code outputDir}. */
    static Outcome run(String target, String url, String revision, Path outputDir) throws IOException, InterruptedException
    {
        return run(target, url, revision, outputDir, null);
    }

    /**
     * Runs the scenarios as {@link #run(String, String, String, Path)}, every request of the suite
     * carrying {@code Authorization: Bearer <token>}: the CLI has no option for a header, so
     * {@code bearer.mjs} is preloaded and reads the token from {@code SANDGATE_CONFORMANCE_TOKEN}.
     *
     * @param token the bearer token, or null for requests without one
     */
    static Outcome run(String target, String url, String revision, Path outputDir, String token) throws IOException, InterruptedException
    {
        Path node = LocalResources.executable("node");
        if (node == null || !Files.isRegularFile(CLI))
            throw new IllegalStateException("node or the MCP conformance suite is missing: run ./scripts/test.sh (npm ci --prefix src/test/conformance)");
        // Result directories are named by time; a previous run's must not be read as this one's.
        FS.ensureEmpty(outputDir);
        Path console = outputDir.resolve("console.txt");
        // compat.mjs: the suite calls fs.globSync, which Node 20 lacks.
        List<String> command = new ArrayList<>(List.of(node.toString(), "--import", "./compat.mjs"));
        if (token != null)
            command.addAll(List.of("--import", "./bearer.mjs"));
        command.addAll(List.of(CLI.toString(), "server", "--url", url, "--requirements", revision,
            "--timeout", Long.toString(SCENARIO_TIMEOUT.toMillis()), "-o", outputDir.toString()));
        long start = System.nanoTime();
        ProcessBuilder builder = new ProcessBuilder(command).directory(SUITE_DIR.toFile()).redirectErrorStream(true)
            .redirectOutput(console.toFile()).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        // Given to the one process only, never on its command line, where ps would show it.
        builder.environment().remove(TOKEN_VARIABLE);
        if (token != null)
            builder.environment().put(TOKEN_VARIABLE, token);
        Process process = builder.start();
        if (!process.waitFor(RUN_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
        {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            throw new IllegalStateException("the conformance suite did not finish against " + url + " within " + RUN_TIMEOUT + ":\n"
                + Files.readString(console, StandardCharsets.UTF_8));
        }
        Outcome outcome = read(target, outputDir, Duration.ofNanos(System.nanoTime() - start));
        if (outcome.scenarios().isEmpty())
            throw new IllegalStateException("the conformance suite ran no scenario against " + url + ":\n" + outcome.report());
        return outcome;
    }

    /** A finished run's outcome, read from its results directory. */
    static Outcome read(String target, Path outputDir, Duration took) throws IOException
    {
        String report = Files.readString(outputDir.resolve("console.txt"), StandardCharsets.UTF_8).replaceAll("\u001b\\[[0-9;]*m", "");
        return new Outcome(target, parse(report, notPassedChecks(outputDir)), report, took);
    }

    private static Map<String, Scenario> parse(String report, Map<String, Set<String>> notPassed)
    {
        Map<String, int[]> counts = new TreeMap<>();
        Set<String> notScored = new TreeSet<>();
        boolean inNotScored = false;
        for (String line : report.split("\n"))
        {
            Matcher count = COUNT_LINE.matcher(line);
            if (count.matches())
            {
                counts.put(count.group(1), new int[]{Integer.parseInt(count.group(2)), Integer.parseInt(count.group(3))});
                inNotScored = false;
            }
            else if (line.startsWith("Not scored for "))
                inNotScored = true;
            else if (inNotScored)
            {
                Matcher unscored = NOT_SCORED_LINE.matcher(line);
                if (unscored.matches())
                    notScored.add(unscored.group(1));
                else
                    inNotScored = false;
            }
        }
        Map<String, Scenario> scenarios = new TreeMap<>();
        counts.forEach((name, c) -> scenarios.put(name,
            new Scenario(c[0], c[1], !notScored.contains(name), notPassed.getOrDefault(name, Set.of()))));
        return scenarios;
    }

    /** Per scenario, "check-id=STATUS" of every check in its checks.json that neither succeeded nor only informs. */
    private static Map<String, Set<String>> notPassedChecks(Path outputDir) throws IOException
    {
        Map<String, Set<String>> notPassed = new TreeMap<>();
        ObjectMapper json = new ObjectMapper();
        try (Stream<Path> dirs = Files.list(outputDir))
        {
            for (Path dir : dirs.filter(Files::isDirectory).toList())
            {
                Matcher name = RESULT_DIR.matcher(dir.getFileName().toString());
                Path checks = dir.resolve("checks.json");
                if (!name.matches() || !Files.isRegularFile(checks))
                    continue;
                Set<String> ids = new TreeSet<>();
                for (JsonNode check : json.readTree(checks.toFile()))
                {
                    String status = check.path("status").asText();
                    if (!QUIET_STATUSES.contains(status))
                        ids.add(check.path("id").asText() + "=" + status);
                }
                notPassed.put(name.group(1), ids);
            }
        }
        return notPassed;
    }

    /**
     * The scored scenarios whose outcome differs between the two runs, one line each, or an empty
     * string when they agree.
     */
    static String scoredDifferences(Outcome expected, Outcome actual)
    {
        Set<String> names = new TreeSet<>(expected.scored().keySet());
        names.addAll(actual.scored().keySet());
        List<String> lines = new ArrayList<>();
        for (String name : names)
        {
            Scenario want = expected.scored().get(name);
            Scenario got = actual.scored().get(name);
            String wantText = want == null ? "(not run)" : want.score();
            String gotText = got == null ? "(not run)" : got.score();
            if (!wantText.equals(gotText))
                lines.add(String.format("  %-48s %s: %s%n  %-48s %s: %s", name, expected.target(), wantText, "", actual.target(), gotText));
        }
        return String.join("\n", lines);
    }

    /**
     * The scenarios whose checks differ in a way the score does not show (warnings, skips, or
     * anything in an unscored scenario): reported, never asserted.
     */
    static String otherDifferences(Outcome expected, Outcome actual)
    {
        List<String> lines = new ArrayList<>();
        actual.scenarios().forEach((name, got) ->
        {
            Scenario want = expected.scenarios().get(name);
            if (want == null || !want.summary().equals(got.summary()))
                lines.add("  " + name + " " + expected.target() + ": " + (want == null ? "(not run)" : want.summary())
                    + " / " + actual.target() + ": " + got.summary());
        });
        return String.join("\n", lines);
    }
}
