package io.sandgate.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The side-by-side report, rendered from a run's recorded values as {@code bench/run.sh} renders it. */
class SideBySideReportTest
{
    @TempDir
    Path dir;

    /**
     * The figures of the 1 KB maximum of 2026-12-04 04:09Z: the median rounds' ratio says 0.90x,
     * the rounds themselves 0.76, 0.97 and 0.80. The report must show the rounds' own median.
     */
    @Test
    void roundsAgainstTheSameRoundsNginx_endWithTheirMedian() throws Exception
    {
        String section = render(
            "http_small_max\tnginx\trps\t33698",
            "http_small_max\tnginx\trounds\t33698, 31574, 38034",
            "http_small_max\tsandgate-memory\trps\t30280",
            "http_small_max\tsandgate-memory\trounds\t25767, 30652, 30280");
        assertTrue(section.contains("| 0.90x |"), section);
        assertTrue(section.contains("| 0.76, 0.97, 0.80 (median 0.80) |"), section);
    }

    @Test
    void anEvenNumberOfRounds_hasTheMeanOfItsMiddleTwo() throws Exception
    {
        String section = render(
            "ws_echo\tnginx\trounds\t100, 100, 100, 100",
            "ws_echo\tsandgate-memory\trounds\t70, 90, 95, 120");
        assertTrue(section.contains("| 0.70, 0.90, 0.95, 1.20 (median 0.93) |"), section);
    }

    /** Two rounds have no middle worth the name, and a round without its pair leaves the median out. */
    @Test
    void twoRounds_orAMissingPair_haveNoMedian() throws Exception
    {
        String section = render(
            "http_large\tnginx\trounds\t100, 200",
            "http_large\tsandgate-memory\trounds\t90, 180",
            "ws_echo\tnginx\trounds\t100, -, 100",
            "ws_echo\tsandgate-memory\trounds\t90, 95, 80");
        assertTrue(section.contains("| 0.90, 0.90 |"), section);
        assertTrue(section.contains("| 0.90, -, 0.80 |"), section);
    }

    /** A browser's headers get a table of their own, only in a run that measured them. */
    @Test
    void browserHeaders_haveTheirOwnTable_onlyWhenMeasured() throws Exception
    {
        String title = "HTTP 1 KB with a browser's request headers";
        String without = render(
            "http_small_max\tnginx\trounds\t100, 100, 100",
            "http_small_max\tsandgate-memory\trounds\t80, 80, 80");
        assertFalse(without.contains(title), without);
        String with = render(
            "http_small_max\tnginx\trounds\t100, 100, 100",
            "http_small_max\tsandgate-memory\trounds\t80, 80, 80",
            "http_small_browser\tnginx\trounds\t100, 100, 100",
            "http_small_browser\tsandgate-memory\trounds\t70, 75, 72");
        String browser = with.substring(with.indexOf(title));
        assertTrue(browser.contains("| 0.70, 0.75, 0.72 (median 0.72) |"), with);
        assertTrue(with.substring(0, with.indexOf(title)).contains("| 0.80, 0.80, 0.80 (median 0.80) |"), with);
    }

    private String render(String... values) throws Exception
    {
        Path recorded = dir.resolve("values.tsv");
        Files.write(recorded, List.of(values));
        Path out = dir.resolve("BENCHMARKS.md");
        SideBySideReport.main(new String[] {recorded.toString(), "-", out.toString()});
        return Files.readString(out);
    }
}
