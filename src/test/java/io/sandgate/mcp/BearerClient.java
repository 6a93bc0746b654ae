package io.sandgate.mcp;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.Gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An MCP client made of a plain HTTP client that sends a bearer token with every request, to one
 * server behind a gateway: Streamable HTTP session-era and 2026-07-28 POSTs, the HTTP+SSE stream and
 * its message POSTs. Each request names the replica it goes to, so that a session opened on one
 * can be presented on another.
 */
final class BearerClient
{
    static final String REVISION_2025 = "2025-11-25";
    static final String REVISION_2026 = "2026-07-28";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String server;
    private final String token;

    /** @param token the bearer token, or null for requests without {@code Authorization} */
    BearerClient(String server, String token)
    {
        this.server = server;
        this.token = token;
    }

    /** The same client with another token. */
    BearerClient with(String otherToken)
    {
        return new BearerClient(server, otherToken);
    }

    private HttpRequest.Builder request(Gateway replica, String endpoint)
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(replica.uri("/mcp/" + server + "/" + endpoint)).timeout(TIMEOUT);
        if (token != null)
            request.header("Authorization", "Bearer " + token);
        return request;
    }

    /** POSTs {@code body} to the Streamable HTTP endpoint, in the session given (none when null), with the headers given as name, value pairs. */
    HttpResponse<String> post(Gateway replica, String session, String body, String... headers) throws IOException, InterruptedException
    {
        HttpRequest.Builder request = request(replica, "mcp").header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream").POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null)
            request.header("Mcp-Session-Id", session).header("MCP-Protocol-Version", REVISION_2025);
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The initialize request of a session-era client. */
    static String initialize(int id)
    {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"" + REVISION_2025 + "\","
            + "\"capabilities\":{},\"clientInfo\":{\"name\":\"bearer\",\"version\":\"1\"}}}";
    }

    /** Opens a session-era session (2025-11-25) on the replica and says it is initialized; the session id. */
    String openSession(Gateway replica) throws IOException, InterruptedException
    {
        HttpResponse<String> initialized = post(replica, null, initialize(0), "MCP-Protocol-Version", REVISION_2025);
        assertEquals(200, initialized.statusCode(), initialized.body());
        assertTrue(initialized.body().contains("protocolVersion"), initialized.body());
        String session = initialized.headers().firstValue("Mcp-Session-Id").orElseThrow();
        HttpResponse<String> notified = post(replica, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        assertEquals(202, notified.statusCode(), notified.body());
        return session;
    }

    /** A ping in the session; the status (404 for a session this client may not use). */
    int ping(Gateway replica, String session) throws IOException, InterruptedException
    {
        return post(replica, session, "{\"jsonrpc\":\"2.0\",\"id\":90,\"method\":\"ping\"}").statusCode();
    }

    /** Opens the Streamable HTTP GET stream of the session; the status, the stream closed at once. */
    int getStream(Gateway replica, String session) throws IOException, InterruptedException
    {
        HttpRequest request = request(replica, "mcp").header("Accept", "text/event-stream").header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", REVISION_2025).GET().build();
        HttpResponse<InputStream> response = HTTP.send(request, HttpResponse.BodyHandlers.ofInputStream());
        response.body().close();
        return response.statusCode();
    }

    /** Ends the session; the status. */
    int delete(Gateway replica, String session) throws IOException, InterruptedException
    {
        HttpRequest request = request(replica, "mcp").header("Mcp-Session-Id", session).header("MCP-Protocol-Version", REVISION_2025).DELETE().build();
        return HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** A 2026-07-28 request: no session, the routing headers, the {@code _meta} envelope. */
    HttpResponse<String> stateless(Gateway replica, int id, String method, String toolName, String arguments) throws IOException, InterruptedException
    {
        String params = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" + REVISION_2026 + "\",\"io.modelcontextprotocol/clientCapabilities\":{}}"
            + (toolName == null ? "" : ",\"name\":\"" + toolName + "\",\"arguments\":" + arguments);
        String body = "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":{" + params + "}}";
        return toolName == null
            ? post(replica, null, body, "MCP-Protocol-Version", REVISION_2026, "Mcp-Method", method)
            : post(replica, null, body, "MCP-Protocol-Version", REVISION_2026, "Mcp-Method", method, "Mcp-Name", toolName);
    }

    /** GETs the HTTP+SSE endpoint ({@code query} may name a session to resume); the answer, whose body is the stream when it is a 200. */
    HttpResponse<InputStream> sse(Gateway replica, String query) throws IOException, InterruptedException
    {
        return HTTP.send(request(replica, "sse" + query).header("Accept", "text/event-stream").GET().build(), HttpResponse.BodyHandlers.ofInputStream());
    }

    /** Opens an HTTP+SSE stream, a new session's unless {@code query} names one. */
    Stream stream(Gateway replica, String query) throws IOException, InterruptedException
    {
        HttpResponse<InputStream> response = sse(replica, query);
        if (response.statusCode() != 200)
        {
            String body = new String(response.body().readAllBytes());
            throw new AssertionError("the stream did not open: " + response.statusCode() + " " + body);
        }
        return new Stream(response.body());
    }

    /** POSTs a message of an HTTP+SSE session; the answer (202 when taken, its answer then comes on the stream). */
    HttpResponse<String> message(Gateway replica, String session, String body) throws IOException, InterruptedException
    {
        return HTTP.send(request(replica, "message?sessionId=" + session).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** An HTTP+SSE stream read on a thread of its own; a null name marks its end. */
    static final class Stream implements AutoCloseable
    {
        private final BlockingQueue<SseReader.Event> events = new LinkedBlockingQueue<>();
        private final InputStream body;

        private Stream(InputStream body)
        {
            this.body = body;
            Thread reader = new Thread(() ->
            {
                try
                {
                    SseReader sse = new SseReader(body);
                    for (SseReader.Event event = sse.next(); event != null; event = sse.next())
                        events.add(event);
                }
                catch (IOException x)
                {
                    // Closed by the test, or by the gateway: the end either way.
                }
                events.add(new SseReader.Event(null, null, null));
            }, "bearer-sse-reader");
            reader.setDaemon(true);
            reader.start();
        }

        /** The next event, waiting up to 10 s for it. */
        SseReader.Event next() throws InterruptedException
        {
            SseReader.Event event = events.poll(10, TimeUnit.SECONDS);
            assertNotNull(event, "no event within 10 s");
            return event;
        }

        /** The session the stream's first event, {@code endpoint}, names. */
        String session() throws InterruptedException
        {
            SseReader.Event endpoint = next();
            assertEquals("endpoint", endpoint.name(), String.valueOf(endpoint.data()));
            return endpoint.data().substring(endpoint.data().indexOf("sessionId=") + "sessionId=".length());
        }

        /** The data of the next message event that answers JSON-RPC id {@code id}. */
        String answerTo(int id) throws InterruptedException, IOException
        {
            for (SseReader.Event event = next(); event.name() != null; event = next())
            {
                if ("message".equals(event.name()) && JSON.readTree(event.data()).path("id").asInt(-1) == id)
                    return event.data();
            }
            throw new AssertionError("the stream ended without an answer to " + id);
        }

        @Override
        public void close() throws IOException
        {
            body.close();
        }
    }
}
