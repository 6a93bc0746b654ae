package io.sandgate.mcp;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.GatewayExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad input on the MCP endpoints gets a clear status and changes nothing. */
class McpEndpointsIT
{
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("mcp.servers", List.of(Map.of("name", "tools", "url", "http://127.0.0.1:1/mcp", "transport", "streamable")))
        .set("mcp.max-body-size", "2048")
        .set("mcp.keepalive-interval", "200ms")
        .set("mcp.max-streams-per-client", "2"));

    private static HttpResponse<String> send(String method, String path, String body, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve(path)).timeout(Duration.ofSeconds(10))
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static final String PING = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

    @Test
    void unknownSession_is404_neverASilent202() throws Exception
    {
        assertEquals(404, send("POST", "/mcp/tools/message?sessionId=0123456789abcdef0123456789abcdef", PING).statusCode());
        assertEquals(404, send("POST", "/mcp/tools/message?sessionId=../../etc", PING).statusCode());
        assertEquals(404, send("POST", "/mcp/tools/message", PING).statusCode());
        assertEquals(404, send("POST", "/mcp/tools/mcp", PING, "Mcp-Session-Id", "0123456789abcdef0123456789abcdef").statusCode());
        assertEquals(404, send("GET", "/mcp/tools/mcp", null, "Mcp-Session-Id", "0123456789abcdef0123456789abcdef").statusCode());
        assertEquals(404, send("DELETE", "/mcp/tools/mcp", null, "Mcp-Session-Id", "0123456789abcdef0123456789abcdef").statusCode());
    }

    @Test
    void bodyThatIsNotJsonRpc_is400() throws Exception
    {
        for (String body : List.of("not json", "{}", "[]", "{\"jsonrpc\":\"1.0\",\"method\":\"x\"}", "[1,2]", "{\"jsonrpc\":\"2.0\"}"))
        {
            HttpResponse<String> response = send("POST", "/mcp/tools/mcp", body, "Content-Type", "application/json");
            assertEquals(400, response.statusCode(), body + " -> " + response.body());
        }
    }

    @Test
    void badProtocolVersion_is400() throws Exception
    {
        HttpResponse<String> response = send("POST", "/mcp/tools/mcp", PING, "MCP-Protocol-Version", "1999-01-01");
        assertEquals(400, response.statusCode());
        // Not a session-era revision, so a stateless request: those carry their revision in _meta too.
        assertTrue(response.body().contains("_meta"), response.body());
    }

    @Test
    void foreignOrigin_is403_onEveryEndpoint() throws Exception
    {
        assertEquals(403, send("GET", "/mcp/tools/sse", null, "Origin", "http://evil.example").statusCode());
        assertEquals(403, send("POST", "/mcp/tools/mcp", PING, "Origin", "http://evil.example").statusCode());
        assertEquals(403, send("POST", "/mcp/tools/message?sessionId=x", PING, "Origin", "http://evil.example").statusCode());
    }

    @Test
    void unknownServerOrEndpoint_is404_andWrongMethods405() throws Exception
    {
        assertEquals(404, send("GET", "/mcp/nope/sse", null).statusCode());
        assertEquals(404, send("GET", "/mcp/tools/other", null).statusCode());
        assertEquals(405, send("POST", "/mcp/tools/sse", PING).statusCode());
        assertEquals(405, send("GET", "/mcp/tools/message", null).statusCode());
        assertEquals(405, send("PUT", "/mcp/tools/mcp", PING).statusCode());
        assertEquals(405, send("GET", "/mcp/tools/mcp", null).statusCode(), "GET without a session");
    }

    @Test
    void oversizedBody_is413() throws Exception
    {
        String big = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"p\":\"" + "x".repeat(4096) + "\"}}";
        assertEquals(413, send("POST", "/mcp/tools/mcp", big).statusCode());
    }

    @Test
    void sseStream_announcesTheGatewaysMessageUrl_unbuffered_withKeepaliveComments() throws Exception
    {
        HttpResponse<java.io.InputStream> response = CLIENT.send(HttpRequest.newBuilder(gateway.uri().resolve("/mcp/tools/sse")).build(),
            HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, response.statusCode());
        assertEquals("no", response.headers().firstValue("X-Accel-Buffering").orElse(null));
        assertTrue(response.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"));
        try (java.io.BufferedReader lines = new java.io.BufferedReader(new java.io.InputStreamReader(response.body(), java.nio.charset.StandardCharsets.UTF_8)))
        {
            assertEquals("event: endpoint", lines.readLine());
            String data = lines.readLine();
            assertTrue(data.matches("data: /mcp/tools/message\\?sessionId=[0-9a-f]{32}"), data);
            assertEquals("", lines.readLine());
            // Nothing else happens on this session: the next thing on the wire is a keepalive.
            assertEquals(": keepalive", lines.readLine());
        }
    }

    @Test
    void streamsPerClient_areLimited_429() throws Exception
    {
        List<HttpResponse<java.io.InputStream>> open = new java.util.ArrayList<>();
        try
        {
            // Up to the limit (2) streams open; the next is refused. A stream another test closed a
            // moment ago may still count until the gateway notices, hence "at most".
            List<Integer> statuses = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++)
            {
                HttpResponse<java.io.InputStream> stream = CLIENT.send(HttpRequest.newBuilder(gateway.uri().resolve("/mcp/tools/sse")).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
                statuses.add(stream.statusCode());
                open.add(stream);
            }
            assertTrue(statuses.stream().filter(s -> s == 200).count() <= 2, statuses.toString());
            assertEquals(429, statuses.get(2), statuses.toString());
        }
        finally
        {
            for (HttpResponse<java.io.InputStream> stream : open)
                stream.body().close();
        }
    }

    @Test
    void unreachableUpstream_is502() throws Exception
    {
        String init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}";
        HttpResponse<String> response = send("POST", "/mcp/tools/mcp", init, "Accept", "application/json, text/event-stream");
        assertEquals(502, response.statusCode(), response.body());
        assertTrue(!response.body().contains("127.0.0.1:1"), response.body());
    }
}
