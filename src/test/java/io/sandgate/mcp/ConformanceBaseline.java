package io.sandgate.mcp;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.sandgate.mcp.ConformanceSuite.Outcome;
import io.sandgate.testing.PerBuild;
import io.sandgate.testing.ReferenceMcpServer;
import org.eclipse.jetty.toolchain.test.MavenPaths;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the conformance suite scores against the reference server directly, run once per revision
 * in a build, and the comparison of a run through the gateway with it. The classes that use it run
 * side by side in separate JVMs, each with its own reference server and results directory; the
 * direct run of a revision is made by whichever asks first, and read by the others.
 */
final class ConformanceBaseline
{
    private final ReferenceMcpServer reference;
    private final Path results;
    private final Map<String, Outcome> direct = new ConcurrentHashMap<>();

    /** @param name the test class's results directory under target's conformance directory */
    ConformanceBaseline(ReferenceMcpServer reference, String name)
    {
        this.reference = reference;
        this.results = MavenPaths.targetTests().resolve("conformance").resolve(name);
    }

    /** Where a run's results go. */
    Path results(String run)
    {
        return results.resolve(run);
    }

    /**
     * Scenario by scenario, the run through the gateway scores as the direct run: the same passed
     * and failed counts and the same failing checks; what differs only in warnings is printed.
     */
    void assertScoresAsDirect(String revision, Outcome through) throws Exception
    {
        Outcome baseline = directRun(revision);
        String others = ConformanceSuite.otherDifferences(baseline, through);
        System.out.printf("conformance %s: direct %d passed, %d failed (%d ms); %s %d passed, %d failed (%d ms)%n%s",
            revision, baseline.passed(), baseline.failed(), baseline.took().toMillis(),
            through.target(), through.passed(), through.failed(), through.took().toMillis(),
            others.isEmpty() ? "" : "differences not in the score:\n" + others + "\n");
        // Not scored yet, but a client that resumes a cut-short answer must get the rest through the gateway too.
        assertTrue(!others.contains("server-sse-polling"), () -> "SSE polling differs through the gateway:\n" + others);
        String differences = ConformanceSuite.scoredDifferences(baseline, through);
        assertEquals("", differences, () -> "--requirements " + revision + ": the scored scenarios differ through the gateway ("
            + through.target() + ") from the reference server directly:\n" + differences
            + "\n--- suite output through the gateway\n" + through.report());
    }

    private synchronized Outcome directRun(String revision) throws Exception
    {
        Outcome baseline = direct.get(revision);
        if (baseline == null)
        {
            baseline = shared(revision);
            direct.put(revision, baseline);
        }
        return baseline;
    }

    /**
     * The direct run of this build, made once ({@link PerBuild}): a run of the suite costs seconds
     * of both cores, and the reference server scores alike on any port.
     */
    private Outcome shared(String revision) throws Exception
    {
        Path shared = results.getParent().resolve("direct");
        String took = PerBuild.once(shared, revision,
            () -> Long.toString(ConformanceSuite.run("direct", reference.url(), revision, shared.resolve(revision)).took().toMillis()));
        return ConformanceSuite.read("direct", shared.resolve(revision), Duration.ofMillis(Long.parseLong(took)));
    }
}
