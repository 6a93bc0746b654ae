package io.sandgate.mcp;

import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

import io.sandgate.testing.Gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An MCP client of the HTTP+SSE transport (2024-11-05) made of a plain HTTP client, so that every
 * event id is visible, for fault tests: the stream held by one replica, the POSTs sent to another,
 * each answer counted by its JSON-RPC id so that a loss or a duplicate shows. Talks to the server
 * of that name behind the gateway, whose {@code echo} tool answers each call.
 */
public final class RawSseClient
{
    private static final Pattern RESPONSE_ID = Pattern.compile("\"id\":(\\d+)");
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final String server;

    public RawSseClient(String server)
    {
        this.server = server;
    }

    /** One SSE event as the client saw it; a null name marks the stream's end. */
    public record Event(String id, String name, String data)
    {
        /** The JSON-RPC id of the result this event carries, or -1. */
        public int resultId()
        {
            Matcher m = RESPONSE_ID.matcher(data == null ? "" : data);
            return data != null && data.contains("\"result\"") && m.find() ? Integer.parseInt(m.group(1)) : -1;
        }
    }

    /** An SSE stream read on a thread of its own. */
    public static final class Stream
    {
        private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();

        private Stream(HttpResponse<InputStream> response)
        {
            Thread reader = new Thread(() ->
            {
                try
                {
                    SseReader sse = new SseReader(response.body());
                    SseReader.Event event;
                    while ((event = sse.next()) != null)
                        events.add(new Event(event.id(), event.name(), event.data()));
                }
                catch (Exception x)
                {
                    // The replica died: that is the point of some tests.
                }
                events.add(new Event(null, null, null));
            }, "sse-reader");
            reader.setDaemon(true);
            reader.start();
        }

        /** The next event, waiting up to 15 s for it. */
        public Event next() throws InterruptedException
        {
            Event event = events.poll(15, TimeUnit.SECONDS);
            assertNotNull(event, "no event within 15 s");
            return event;
        }
    }

    /** Opens a stream on the replica: a new session's, or with {@code ?sessionId=} an existing one's. */
    public Stream stream(Gateway replica, String query, String lastEventId) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(replica.uri().resolve("/mcp/" + server + "/sse" + query)).header("Accept", "text/event-stream");
        if (lastEventId != null)
            request.header("Last-Event-ID", lastEventId);
        HttpResponse<InputStream> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, response.statusCode());
        return new Stream(response);
    }

    /** POSTs a message of the session to the replica; the status. */
    public int post(Gateway replica, String sessionId, String json) throws Exception
    {
        HttpRequest request = HttpRequest.newBuilder(replica.uri().resolve("/mcp/" + server + "/message?sessionId=" + sessionId))
            .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).timeout(Duration.ofSeconds(10)).build();
        return HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** A call of the echo tool with JSON-RPC id {@code id}. */
    public static String call(int id)
    {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"m" + id + "\"}}}";
    }

    /** Takes the new session's endpoint event from the stream and initializes it through {@code posts}; the session id. */
    public String openSession(Stream stream, Gateway posts) throws Exception
    {
        Event endpoint = stream.next();
        assertEquals("endpoint", endpoint.name());
        String sessionId = endpoint.data().substring(endpoint.data().indexOf("sessionId=") + "sessionId=".length());
        assertEquals(202, post(posts, sessionId, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
            + "\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}"));
        Event initialized = stream.next();
        assertTrue(initialized.data().contains("\"id\":0") && initialized.data().contains("protocolVersion"), initialized.data());
        assertNotNull(initialized.id(), "every event carries an id");
        assertEquals(202, post(posts, sessionId, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
        return sessionId;
    }

    /**
     * Takes events until the stream ends or {@code calls} calls are answered, counting the answers
     * by id in {@code answered}; the id of the last message event taken.
     */
    public static String collect(Stream stream, Map<Integer, Integer> answered, int calls) throws InterruptedException
    {
        String lastId = null;
        // Until each of 1..calls is answered: an answer to anything else (a duplicate of the
        // initialize answer, say) stays in the map for the caller's assertions to see.
        while (IntStream.rangeClosed(1, calls).anyMatch(id -> !answered.containsKey(id)))
        {
            Event event = stream.next();
            if (event.name() == null)
                break;
            if (!"message".equals(event.name()))
                continue;
            lastId = event.id();
            if (event.resultId() >= 0)
                answered.merge(event.resultId(), 1, Integer::sum);
        }
        return lastId;
    }
}
