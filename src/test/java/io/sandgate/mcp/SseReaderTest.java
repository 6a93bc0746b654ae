package io.sandgate.mcp;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SseReaderTest
{
    private static List<SseReader.Event> read(InputStream input) throws IOException
    {
        SseReader reader = new SseReader(input);
        List<SseReader.Event> events = new ArrayList<>();
        SseReader.Event event;
        while ((event = reader.next()) != null)
            events.add(event);
        return events;
    }

    private static InputStream bytes(String text)
    {
        return new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8));
    }

    /** The spec allows all three line ends, mixed in one stream. */
    @ParameterizedTest
    @ValueSource(strings = {"\n", "\r\n", "\r"})
    void fieldsAndComments_withAnyLineEnd(String end) throws IOException
    {
        String stream = ": keepalive" + end + end
            + "id: 7" + end + "event: message" + end + "data: {\"a\":1}" + end + end
            + "data:first" + end + "data: second" + end + "retry: 10" + end + end;
        assertEquals(List.of(new SseReader.Event("7", "message", "{\"a\":1}"), new SseReader.Event(null, "message", "first\nsecond", "10")), read(bytes(stream)));
    }

    /**
     * A server's reconnection time goes with the next event, so that a relay can pass it on (a
     * priming event has an id and empty data); anything but digits is no reconnection time and
     * goes nowhere, so a server cannot slip a field of its own into the client's stream through it.
     */
    @Test
    void retry_goesWithTheNextEvent_digitsOnly() throws IOException
    {
        String stream = "id: s1_1\nretry: 500\ndata: \n\nretry: 5\ndata: x\n\nretry: 1\nid: 9\ndata: y\n\nretry: 20 0\ndata: z\n\n";
        assertEquals(List.of(new SseReader.Event("s1_1", "message", "", "500"), new SseReader.Event(null, "message", "x", "5"),
            new SseReader.Event("9", "message", "y", "1"), new SseReader.Event(null, "message", "z")), read(bytes(stream)));
    }

    /** CR at the end of one read and LF at the start of the next are one line end, and a character may be split between reads. */
    @Test
    void oneByteAtATime_keepsLineEndsAndCharactersWhole() throws IOException
    {
        byte[] stream = "event: note\r\ndata: caf\u00e9 \u2713\r\n\r\ndata: x\r\n\r\n".getBytes(StandardCharsets.UTF_8);
        InputStream trickle = new InputStream()
        {
            private int next;

            @Override
            public int read()
            {
                return next < stream.length ? stream[next++] & 0xff : -1;
            }

            @Override
            public int read(byte[] buffer, int offset, int length)
            {
                if (next == stream.length)
                    return -1;
                buffer[offset] = stream[next++];
                return 1;
            }
        };
        assertEquals(List.of(new SseReader.Event(null, "note", "caf\u00e9 \u2713"), new SseReader.Event(null, "message", "x")), read(trickle));
    }

    /** A line longer than what is read ahead, and an event cut off by the end of the stream, which is not dispatched. */
    @Test
    void longLine_isWhole_andAnUnfinishedEventIsDropped() throws IOException
    {
        String large = "y".repeat(5000);
        assertEquals(List.of(new SseReader.Event(null, "message", large)), read(bytes("data: " + large + "\n\ndata: cut")));
    }
}
