package io.sandgate.mcp;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * A Streamable HTTP GET stream read raw on a thread of its own, its events (keepalives skipped)
 * queued for the test to take; closing it cuts the connection, as a client that loses its network.
 */
final class SseEvents implements AutoCloseable
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    record Event(String id, String data)
    {
    }

    private final InputStream body;
    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final Thread reader;

    private SseEvents(InputStream body)
    {
        this.body = body;
        this.reader = new Thread(this::read, "sse-events");
        reader.setDaemon(true);
        reader.start();
    }

    /** Opens the session's GET stream at {@code url}, resuming after {@code lastEventId} when not null. */
    static SseEvents open(String url, String session, String lastEventId) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", session).header("MCP-Protocol-Version", "2025-11-25").GET();
        if (lastEventId != null)
            request.header("Last-Event-ID", lastEventId);
        HttpResponse<InputStream> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, response.statusCode(), () -> "GET stream refused: " + new String(readAll(response.body()), StandardCharsets.UTF_8));
        return new SseEvents(response.body());
    }

    private static byte[] readAll(InputStream input)
    {
        try (input)
        {
            return input.readAllBytes();
        }
        catch (java.io.IOException x)
        {
            return new byte[0];
        }
    }

    private void read()
    {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8)))
        {
            String id = null;
            StringBuilder data = null;
            for (String line = lines.readLine(); line != null; line = lines.readLine())
            {
                if (line.isEmpty())
                {
                    if (data != null)
                        events.add(new Event(id, data.toString()));
                    id = null;
                    data = null;
                }
                else if (line.startsWith("id:"))
                    id = line.substring(3).strip();
                else if (line.startsWith("data:"))
                    data = (data == null ? new StringBuilder() : data.append('\n')).append(line.substring(5).strip());
            }
        }
        catch (java.io.IOException x)
        {
            // Cut by close(), or by the gateway.
        }
    }

    /** The next event, waiting up to 10 s for it. */
    Event next() throws InterruptedException
    {
        Event event = events.poll(10, TimeUnit.SECONDS);
        assertNotNull(event, "no event within 10 s");
        return event;
    }

    /** The next event, or null when none comes within {@code millis}. */
    Event poll(long millis) throws InterruptedException
    {
        return events.poll(Duration.ofMillis(millis).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() throws Exception
    {
        body.close();
        reader.join(5000);
    }
}
