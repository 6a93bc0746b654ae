package io.sandgate.mcp;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Queue;

/**
 * Reads a text/event-stream to its end, one event at a time, through a {@link SseParser}.
 *
 * <p>Every relayed answer has a reader of its own, so it reads with a small buffer: an
 * InputStreamReader under a BufferedReader allocated 24 KiB per answer (a quarter of all the
 * gateway allocated per relayed call, and so of its young collections) for answers that are
 * mostly a few hundred bytes.</p>
 */
final class SseReader
{
    /** Bytes read ahead at most. */
    private static final int READ_AHEAD = 512;

    /**
     * One dispatched event.
     *
     * @param retry the reconnection time in milliseconds the stream set since the event before, or null
     */
    record Event(String id, String name, String data, String retry)
    {
        Event(String id, String name, String data)
        {
            this(id, name, data, null);
        }
    }

    private final InputStream input;
    private final byte[] buffer = new byte[READ_AHEAD];
    private final SseParser parser = new SseParser();
    private final Queue<Event> parsed = new ArrayDeque<>(2);

    SseReader(InputStream input)
    {
        this.input = input;
    }

    /** @return the next event, or null at the end of the stream */
    Event next() throws IOException
    {
        while (parsed.isEmpty())
        {
            int read = input.read(buffer);
            if (read < 0)
                return null;
            parser.feed(ByteBuffer.wrap(buffer, 0, read), parsed::add);
        }
        return parsed.poll();
    }
}
