package io.sandgate.mcp;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.sandgate.testing.Gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Streamable HTTP client made of a plain HTTP client, for bodies no SDK would send: it opens a
 * session-era session on the server of that name behind the gateway and POSTs whatever text it is given.
 */
final class RawStreamableClient
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final Gateway gateway;
    private final String server;

    RawStreamableClient(Gateway gateway, String server)
    {
        this.gateway = gateway;
        this.server = server;
    }

    /** Initializes a session (2025-11-25) and says it is initialized; the session id. */
    String openSession() throws Exception
    {
        HttpResponse<String> initialized = post(null, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
            + "\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}");
        assertEquals(200, initialized.statusCode(), initialized.body());
        assertTrue(initialized.body().contains("protocolVersion"), initialized.body());
        String session = initialized.headers().firstValue("Mcp-Session-Id").orElseThrow();
        HttpResponse<String> notified = post(session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", "MCP-Protocol-Version", "2025-11-25");
        assertEquals(202, notified.statusCode(), notified.body());
        return session;
    }

    /** POSTs {@code body} as it is, in the session given (none when null), with the headers given as name, value pairs. */
    HttpResponse<String> post(String session, String body, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri("/mcp/" + server + "/mcp")).timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null)
            request.header("Mcp-Session-Id", session);
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
