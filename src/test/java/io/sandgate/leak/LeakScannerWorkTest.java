package io.sandgate.leak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
        "sk-", "AKIA", "xoxb-", "xoxb-1234567890-", "ghp_", "github_pat_", "gw-"})
    void workGrowsLinearlyWithTheInputAndStaysBounded(String unit)
    {
        long small = examined(repeated(unit, 100_000));
        long large = examined(repeated(unit, 1_000_000));

        // The work per byte is bounded by a rule's window over its keyword's length; before, a
        // repeated BEGIN line made each candidate read its whole 8 KB window, twice.
        assertTrue(large <= 160L * 1_000_000, unit + ": examined " + large + " bytes for 1 MB");
        assertTrue(large <= 12 * Math.max(small, 100_000), unit + ": " + small + " for 100 KB, " + large + " for 1 MB");
    }
}
