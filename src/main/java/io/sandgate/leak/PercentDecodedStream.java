package io.sandgate.leak;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.sandgate.leak.LeakScanner.Chunk;
import io.sandgate.leak.LeakScanner.Mode;

/**
 * A body read both as sent and percent-decoded, as the URL check reads a path and query
 * ({@link PercentDecoded}): whoever reads a form ({@code token=%73%67...}) or a cookie decodes it,
 * so a held secret escaped byte by byte is the secret to them. Two {@link Mode#REDACT} streams of
 * one scanner read the two forms, and the bytes as sent go on only as far as both have let their
 * form go: a secret in either is found before any of it leaves. Decoding is as lenient as
 * {@link PercentDecoded}'s ({@code %} and two hex digits; anything else stays as it is), and an
 * escape split across chunks is decoded once its last byte has arrived.
 *
 * <p>A match in the decoded form cannot be cut out of the bytes as sent without encoding them
 * anew, so nothing is redacted: from the first hit on the stream releases nothing, and the caller
 * refuses the exchange. Hits are at their places in the bytes as sent, each secret once.</p>
 */
final class PercentDecodedStream extends LeakScanner.Stream
{
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private final LeakScanner.Stream asSent;
    private final LeakScanner.Stream decoded;
    /** The bytes as sent from stream offset {@link #base} on, not yet released. */
    private byte[] held = new byte[256];
    private int heldLength;
    private long base;
    /** Where decoding goes on: the first byte not decoded yet (an escape whose digits have not all arrived). */
    private long undecoded;
    /** How far the stream of the bytes as sent has let them go. */
    private long asSentReleased;
    /**
     * Per decoded byte the decoding stream still holds, in order: where it starts in the bytes as
     * sent. The first stands for decoded offset {@link #decodedReleased}.
     */
    private long[] starts = new long[64];
    private int startsHead;
    private int startsLength;
    private long decodedReleased;
    private boolean hit;
    private boolean finished;

    PercentDecodedStream(LeakScanner.Stream asSent, LeakScanner.Stream decoded)
    {
        if (asSent.mode() != Mode.REDACT || decoded.mode() != Mode.REDACT)
            throw new IllegalArgumentException("streams: " + asSent.mode() + ", " + decoded.mode() + " (expected: REDACT, which hold back what a secret may start with)");
        this.asSent = asSent;
        this.decoded = decoded;
    }

    /** REDACT: bytes are held back as a redacting stream holds them, though none is ever replaced. */
    @Override
    public Mode mode()
    {
        return Mode.REDACT;
    }

    @Override
    public long offset()
    {
        return base + heldLength;
    }

    @Override
    public int held()
    {
        return heldLength;
    }

    @Override
    long examined()
    {
        return asSent.examined() + decoded.examined();
    }

    @Override
    public Chunk feed(ByteBuffer chunk)
    {
        if (finished)
            throw new IllegalStateException("stream already finished");
        if (hit)
            return new Chunk(EMPTY, List.of());
        append(chunk.slice());
        Chunk plain = asSent.feed(chunk);
        Chunk fromDecoded = decoded.feed(decode(false));
        List<LeakHit> hits = hits(plain.hits(), fromDecoded.hits());
        if (!hits.isEmpty())
            return stop(hits);
        asSentReleased += plain.output().remaining();
        forget(fromDecoded.output().remaining());
        return new Chunk(release(Math.min(asSentReleased, startsLength > 0 ? starts[startsHead] : undecoded)), List.of());
    }

    @Override
    public Chunk finish()
    {
        if (finished)
            throw new IllegalStateException("stream already finished");
        finished = true;
        if (hit)
            return new Chunk(EMPTY, List.of());
        Chunk plain = asSent.finish();
        List<LeakHit> fromDecoded = new ArrayList<>(decoded.feed(decode(true)).hits());
        fromDecoded.addAll(decoded.finish().hits());
        List<LeakHit> hits = hits(plain.hits(), fromDecoded);
        if (!hits.isEmpty())
            return stop(hits);
        return new Chunk(release(offset()), List.of());
    }

    private void append(ByteBuffer in)
    {
        int needed = heldLength + in.remaining();
        if (needed > held.length)
            held = Arrays.copyOf(held, Math.max(needed, held.length * 2));
        in.get(held, heldLength, in.remaining());
        heldLength = needed;
    }

    /**
     * The bytes from {@link #undecoded} on, decoded, each decoded byte's start noted. Unless at the
     * end, a {@code %} whose two digits have not both arrived waits for the next chunk.
     */
    private ByteBuffer decode(boolean atEnd)
    {
        int end = heldLength;
        int i = (int)(undecoded - base);
        byte[] out = new byte[end - i];
        int length = 0;
        while (i < end)
        {
            if (held[i] == '%' && i + 2 >= end && !atEnd)
                break;
            int high = held[i] == '%' && i + 2 < end ? Character.digit(held[i + 1], 16) : -1;
            int low = high < 0 ? -1 : Character.digit(held[i + 2], 16);
            noteStart(base + i);
            if (low >= 0)
            {
                out[length++] = (byte)(high << 4 | low);
                i += 3;
            }
            else
            {
                out[length++] = held[i];
                i += 1;
            }
        }
        undecoded = base + i;
        return ByteBuffer.wrap(out, 0, length);
    }

    private void noteStart(long start)
    {
        if (startsHead + startsLength == starts.length)
        {
            if (startsHead > 0)
            {
                System.arraycopy(starts, startsHead, starts, 0, startsLength);
                startsHead = 0;
            }
            if (startsLength == starts.length)
                starts = Arrays.copyOf(starts, starts.length * 2);
        }
        starts[startsHead + startsLength++] = start;
    }

    /** The decoding stream has let {@code count} more decoded bytes go. */
    private void forget(int count)
    {
        startsHead += count;
        startsLength -= count;
        decodedReleased += count;
    }

    /** Where decoded offset {@code offset} (one the decoding stream still holds, or the end) starts in the bytes as sent. */
    private long asSentOffset(long offset)
    {
        long index = offset - decodedReleased;
        return index < startsLength ? starts[startsHead + (int)index] : undecoded;
    }

    /** Both streams' hits at their places in the bytes as sent; a decoded one that a hit as sent covers is the same secret. */
    private List<LeakHit> hits(List<LeakHit> plain, List<LeakHit> fromDecoded)
    {
        if (fromDecoded.isEmpty())
            return plain;
        List<LeakHit> hits = new ArrayList<>(plain);
        for (LeakHit hit : fromDecoded)
        {
            LeakHit inPlace = new LeakHit(hit.ruleId(), asSentOffset(hit.start()), asSentOffset(hit.end()));
            if (plain.stream().noneMatch(p -> p.ruleId().equals(inPlace.ruleId()) && p.start() < inPlace.end() && inPlace.start() < p.end()))
                hits.add(inPlace);
        }
        return hits;
    }

    private Chunk stop(List<LeakHit> hits)
    {
        hit = true;
        return new Chunk(EMPTY, hits);
    }

    /** The held bytes before stream offset {@code to}, which leave the stream. */
    private ByteBuffer release(long to)
    {
        int count = (int)(to - base);
        if (count <= 0)
            return EMPTY;
        byte[] out = Arrays.copyOf(held, count);
        System.arraycopy(held, count, held, 0, heldLength - count);
        heldLength -= count;
        base = to;
        return ByteBuffer.wrap(out).asReadOnlyBuffer();
    }
}
