package io.sandgate.mcp;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.HoldingMcpServer;
import io.sandgate.testing.McpUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * MCP clients parse errors as JSON-RPC error responses: every error of the MCP face has one, with
 * the status the transports give, the request's id once its body was read, and the gateway's message.
 */
class McpErrorsIT
{
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SESSION = "0123456789abcdef0123456789abcdef";
    private static final McpUpstream upstream = McpUpstream.start();
    private static final HoldingMcpServer holding = HoldingMcpServer.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .set("server.max-concurrent-requests-per-client", "3")
        .set("mcp.servers", List.of(
            Map.of("name", "tools", "url", upstream.streamableUrl(), "transport", "streamable"),
            Map.of("name", "down", "url", "http://127.0.0.1:1/mcp", "transport", "streamable"),
            Map.of("name", "hold", "url", holding.url().toString(), "transport", "streamable")))
        .set("mcp.max-body-size", "2048"));

    @AfterAll
    static void stop() throws Exception
    {
        holding.close();
        upstream.close();
    }

    private static HttpResponse<String> send(String method, String path, String body, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri(path)).timeout(Duration.ofSeconds(10))
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String ping(Object id)
    {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"ping\"}";
    }

    /** Asserts a JSON-RPC 2.0 error response and returns its error object. */
    private static JsonNode assertJsonRpcError(HttpResponse<String> response, int status, int code, String id, String messagePart) throws Exception
    {
        String what = response.request().method() + " " + response.uri() + " -> " + response.statusCode() + " " + response.body();
        assertEquals(status, response.statusCode(), what);
        assertTrue(response.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), what);
        JsonNode body = JSON.readTree(response.body());
        assertEquals("2.0", body.path("jsonrpc").asText(), what);
        assertTrue(body.has("id"), what);
        assertEquals(id, body.get("id").isNull() ? null : body.get("id").toString(), what);
        assertEquals(code, body.path("error").path("code").asInt(), what);
        assertTrue(body.path("error").path("message").asText().contains(messagePart), what);
        assertEquals(3, body.size(), what);
        return body.path("error");
    }

    @Test
    void unknownServerOrEndpoint_is404WithATransportError() throws Exception
    {
        assertJsonRpcError(send("GET", "/mcp/nope/sse", null), 404, -32000, null, "no MCP server named nope");
        assertJsonRpcError(send("POST", "/mcp/nope/mcp", ping(1)), 404, -32000, null, "no MCP server named nope");
        assertJsonRpcError(send("GET", "/mcp/tools/other", null), 404, -32000, null, "not an MCP endpoint");
        // A browser's Accept changes nothing: MCP speaks JSON-RPC.
        assertJsonRpcError(send("GET", "/mcp/nope/sse", null, "Accept", "text/html"), 404, -32000, null, "no MCP server named nope");
    }

    @Test
    void unknownSession_is404WithSessionNotFound_onEveryEndpoint() throws Exception
    {
        assertJsonRpcError(send("POST", "/mcp/tools/message?sessionId=" + SESSION, ping(1)), 404, -32001, null, "MCP session");
        assertJsonRpcError(send("POST", "/mcp/tools/message", ping(1)), 404, -32001, null, "MCP session");
        assertJsonRpcError(send("GET", "/mcp/tools/sse?sessionId=" + SESSION, null), 404, -32001, null, "MCP session");
        // The body was read before the session was looked up: the error answers the request's id.
        assertJsonRpcError(send("POST", "/mcp/tools/mcp", ping(7), "Mcp-Session-Id", SESSION), 404, -32001, "7", "MCP session");
        assertJsonRpcError(send("GET", "/mcp/tools/mcp", null, "Mcp-Session-Id", SESSION), 404, -32001, null, "MCP session");
        assertJsonRpcError(send("DELETE", "/mcp/tools/mcp", null, "Mcp-Session-Id", SESSION), 404, -32001, null, "MCP session");
    }

    @Test
    void bodyThatIsNotJsonRpc_is400WithParseErrorOrInvalidRequest() throws Exception
    {
        assertJsonRpcError(send("POST", "/mcp/tools/mcp", "not json"), 400, -32700, null, "not JSON");
        for (String body : List.of("{}", "[]", "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"x\"}", "[1,2]"))
            assertJsonRpcError(send("POST", "/mcp/tools/mcp", body), 400, -32600, null, "JSON-RPC");
    }

    @Test
    void badProtocolVersion_is400() throws Exception
    {
        // A revision of no session era is a stateless request, which carries _meta: without, its params are invalid.
        assertJsonRpcError(send("POST", "/mcp/tools/mcp", ping(1), "MCP-Protocol-Version", "1999-01-01"), 400, -32602, "1", "_meta");
        assertJsonRpcError(send("POST", "/mcp/tools/mcp", ping(1), "MCP-Protocol-Version", "2026-07-28", "Mcp-Session-Id", SESSION),
            400, -32000, "1", "MCP-Protocol-Version");
        assertJsonRpcError(send("GET", "/mcp/tools/mcp", null, "MCP-Protocol-Version", "1999-01-01"), 400, -32000, null, "MCP-Protocol-Version");
    }

    @Test
    void wrongMethod_is405() throws Exception
    {
        assertJsonRpcError(send("PUT", "/mcp/tools/mcp", ping(1)), 405, -32000, null, "use POST, GET or DELETE");
        assertJsonRpcError(send("GET", "/mcp/tools/message", null), 405, -32000, null, "use POST");
        assertJsonRpcError(send("GET", "/mcp/tools/mcp", null), 405, -32000, null, "Mcp-Session-Id");
    }

    @Test
    void bodyTooLarge_is413() throws Exception
    {
        String large = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" + "x".repeat(4096) + "\"}}";
        assertJsonRpcError(send("POST", "/mcp/tools/mcp", large), 413, -32000, null, "2048");
    }

    @Test
    void foreignOrigin_is403() throws Exception
    {
        assertJsonRpcError(send("POST", "/mcp/tools/mcp", ping(1), "Origin", "http://evil.example"), 403, -32000, null, "server.public-origins");
        assertJsonRpcError(send("GET", "/mcp/tools/sse", null, "Origin", "http://evil.example"), 403, -32000, null, "server.public-origins");
    }

    @Test
    void unreachableUpstream_is502_answeringTheRequestsId_withoutItsAddress() throws Exception
    {
        JsonNode error = assertJsonRpcError(send("POST", "/mcp/down/mcp", ping("\"a-1\"")), 502, -32000, "\"a-1\"", "MCP server");
        assertTrue(!error.toString().contains("127.0.0.1") && !error.toString().contains(":1/"), error.toString());
        // A batch has no one id to answer.
        assertJsonRpcError(send("POST", "/mcp/down/mcp", "[" + ping(1) + "," + ping(2) + "]"), 502, -32000, null, "MCP server");
    }

    @Test
    void perClientLimit_is429WithRetryAfter() throws Exception
    {
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        try
        {
            for (int i = 0; i < 3; i++)
            {
                held.add(CLIENT.sendAsync(HttpRequest.newBuilder(gateway.uri("/mcp/hold/mcp")).timeout(Duration.ofSeconds(20))
                    .POST(HttpRequest.BodyPublishers.ofString(ping(i))).build(), HttpResponse.BodyHandlers.ofString()));
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> holding.held() == 3);
            HttpResponse<String> refused = send("POST", "/mcp/tools/mcp", ping(9));
            assertJsonRpcError(refused, 429, -32000, null, "server.max-concurrent-requests-per-client");
            assertEquals("1", refused.headers().firstValue("Retry-After").orElse(null));
        }
        finally
        {
            holding.answerAll();
        }
        for (CompletableFuture<HttpResponse<String>> request : held)
            request.get(20, TimeUnit.SECONDS);
    }

    /**
     * Some HTTP+SSE clients label their JSON {@code application/x-www-form-urlencoded}: the body is
     * still the message, never parameters.
     */
    @Test
    void formEncodedMessage_isRelayedAsItsJson() throws Exception
    {
        HttpResponse<InputStream> stream = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/mcp/tools/sse")).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream events = stream.body())
        {
            assertEquals(200, stream.statusCode());
            BufferedReader reader = new BufferedReader(new InputStreamReader(events, StandardCharsets.UTF_8));
            assertEquals("event: endpoint", reader.readLine());
            String endpoint = reader.readLine().substring("data: ".length()).trim();

            String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\","
                + "\"capabilities\":{},\"clientInfo\":{\"name\":\"form\",\"version\":\"1\"}}}";
            String status = postRaw(endpoint, "application/x-www-form-urlencoded", body);
            assertTrue(status.startsWith("HTTP/1.1 202"), status);

            String line;
            while ((line = reader.readLine()) != null && !line.startsWith("data: "))
            {
                // Skips the event's id and name.
            }
            assertTrue(line != null && line.contains("\"id\":1") && line.contains("serverInfo"), "the upstream answered initialize: " + line);
        }
    }

    /** POSTs with the content type given on a socket of its own; returns the status line. */
    private static String postRaw(String pathAndQuery, String contentType, String body) throws Exception
    {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        try (Socket socket = new Socket("127.0.0.1", gateway.port()))
        {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + contentType + "\r\nContent-Length: " + bytes.length
                + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(bytes);
            out.flush();
            return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII)).readLine();
        }
    }
}
