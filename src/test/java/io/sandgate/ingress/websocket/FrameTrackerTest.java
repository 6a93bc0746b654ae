package io.sandgate.ingress.websocket;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Following a WebSocket stream by its frame headers: what passes as it is, what is held, what is refused. */
class FrameTrackerTest
{
    private static final int TEXT = 0x1;
    private static final int BINARY = 0x2;

    /** A frame as an endpoint writes it; masked with a fixed key (the tracker never unmasks data). */
    private static byte[] frame(boolean fin, int opcode, byte[] payload, boolean masked)
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write((fin ? 0x80 : 0) | opcode);
        int mask = masked ? 0x80 : 0;
        if (payload.length < 126)
        {
            out.write(mask | payload.length);
        }
        else if (payload.length < 65536)
        {
            out.write(mask | 126);
            out.write(payload.length >> 8);
            out.write(payload.length);
        }
        else
        {
            out.write(mask | 127);
            out.writeBytes(ByteBuffer.allocate(8).putLong(payload.length).array());
        }
        byte[] key = {0x12, 0x34, 0x56, 0x78};
        if (masked)
            out.writeBytes(key);
        for (int i = 0; i < payload.length; i++)
            out.write(masked ? payload[i] ^ key[i & 3] : payload[i]);
        return out.toByteArray();
    }

    private static byte[] text(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static ByteBuffer buffer(byte[]... parts)
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts)
            out.writeBytes(part);
        return ByteBuffer.wrap(out.toByteArray());
    }

    @Test
    void wholeDataFrames_passAsTheyAre_andAreCounted()
    {
        FrameTracker tracker = new FrameTracker(1024);
        ByteBuffer in = buffer(frame(true, TEXT, text("hi"), true), frame(true, BINARY, new byte[300], true));

        assertEquals(in.remaining(), tracker.pass(in, false));
        assertEquals(2, tracker.drainMessages());
        assertEquals(302, tracker.drainPayloadBytes());
        assertEquals(0, tracker.drainMessages(), "drained");
    }

    @Test
    void aFrameLongerThanTheBuffer_passesInPieces_andOnlyItsHeaderIsRead()
    {
        FrameTracker tracker = new FrameTracker(1 << 20);
        byte[] frame = frame(true, BINARY, new byte[100_000], false);
        ByteBuffer first = ByteBuffer.wrap(frame, 0, 16 * 1024);
        ByteBuffer rest = ByteBuffer.wrap(frame, 16 * 1024, frame.length - 16 * 1024);

        assertEquals(16 * 1024, tracker.pass(first, false));
        assertFalse(tracker.atBoundary(), "in the middle of a payload");
        assertEquals(rest.remaining(), tracker.pass(rest, false));
        assertTrue(tracker.atBoundary());
        assertEquals(1, tracker.drainMessages());
    }

    @Test
    void aHeaderCutByTheEndOfARead_isHeld_andPassedWholeOnceComplete()
    {
        FrameTracker tracker = new FrameTracker(1 << 20);
        byte[] frame = frame(true, BINARY, new byte[70_000], true);
        // 2 bytes, then 8 of length and 4 of mask key: the first read ends 5 bytes in.
        ByteBuffer first = ByteBuffer.wrap(frame, 0, 5);
        ByteBuffer second = ByteBuffer.wrap(frame, 5, frame.length - 5);

        assertEquals(0, tracker.pass(first, false));
        assertEquals(FrameTracker.Item.MORE, tracker.take(first));
        assertEquals(0, tracker.pass(second, false), "nothing passes while a header is held");
        assertEquals(FrameTracker.Item.HEADER, tracker.take(second));
        ByteBuffer header = tracker.held();
        byte[] headerBytes = new byte[header.remaining()];
        header.get(headerBytes);
        assertArrayEquals(Arrays.copyOf(frame, 14), headerBytes);
        assertEquals(70_000, tracker.pass(second, false));
        assertTrue(tracker.atBoundary());
    }

    @Test
    void controlFrames_areHeldWhole_andTheGatewaysOwnPongIsRecognised_maskedOrNot()
    {
        for (boolean masked : new boolean[] {true, false})
        {
            FrameTracker tracker = new FrameTracker(1024);
            ByteBuffer ping = FrameTracker.keepalivePing(masked);
            byte[] pong = new byte[ping.remaining()];
            ping.get(pong);
            pong[0] = (byte)(0x80 | FrameTracker.PONG);
            ByteBuffer in = buffer(frame(true, TEXT, text("a"), masked), pong, frame(true, FrameTracker.PONG, text("someone else's"), masked));

            assertEquals(3 + (masked ? 4 : 0), tracker.pass(in, false), "stops before the control frame");
            in.position(in.position() + 3 + (masked ? 4 : 0));
            assertEquals(FrameTracker.Item.CONTROL, tracker.take(in));
            assertTrue(tracker.isKeepalivePong());
            tracker.drop();
            assertEquals(FrameTracker.Item.CONTROL, tracker.take(in));
            assertFalse(tracker.isKeepalivePong(), "a pong with another payload is the peer's business");
            tracker.drop();
            assertFalse(in.hasRemaining());
        }
    }

    @Test
    void aCloseFramesCode_isReadThroughItsMask()
    {
        FrameTracker tracker = new FrameTracker(1024);
        ByteBuffer in = FrameTracker.close(4001, "bye", true);

        assertEquals(FrameTracker.Item.CONTROL, tracker.take(in));
        assertEquals(FrameTracker.CLOSE, tracker.controlOpcode());
        assertEquals(4001, tracker.closeCode());

        FrameTracker empty = new FrameTracker(1024);
        assertEquals(FrameTracker.Item.CONTROL, empty.take(ByteBuffer.wrap(frame(true, FrameTracker.CLOSE, new byte[0], false))));
        assertEquals(FrameTracker.NO_STATUS, empty.closeCode());
    }

    @Test
    void aFragmentedMessage_isHeldToTheLimitAsAWhole_andFollowedPastTheFragmentThatBreaksIt()
    {
        FrameTracker tracker = new FrameTracker(1024);
        ByteBuffer in = buffer(frame(false, BINARY, new byte[600], true), frame(true, 0, new byte[600], true),
            frame(true, FrameTracker.CLOSE, new byte[] {0x03, (byte)0xE8}, true));

        int first = tracker.pass(in, false);
        assertEquals(8 + 600, first, "the first fragment is within the limit");
        in.position(first);
        assertEquals(FrameTracker.Item.TOO_BIG, tracker.take(in), "the second takes the message over it");
        assertEquals(0, tracker.drainMessages());
        in.position(in.position() + tracker.pass(in, false));
        assertEquals(FrameTracker.Item.CONTROL, tracker.take(in), "the close after it is still found");
        assertEquals(1000, tracker.closeCode());
    }

    @Test
    void withAFrameOfTheGatewaysWaiting_passingStopsAtTheNextBoundary()
    {
        FrameTracker tracker = new FrameTracker(1024);
        byte[] one = frame(true, TEXT, text("one"), false);
        ByteBuffer in = buffer(one, frame(true, TEXT, text("two"), false));

        assertEquals(one.length, tracker.pass(in, true));
        assertTrue(tracker.atBoundary());
    }

    @Test
    void whatCannotBeFollowed_isBroken()
    {
        assertEquals(FrameTracker.Item.BROKEN, new FrameTracker(1024).take(ByteBuffer.wrap(new byte[] {(byte)0x89, 126, 0, 127})),
            "a control frame longer than 125 bytes");
        assertEquals(FrameTracker.Item.BROKEN, new FrameTracker(1024).take(ByteBuffer.wrap(new byte[] {(byte)0x09, 0})),
            "a fragmented control frame");
        assertEquals(FrameTracker.Item.BROKEN, new FrameTracker(1024).take(ByteBuffer.wrap(frame(true, 0, new byte[1], false))),
            "a continuation with no message to continue");
        FrameTracker open = new FrameTracker(1024);
        ByteBuffer in = buffer(frame(false, TEXT, text("a"), false), frame(true, TEXT, text("b"), false));
        in.position(open.pass(in, false));
        assertEquals(FrameTracker.Item.BROKEN, open.take(in), "a new message inside an unfinished one");
    }

    @Test
    void whatFollowsABrokenRule_isSkippedUnread()
    {
        FrameTracker tracker = new FrameTracker(1024);
        assertEquals(FrameTracker.Item.BROKEN, tracker.take(ByteBuffer.wrap(new byte[] {(byte)0x09, 0})));
        tracker.drop();

        ByteBuffer rest = buffer(frame(true, TEXT, text("a"), false), frame(true, FrameTracker.CLOSE, new byte[] {0x03, (byte)0xE8}, false));
        assertEquals(0, tracker.pass(rest, false), "nothing passes");
        assertEquals(FrameTracker.Item.MORE, tracker.take(rest), "not even a close frame is found");
        assertFalse(rest.hasRemaining(), "all of it is taken");
        assertEquals(0, tracker.drainMessages());
    }
}
