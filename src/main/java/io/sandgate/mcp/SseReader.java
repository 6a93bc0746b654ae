package io.sandgate.mcp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads a text/event-stream as the HTML spec defines it: fields {@code event}, {@code data} (joined
 * with newlines), {@code id}; comments skipped; an empty line dispatches; lines end with LF, CRLF
 * or CR.
 *
 * <p>Every relayed answer has a reader of its own, so it splits lines on bytes with small buffers:
 * an InputStreamReader under a BufferedReader allocated 24 KiB per answer (a quarter of all the
 * gateway allocated per relayed call, and so of its young collections) for answers that are
 * mostly a few hundred bytes.</p>
 */
final class SseReader
{
    /** Bytes read ahead at most. */
    private static final int READ_AHEAD = 512;

    /** One dispatched event. */
    record Event(String id, String name, String data)
    {
    }

    private final InputStream input;
    private final byte[] buffer = new byte[READ_AHEAD];
    private int position;
    private int limit;
    /** The last line ended with CR: a LF right after it is part of that line end. */
    private boolean skipLf;
    private final ByteArrayOutputStream lineBytes = new ByteArrayOutputStream(128);

    SseReader(InputStream input)
    {
        this.input = input;
    }

    /** @return the next event, or null at the end of the stream */
    Event next() throws IOException
    {
        String id = null;
        String name = "message";
        StringBuilder data = null;
        String line;
        while ((line = readLine()) != null)
        {
            if (line.isEmpty())
            {
                if (data != null)
                    return new Event(id, name, data.toString());
                name = "message";
                continue;
            }
            if (line.startsWith(":"))
                continue;
            int colon = line.indexOf(':');
            String field = colon < 0 ? line : line.substring(0, colon);
            String value = colon < 0 ? "" : line.substring(colon + 1);
            if (value.startsWith(" "))
                value = value.substring(1);
            switch (field)
            {
                case "data" ->
                {
                    if (data == null)
                        data = new StringBuilder(value);
                    else
                        data.append('\n').append(value);
                }
                case "event" -> name = value;
                case "id" -> id = value;
                default ->
                {
                }
            }
        }
        return null;
    }

    /** The next line without its end (UTF-8 split on bytes: CR and LF never occur inside a character), or null at the end. */
    private String readLine() throws IOException
    {
        lineBytes.reset();
        while (true)
        {
            if (position == limit)
            {
                int read = input.read(buffer);
                if (read < 0)
                    return lineBytes.size() == 0 ? null : lineBytes.toString(StandardCharsets.UTF_8);
                position = 0;
                limit = read;
                continue;
            }
            if (skipLf)
            {
                skipLf = false;
                if (buffer[position] == '\n')
                {
                    position++;
                    continue;
                }
            }
            int start = position;
            while (position < limit && buffer[position] != '\n' && buffer[position] != '\r')
                position++;
            lineBytes.write(buffer, start, position - start);
            if (position < limit)
            {
                skipLf = buffer[position++] == '\r';
                return lineBytes.toString(StandardCharsets.UTF_8);
            }
        }
    }
}
