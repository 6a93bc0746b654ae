package io.sandgate.leak;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Inputs built to make a scanner work hard: one keyword repeated, so that every few bytes start a
 * candidate. The work is counted (bytes patterns read, bytes compared or searched), not timed, so
 * the bounds hold on a loaded machine.
 */
class LeakScannerWorkTest
{
    private static final LeakScanner SCANNER = LeakScanner.defaults().withLiterals(List.of("gw-" + FakeKeys.chars(FakeKeys.ALNUM, 40, 1)));

    private static byte[] repeated(String unit, int size)
    {
        StringBuilder s = new StringBuilder(size + unit.length());
        while (s.length() < size)
            s.append(unit);
        return s.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    private static long examined(byte[] body)
    {
        LeakScanner.Stream stream = SCANNER.stream(LeakScanner.Mode.REDACT);
        for (int from = 0; from < body.length; from += 8192)
            stream.feed(ByteBuffer.wrap(body, from, Math.min(8192, body.length - from)));
        stream.finish();
        return stream.examined();
    }

    @ParameterizedTest
    @ValueSource(strings = {"-----BEGIN PRIVATE KEY-----\n", "-----BEGIN PRIVATE KEY-----\n-----END CERTIFICATE-----\n",
        "sk-", "sk-proj-", "sk-svcacct-", "sk-ant-api03-", "sk_live_", "AKIA", "AIza", "xoxb-", "xoxa-", "xoxb-1234567890-",
        "ghp_", "github_pat_", "gw-"})
    void workGrowsLinearlyWithTheInputAndStaysBounded(String unit)
    {
        long small = examined(repeated(unit, 100_000));
        long large = examined(repeated(unit, 1_000_000));

        // A few bytes per byte: a run of key characters longer than a rule's window is measured
        // once, not once per keyword in it (before, 1 MB of sk- cost 138 bytes per byte), and a
        // repeated BEGIN line no longer makes each candidate read its whole 8 KB window.
        assertTrue(large <= 8L * 1_000_000, unit + ": examined " + large + " bytes for 1 MB");
        assertTrue(large <= 12 * Math.max(small, 100_000), unit + ": " + small + " for 100 KB, " + large + " for 1 MB");
    }

    @ParameterizedTest
    @ValueSource(strings = {"sk-", "sk-proj-", "github_pat_"})
    void keyAfterALongRunOfKeywordsIsStillFound(String unit)
    {
        String key = unit.equals("github_pat_") ? FakeKeys.githubFineGrained() : FakeKeys.openAiProject();
        byte[] body = (new String(repeated(unit, 100_000), StandardCharsets.ISO_8859_1) + " " + key + " ")
            .getBytes(StandardCharsets.ISO_8859_1);

        List<LeakHit> hits = SCANNER.scan(body);

        // The run's own last few hundred bytes may well have a key's shape; the key must be found too.
        long start = body.length - 1 - key.length();
        assertTrue(hits.stream().anyMatch(h -> h.start() == start && h.end() == start + key.length()), unit + ": " + hits);
    }
}
