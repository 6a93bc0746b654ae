package io.sandgate.leak;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static io.sandgate.leak.FakeKeys.ALNUM;
import static io.sandgate.leak.FakeKeys.chars;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A body read as sent and percent-decoded, for the secrets the gateway holds: a form or a cookie
 * carrying a token escaped byte by byte is the token to whoever decodes it. Bytes go on as sent,
 * none of a secret before it is known, however the body is cut into chunks.
 */
class PercentDecodedStreamTest
{
    private static final String TOKEN = "sgt_" + chars(ALNUM, 30, 95);
    private static final LeakScanner HELD = LeakScanner.of(List.of()).withLiterals(Map.of(LeakScanner.AGENT_TOKEN_RULE, List.of(TOKEN)));

    private static byte[] ascii(String s)
    {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static String escaped(String text)
    {
        StringBuilder out = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8))
            out.append(String.format("%%%02x", b & 0xFF));
        return out.toString();
    }

    /** What the stream released and found, the body fed in chunks of {@code step} bytes. */
    private record Run(byte[] output, List<LeakHit> hits, byte[] beforeFirstHit)
    {
    }

    private static Run run(byte[] body, int step)
    {
        LeakScanner.Stream stream = HELD.decodedStream();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<LeakHit> hits = new ArrayList<>();
        byte[] beforeFirstHit = null;
        for (int from = 0; from < body.length; from += step)
        {
            LeakScanner.Chunk chunk = stream.feed(ByteBuffer.wrap(body, from, Math.min(step, body.length - from)));
            beforeFirstHit = collect(chunk, out, hits, beforeFirstHit);
        }
        beforeFirstHit = collect(stream.finish(), out, hits, beforeFirstHit);
        return new Run(out.toByteArray(), hits, beforeFirstHit);
    }

    private static byte[] collect(LeakScanner.Chunk chunk, ByteArrayOutputStream out, List<LeakHit> hits, byte[] beforeFirstHit)
    {
        byte[] bytes = new byte[chunk.output().remaining()];
        chunk.output().get(bytes);
        out.writeBytes(bytes);
        hits.addAll(chunk.hits());
        return beforeFirstHit == null && !hits.isEmpty() ? out.toByteArray() : beforeFirstHit;
    }

    @Test
    void aTokenEscapedByteByByte_isFound_andNoneOfItLeavesFirst_whateverTheChunks()
    {
        String head = "a=1&b=%41%zz&token=";
        byte[] body = ascii(head + escaped(TOKEN) + "&c=2");
        for (int step = 1; step <= body.length; step++)
        {
            Run run = run(body, step);
            assertEquals(List.of(new LeakHit(LeakScanner.AGENT_TOKEN_RULE, head.length(), head.length() + 3L * TOKEN.length())), run.hits(), "step " + step);
            assertTrue(run.beforeFirstHit().length <= head.length(), "step " + step + ": released " + new String(run.beforeFirstHit(), StandardCharsets.US_ASCII));
            assertArrayEquals(run.beforeFirstHit(), run.output(), "step " + step + ": nothing leaves after the hit");
        }
    }

    @Test
    void aTokenPartlyEscaped_orAsSent_isFoundOnce()
    {
        String partly = TOKEN.substring(0, 4) + escaped(TOKEN.substring(4, 9)) + TOKEN.substring(9);
        for (String spelt : List.of(partly, TOKEN))
        {
            byte[] body = ascii("x=" + spelt);
            for (int step = 1; step <= body.length; step++)
                assertEquals(List.of(new LeakHit(LeakScanner.AGENT_TOKEN_RULE, 2, body.length)), run(body, step).hits(), spelt + ", step " + step);
        }
    }

    @Test
    void aBodyWithoutASecret_leavesAsSent_escapesAndAll_whateverTheChunks()
    {
        byte[] body = ascii("q=%41%c3%a9&r=%zz&s=" + escaped(TOKEN.substring(0, 20)) + "&t=%4&u=%");
        for (int step = 1; step <= body.length; step++)
        {
            Run run = run(body, step);
            assertEquals(List.of(), run.hits(), "step " + step);
            assertArrayEquals(body, run.output(), "step " + step);
        }
    }

    @Test
    void anEscapeSplitAcrossChunks_isDecodedWhenItsLastDigitArrives()
    {
        String escapedToken = escaped(TOKEN);
        LeakScanner.Stream stream = HELD.decodedStream();
        List<LeakHit> hits = new ArrayList<>(stream.feed(ByteBuffer.wrap(ascii("k=" + escapedToken.substring(0, 4)))).hits());
        hits.addAll(stream.feed(ByteBuffer.wrap(ascii(escapedToken.substring(4, escapedToken.length() - 1)))).hits());
        assertEquals(List.of(), hits, "the last escape has one digit of two");
        hits.addAll(stream.feed(ByteBuffer.wrap(ascii(escapedToken.substring(escapedToken.length() - 1)))).hits());
        assertEquals(1, hits.size());
        assertEquals(0, stream.finish().output().remaining());
    }

    @Test
    void memoryIsBoundedByTheLongestSecretNotTheBody()
    {
        byte[] chunk = ascii("a=%41%42&token=sgt_%20".repeat(400));
        LeakScanner.Stream stream = HELD.decodedStream();
        long released = 0;
        int maxHeld = 0;
        for (int i = 0; i < 256; i++)
        {
            released += stream.feed(ByteBuffer.wrap(chunk)).output().remaining();
            maxHeld = Math.max(maxHeld, stream.held());
        }
        released += stream.finish().output().remaining();
        assertEquals(256L * chunk.length, released);
        assertTrue(maxHeld <= chunk.length + 3 * HELD.maxMatchLength(), "held " + maxHeld);
    }
}
