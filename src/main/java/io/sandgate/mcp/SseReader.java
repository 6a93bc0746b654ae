package io.sandgate.mcp;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * Reads a text/event-stream as the HTML spec defines it: fields {@code event}, {@code data} (joined
 * with newlines), {@code id}; comments skipped; an empty line dispatches.
 */
final class SseReader
{
    /** One dispatched event. */
    record Event(String id, String name, String data)
    {
    }

    private final BufferedReader reader;

    SseReader(InputStream input)
    {
        this.reader = new BufferedReader(new InputStreamReader(input, StandardCharsets.UTF_8));
    }

    /** @return the next event, or null at the end of the stream */
    Event next() throws IOException
    {
        String id = null;
        String name = "message";
        StringBuilder data = null;
        String line;
        while ((line = reader.readLine()) != null)
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
}
