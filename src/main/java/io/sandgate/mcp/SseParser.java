package io.sandgate.mcp;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * A text/event-stream parsed as its bytes arrive, as the HTML spec defines it: fields
 * {@code event}, {@code data} (joined with newlines), {@code id}, {@code retry} (digits only, handed
 * on with the next event, so that a relay can pass the server's reconnection time on); comments skipped; an empty line
 * dispatches; lines end with LF, CRLF or CR. An event the stream ends in the middle of is not
 * dispatched.
 *
 * <p>Pushed rather than pulled, so that a stream held open for hours can be read as its bytes come
 * (see {@link EventStreamPump}) instead of by a thread blocked on it; {@link SseReader} pulls
 * through it for the short streams that are read to their end.</p>
 */
final class SseParser
{
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(128);
    /** The last line ended with CR: a LF right after it is part of that line end. */
    private boolean skipLf;
    private String id;
    private String name = "message";
    private StringBuilder data;
    private String retry;

    /** Takes the next bytes of the stream (UTF-8 split on bytes: CR and LF never occur inside a character). */
    void feed(ByteBuffer bytes, Consumer<SseReader.Event> events)
    {
        while (bytes.hasRemaining())
        {
            byte b = bytes.get();
            if (skipLf)
            {
                skipLf = false;
                if (b == '\n')
                    continue;
            }
            if (b == '\n' || b == '\r')
            {
                skipLf = b == '\r';
                String text = line.toString(StandardCharsets.UTF_8);
                line.reset();
                accept(text, events);
            }
            else
            {
                line.write(b);
            }
        }
    }

    private void accept(String text, Consumer<SseReader.Event> events)
    {
        if (text.isEmpty())
        {
            if (data != null)
            {
                SseReader.Event event = new SseReader.Event(id, name, data.toString(), retry);
                id = null;
                retry = null;
                data = null;
                name = "message";
                events.accept(event);
                return;
            }
            name = "message";
            return;
        }
        if (text.startsWith(":"))
            return;
        int colon = text.indexOf(':');
        String field = colon < 0 ? text : text.substring(0, colon);
        String value = colon < 0 ? "" : text.substring(colon + 1);
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
            case "retry" ->
            {
                if (!value.isEmpty() && value.chars().allMatch(c -> c >= '0' && c <= '9'))
                    retry = value;
            }
            default ->
            {
            }
        }
    }
}
