package io.sandgate.leak;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static io.sandgate.leak.FakeKeys.ALNUM;
import static io.sandgate.leak.FakeKeys.chars;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A stream over a compiled scanner: all its state is its own, the scanner is only read. Many
 * exchanges share one scanner, and a rotation builds a new one while streams are open.
 */
class StreamingScanTest
{
    private static final LeakScanner SCANNER = LeakScanner.defaults();

    private static byte[] bytes(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void write(LeakScanner.Chunk chunk, ByteArrayOutputStream out, List<LeakHit> hits)
    {
        ByteBuffer output = chunk.output();
        byte[] copy = new byte[output.remaining()];
        output.get(copy);
        out.writeBytes(copy);
        hits.addAll(chunk.hits());
    }

    @Test
    void streamsOfOneScannerFedInTurnKeepTheirOwnState()
    {
        byte[] first = bytes("data: {\"key\":\"" + FakeKeys.openAiProject() + "\"} and a task-list");
        byte[] second = bytes("ghp_ alone, then " + FakeKeys.aws() + " in Asia");
        StreamingScan one = new StreamingScan(SCANNER, LeakScanner.Mode.REDACT);
        StreamingScan two = new StreamingScan(SCANNER, LeakScanner.Mode.REDACT);
        ByteArrayOutputStream oneOut = new ByteArrayOutputStream();
        ByteArrayOutputStream twoOut = new ByteArrayOutputStream();
        List<LeakHit> oneHits = new ArrayList<>();
        List<LeakHit> twoHits = new ArrayList<>();

        // Seven-byte steps, alternating: each key straddles several chunks of its own stream.
        for (int from = 0; from < Math.max(first.length, second.length); from += 7)
        {
            if (from < first.length)
                write(one.feed(ByteBuffer.wrap(first, from, Math.min(7, first.length - from))), oneOut, oneHits);
            if (from < second.length)
                write(two.feed(ByteBuffer.wrap(second, from, Math.min(7, second.length - from))), twoOut, twoHits);
        }
        write(one.finish(), oneOut, oneHits);
        write(two.finish(), twoOut, twoHits);

        assertArrayEquals(SCANNER.redact(first), oneOut.toByteArray());
        assertArrayEquals(SCANNER.redact(second), twoOut.toByteArray());
        assertEquals(List.of("openai-api-key"), oneHits.stream().map(LeakHit::ruleId).toList());
        assertEquals(List.of("aws-access-key-id"), twoHits.stream().map(LeakHit::ruleId).toList());
        assertEquals(SCANNER.scan(first), oneHits);
        assertEquals(SCANNER.scan(second), twoHits);
        assertEquals(first.length, one.offset());
        assertEquals(0, one.held());
    }

    @Test
    void aStreamKeepsTheHeldCredentialsItWasOpenedWith()
    {
        String oldKey = "gw-" + chars(ALNUM, 40, 11);
        String newKey = "gw-" + chars(ALNUM, 40, 12);
        LeakScanner before = SCANNER.withLiterals(List.of(oldKey));
        StreamingScan open = new StreamingScan(before, LeakScanner.Mode.REPORT);
        byte[] head = bytes("a " + oldKey.substring(0, 20));
        byte[] tail = bytes(oldKey.substring(20) + " " + newKey + " b");
        List<LeakHit> hits = new ArrayList<>(open.feed(ByteBuffer.wrap(head)).hits());

        // Rotated while the exchange is under way: the open stream goes on with what it had.
        LeakScanner after = before.withLiterals(List.of(newKey));
        hits.addAll(open.feed(ByteBuffer.wrap(tail)).hits());
        hits.addAll(open.finish().hits());

        assertEquals(List.of(new LeakHit(LeakScanner.CREDENTIAL_RULE, 2, 2 + oldKey.length())), hits);
        int newAt = 2 + oldKey.length() + 1;
        assertEquals(List.of(new LeakHit(LeakScanner.CREDENTIAL_RULE, newAt, newAt + newKey.length())),
            new StreamingScan(after, LeakScanner.Mode.REPORT).feed(ByteBuffer.wrap(bytes("a " + oldKey + " " + newKey + " b"))).hits());
    }
}
