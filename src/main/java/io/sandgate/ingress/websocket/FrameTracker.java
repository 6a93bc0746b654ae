package io.sandgate.ingress.websocket;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Follows one direction of a tunnelled WebSocket by its frame headers alone (RFC 6455 section
 * 5.2), so that the gateway can count messages, hold every message to the size limit and slip its
 * own control frames in between whole frames without decoding a payload: data frames pass as the
 * bytes they are, masked ones still masked, compressed ones (permessage-deflate, RSV1) still
 * compressed.
 *
 * <p>{@link #pass} is the fast path: how many bytes from the buffer's position are payload or whole
 * data-frame headers within the limit. It stops before anything else, which {@link #take} then
 * collects: a header cut by the end of a read (its bytes are held until it is whole, so that a header
 * over the limit is never half forwarded), a control frame (held whole, at most 131 bytes, so that a
 * pong answering the gateway's own ping can be dropped and a close code read), or a header that
 * breaks a rule. Not thread-safe: one tracker per direction, driven by that direction's pump.</p>
 */
final class FrameTracker
{
    static final int CONTINUATION = 0x0;
    static final int CLOSE = 0x8;
    static final int PING = 0x9;
    static final int PONG = 0xA;
    /** Close status for "no status code present" (section 7.4.1). */
    static final int NO_STATUS = 1005;
    /** The payload of the gateway's own pings, so that the pongs answering them can be told apart. */
    private static final byte[] KEEPALIVE = "sandgate-keepalive".getBytes(StandardCharsets.US_ASCII);
    /** A control frame's payload is at most 125 bytes and its length never extended (section 5.5). */
    private static final int MAX_CONTROL_PAYLOAD = 125;
    /** Largest header (2 + 8 bytes of length + 4 of mask key), and largest control frame. */
    private static final int MAX_HELD = Math.max(14, 6 + MAX_CONTROL_PAYLOAD);

    /** What {@link #take} found. */
    enum Item
    {
        /** The buffer ended before the header or control frame did; its bytes are held. */
        MORE,
        /** A data-frame header, whole now and within the limits; {@link #held} gives its bytes. */
        HEADER,
        /** A whole control frame; inspect it, then {@link #held} or {@link #drop} it. */
        CONTROL,
        /** A data frame that would take its message over the size limit; its payload is still followed. */
        TOO_BIG,
        /** Not a WebSocket stream the tracker can follow any further: the rest of it is skipped unread. */
        BROKEN
    }

    private final long maxMessageSize;
    private final byte[] held = new byte[MAX_HELD];
    private int heldCount;
    /** Payload bytes of the current frame not yet passed. */
    private long payloadLeft;
    /** A fragmented message is open: the next data frame must be a continuation. */
    private boolean inMessage;
    private long messageSize;
    private long messages;
    private long payloadBytes;
    /** The stream broke a rule: nothing after it can be followed. */
    private boolean broken;

    FrameTracker(long maxMessageSize)
    {
        this.maxMessageSize = maxMessageSize;
    }

    /** Between two frames, with nothing held: where the gateway may write a frame of its own. */
    boolean atBoundary()
    {
        return payloadLeft == 0 && heldCount == 0;
    }

    /**
     * How many bytes from the buffer's position may be passed on as they are; does not move the
     * position. Stops before a control frame, a header the buffer cuts, a header breaking a rule, and
     * with {@code stopAtBoundary} at the first frame boundary after the position (the gateway has a
     * frame of its own to write).
     */
    int pass(ByteBuffer in, boolean stopAtBoundary)
    {
        if (heldCount > 0 || broken)
            return 0;
        int start = in.position();
        int limit = in.limit();
        int pos = start;
        while (pos < limit)
        {
            if (payloadLeft > 0)
            {
                int n = (int)Math.min(payloadLeft, limit - pos);
                pos += n;
                payloadLeft -= n;
                continue;
            }
            if ((stopAtBoundary && pos > start) || limit - pos < 2)
                break;
            int b0 = in.get(pos) & 0xFF;
            int b1 = in.get(pos + 1) & 0xFF;
            if (isControl(b0))
                break;
            int headerLength = headerLength(b1);
            if (limit - pos < headerLength)
                break;
            long length = payloadLength(in, pos, b1);
            if (check(b0, length) != Item.HEADER)
                break;
            account(b0, length);
            pos += headerLength;
        }
        return pos - start;
    }

    /**
     * Collects the header or control frame at the buffer's position (after {@link #pass} stopped
     * there), moving the position past what it took. Once the stream is {@link Item#BROKEN}, takes
     * all the buffer holds and finds {@link Item#MORE}.
     */
    Item take(ByteBuffer in)
    {
        if (broken)
        {
            in.position(in.limit());
            return Item.MORE;
        }
        while (true)
        {
            int needed = needed();
            if (needed < 0)
                return broke();
            if (heldCount == needed)
            {
                Item item = evaluate();
                return item == Item.BROKEN ? broke() : item;
            }
            if (!in.hasRemaining())
                return Item.MORE;
            int n = Math.min(needed - heldCount, in.remaining());
            in.get(held, heldCount, n);
            heldCount += n;
        }
    }

    /**
     * The held header or control frame, to be written before anything else is taken; the tracker
     * lets go of it (its array is reused only by the next {@link #take}).
     */
    ByteBuffer held()
    {
        ByteBuffer frame = ByteBuffer.wrap(held, 0, heldCount);
        heldCount = 0;
        return frame;
    }

    /** Forgets the held header or control frame: it goes nowhere. */
    void drop()
    {
        heldCount = 0;
    }

    /** The held control frame's opcode. */
    int controlOpcode()
    {
        return held[0] & 0x0F;
    }

    /** Whether the held control frame is a pong answering one of the gateway's own pings. */
    boolean isKeepalivePong()
    {
        if (controlOpcode() != PONG || (held[1] & 0x7F) != KEEPALIVE.length)
            return false;
        for (int i = 0; i < KEEPALIVE.length; i++)
        {
            if (payloadByte(i) != (KEEPALIVE[i] & 0xFF))
                return false;
        }
        return true;
    }

    /** The status code of the held close frame, {@link #NO_STATUS} when it carries none. */
    int closeCode()
    {
        return (held[1] & 0x7F) < 2 ? NO_STATUS : payloadByte(0) << 8 | payloadByte(1);
    }

    /** Whole data messages seen since the last call. */
    long drainMessages()
    {
        long n = messages;
        messages = 0;
        return n;
    }

    /** Data payload bytes (as on the wire, so compressed ones compressed) seen since the last call. */
    long drainPayloadBytes()
    {
        long n = payloadBytes;
        payloadBytes = 0;
        return n;
    }

    private Item broke()
    {
        broken = true;
        return Item.BROKEN;
    }

    /** Bytes needed for the item being held, once its first two bytes are known; -1 when it cannot be followed. */
    private int needed()
    {
        if (heldCount < 2)
            return 2;
        int b1 = held[1] & 0xFF;
        int header = headerLength(b1);
        if (!isControl(held[0] & 0xFF))
            return header;
        int length = b1 & 0x7F;
        return length > MAX_CONTROL_PAYLOAD ? -1 : header + length;
    }

    private Item evaluate()
    {
        int b0 = held[0] & 0xFF;
        if (isControl(b0))
            return (b0 & 0x80) == 0 ? Item.BROKEN : Item.CONTROL;
        long length = payloadLength(ByteBuffer.wrap(held), 0, held[1] & 0xFF);
        Item item = check(b0, length);
        if (item == Item.HEADER)
        {
            account(b0, length);
        }
        else if (item == Item.TOO_BIG)
        {
            // Still followed, so that what comes after it (the close the peer answers with) is found;
            // its continuations are over the limit too.
            heldCount = 0;
            payloadLeft = length;
            inMessage = (b0 & 0x80) == 0;
            messageSize = maxMessageSize;
        }
        return item;
    }

    /** Whether a data frame with this first byte and payload length may pass, without changing anything. */
    private Item check(int b0, long length)
    {
        boolean continuation = (b0 & 0x0F) == CONTINUATION;
        if (length < 0 || continuation != inMessage)
            return Item.BROKEN;
        long before = continuation ? messageSize : 0;
        return length > maxMessageSize - before ? Item.TOO_BIG : Item.HEADER;
    }

    private void account(int b0, long length)
    {
        boolean fin = (b0 & 0x80) != 0;
        messageSize = ((b0 & 0x0F) == CONTINUATION ? messageSize : 0) + length;
        inMessage = !fin;
        if (fin)
            messages++;
        payloadBytes += length;
        payloadLeft = length;
    }

    /** The payload byte at this index of the held control frame, unmasked (the held bytes stay as they are). */
    private int payloadByte(int index)
    {
        boolean masked = (held[1] & 0x80) != 0;
        int b = held[(masked ? 6 : 2) + index];
        if (masked)
            b ^= held[2 + (index & 3)];
        return b & 0xFF;
    }

    private static boolean isControl(int b0)
    {
        return (b0 & 0x08) != 0;
    }

    private static int headerLength(int b1)
    {
        int length = b1 & 0x7F;
        return 2 + (length == 126 ? 2 : length == 127 ? 8 : 0) + ((b1 & 0x80) != 0 ? 4 : 0);
    }

    private static long payloadLength(ByteBuffer in, int pos, int b1)
    {
        int length = b1 & 0x7F;
        if (length == 126)
            return in.getShort(pos + 2) & 0xFFFF;
        if (length == 127)
            return in.getLong(pos + 2);
        return length;
    }

    /** The gateway's ping; masked towards a sandbox, whose client the gateway is (section 5.3). */
    static ByteBuffer keepalivePing(boolean masked)
    {
        return frame(PING, KEEPALIVE, masked);
    }

    /** A close frame; the reason is cut to what a control frame holds. */
    static ByteBuffer close(int code, String reason, boolean masked)
    {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        byte[] payload = new byte[2 + Math.min(text.length, MAX_CONTROL_PAYLOAD - 2)];
        payload[0] = (byte)(code >> 8);
        payload[1] = (byte)code;
        System.arraycopy(text, 0, payload, 2, payload.length - 2);
        return frame(CLOSE, payload, masked);
    }

    private static ByteBuffer frame(int opcode, byte[] payload, boolean masked)
    {
        ByteBuffer frame = ByteBuffer.allocate(2 + (masked ? 4 : 0) + payload.length);
        frame.put((byte)(0x80 | opcode));
        frame.put((byte)((masked ? 0x80 : 0) | payload.length));
        if (masked)
        {
            byte[] key = new byte[4];
            ThreadLocalRandom.current().nextBytes(key);
            frame.put(key);
            for (int i = 0; i < payload.length; i++)
                frame.put((byte)(payload[i] ^ key[i & 3]));
        }
        else
        {
            frame.put(payload);
        }
        return frame.flip();
    }
}
