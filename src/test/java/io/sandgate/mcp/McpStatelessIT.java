package io.sandgate.mcp;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.testing.GatewayExtension;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * 2026-07-28 requests through the gateway: relayed with their routing headers and no session,
 * and refused before the upstream, with the protocol's codes, when their headers and body disagree.
 * The upstream here records what reaches it and answers every request with an empty result.
 */
class McpStatelessIT
{
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Recorder upstream = Recorder.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .set("mcp.servers", List.of(Map.of("name", "now", "url", upstream.url().toString(), "transport", "streamable"),
            Map.of("name", "old", "url", "http://127.0.0.1:1/sse", "transport", "sse"))));

    @AfterAll
    static void stop() throws Exception
    {
        upstream.server.stop();
    }

    @BeforeEach
    void clear()
    {
        upstream.seen.clear();
    }

    private static String request(String method, String params)
    {
        return "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"" + method + "\",\"params\":" + params + "}";
    }

    private static String meta(String version)
    {
        return "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" + version + "\",\"io.modelcontextprotocol/clientCapabilities\":{}}";
    }

    private static HttpResponse<String> post(String body, String... headers) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri("/mcp/now/mcp")).timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void assertRefused(HttpResponse<String> response, int code, String messagePart) throws Exception
    {
        String what = response.statusCode() + " " + response.body();
        assertEquals(400, response.statusCode(), what);
        JsonNode body = JSON.readTree(response.body());
        assertEquals(5, body.path("id").asInt(), what);
        assertEquals(code, body.path("error").path("code").asInt(), what);
        assertTrue(body.path("error").path("message").asText().contains(messagePart), what);
        assertTrue(upstream.seen.isEmpty(), "refused before the upstream: " + upstream.seen);
    }

    @Test
    void statelessCall_reachesTheUpstreamWithItsRoutingHeaders_andNoSession() throws Exception
    {
        HttpResponse<String> response = post(request("tools/call", "{\"name\":\"echo\",\"arguments\":{\"a\":1}," + meta("2026-07-28") + "}"),
            "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", " echo ", "Mcp-Param-A", "1", "Cookie", "c=1");

        assertEquals(200, response.statusCode(), response.body());
        assertEquals("complete", JSON.readTree(response.body()).path("result").path("resultType").asText(), response.body());
        assertFalse(response.headers().firstValue("Mcp-Session-Id").isPresent(), "no session for a stateless request");
        Map<String, String> headers = upstream.seen.peek();
        assertEquals("2026-07-28", headers.get("mcp-protocol-version"));
        assertEquals("tools/call", headers.get("mcp-method"));
        assertEquals("echo", headers.get("mcp-name"), "white space around a value is not part of it (RFC 9110, 5.5)");
        assertEquals("1", headers.get("mcp-param-a"));
        assertFalse(headers.containsKey("mcp-session-id"));
        assertFalse(headers.containsKey("cookie"), "the client's other headers stay at the gateway");
    }

    @Test
    void missingOrMismatchedHeaders_areRefusedWithHeaderMismatch() throws Exception
    {
        String call = request("tools/call", "{\"name\":\"echo\"," + meta("2026-07-28") + "}");
        assertRefused(post(call, "MCP-Protocol-Version", "2026-07-28", "Mcp-Name", "echo"), -32020, "Missing Mcp-Method");
        assertRefused(post(call, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list", "Mcp-Name", "echo"), -32020, "Mcp-Method");
        assertRefused(post(call, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "TOOLS/CALL", "Mcp-Name", "echo"), -32020, "Mcp-Method");
        assertRefused(post(call, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call"), -32020, "Missing Mcp-Name");
        // A policy reads Mcp-Name: a body that calls another tool must not get through.
        assertRefused(post(call, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "allowed"), -32020, "Mcp-Name");
        String list = request("tools/list", "{" + meta("2026-07-28") + "}");
        assertRefused(post(list, "Mcp-Method", "tools/list"), -32020, "Missing MCP-Protocol-Version");
        assertRefused(post(list, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list", "Mcp-Name", "x"), -32020, "Mcp-Name");
    }

    @Test
    void metaMissingOrDisagreeing_orAnUnknownRevision_isRefused() throws Exception
    {
        String[] headers = {"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"};
        assertRefused(post(request("tools/list", "{}"), headers), -32602, "_meta");
        assertRefused(post(request("tools/list", "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}"), headers), -32602, "_meta");
        assertRefused(post(request("tools/list", "{" + meta("2027-01-01") + "}"), headers), -32020, "does not match _meta");

        HttpResponse<String> unknown = post(request("tools/list", "{" + meta("2027-01-01") + "}"),
            "MCP-Protocol-Version", "2027-01-01", "Mcp-Method", "tools/list");
        assertRefused(unknown, -32022, "Unsupported protocol version");
        JsonNode data = JSON.readTree(unknown.body()).path("error").path("data");
        assertEquals("[\"2026-07-28\"]", data.path("supported").toString());
        assertEquals("2027-01-01", data.path("requested").asText());
    }

    /** Parsers differ on which of two equal keys counts: the gateway could read one tool and the server call the other. */
    @Test
    void aKeyTwiceInOneObject_isRefusedBeforeTheUpstream() throws Exception
    {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"allowed\",\"name\":\"denied\","
            + meta("2026-07-28") + "}}";
        HttpResponse<String> response = post(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "allowed");
        assertEquals(400, response.statusCode(), response.body());
        assertEquals(-32700, JSON.readTree(response.body()).path("error").path("code").asInt(), response.body());
        assertTrue(response.body().contains("a key appears twice"), response.body());
        assertTrue(upstream.seen.isEmpty());
    }

    @Test
    void batchOrResponse_isNotAStatelessRequest() throws Exception
    {
        String batch = "[" + request("tools/list", "{" + meta("2026-07-28") + "}") + "]";
        HttpResponse<String> response = post(batch, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list");
        assertEquals(400, response.statusCode(), response.body());
        assertEquals(-32600, JSON.readTree(response.body()).path("error").path("code").asInt(), response.body());
        assertTrue(upstream.seen.isEmpty());
    }

    /** A 2024-11-05 server cannot take a stateless request, and the gateway does not make it one: 501, before any upstream. */
    @Test
    void statelessRequestToAnSseServer_is501() throws Exception
    {
        HttpRequest request = HttpRequest.newBuilder(gateway.uri("/mcp/old/mcp")).timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json").header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", "tools/list")
            .POST(HttpRequest.BodyPublishers.ofString(request("tools/list", "{" + meta("2026-07-28") + "}"))).build();
        HttpResponse<String> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
        assertEquals(501, response.statusCode(), response.body());
        assertTrue(response.body().contains("HTTP+SSE"), response.body());
    }

    @Test
    void sessionEraRequests_stillTakeTheSessionPath() throws Exception
    {
        // An initialize names a 2025 revision and carries no _meta: the gateway relays it as before
        // and stores the session the upstream's answer would create (this one creates none).
        HttpResponse<String> response = post(request("initialize", "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}"),
            "MCP-Protocol-Version", "2025-11-25");
        assertEquals(200, response.statusCode(), response.body());
        assertEquals("2025-11-25", upstream.seen.peek().get("mcp-protocol-version"));
        assertFalse(upstream.seen.peek().containsKey("mcp-method"));
    }

    /** An upstream that records the headers of each request and answers each with an empty 2026-07-28 result. */
    private static final class Recorder
    {
        final Server server = new Server();
        final ServerConnector connector = new ServerConnector(server);
        final Queue<Map<String, String>> seen = new ConcurrentLinkedQueue<>();

        static Recorder start()
        {
            Recorder recorder = new Recorder();
            recorder.connector.setHost("127.0.0.1");
            recorder.server.addConnector(recorder.connector);
            recorder.server.setHandler(new Handler.Abstract.NonBlocking()
            {
                @Override
                public boolean handle(Request request, Response response, Callback callback)
                {
                    Map<String, String> headers = new TreeMap<>();
                    for (HttpField field : request.getHeaders())
                        headers.put(field.getLowerCaseName(), field.getValue());
                    recorder.seen.add(headers);
                    Content.Source.asStringAsync(request, StandardCharsets.UTF_8).thenAccept(body ->
                    {
                        ObjectNode answer = JSON.createObjectNode().put("jsonrpc", "2.0");
                        try
                        {
                            answer.set("id", JSON.readTree(body).path("id"));
                        }
                        catch (Exception x)
                        {
                            answer.putNull("id");
                        }
                        answer.putObject("result").put("resultType", "complete");
                        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
                        Content.Sink.write(response, true, answer.toString(), callback);
                    });
                    return true;
                }
            });
            try
            {
                recorder.server.start();
            }
            catch (Exception x)
            {
                throw new IllegalStateException(x);
            }
            return recorder;
        }

        URI url()
        {
            return URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/mcp");
        }
    }
}
