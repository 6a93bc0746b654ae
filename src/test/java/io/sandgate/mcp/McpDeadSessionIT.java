package io.sandgate.mcp;

import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import com.sun.net.httpserver.HttpServer;
import io.sandgate.testing.GatewayExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An upstream that forgets a session (as one does when it restarts) answers 404 for it: the
 * gateway ends the session everywhere, tells the client 404, and counts it as dead, which is what
 * the dashboard's MCP chart and the SandgateMcpSessionsDead alert read.
 */
class McpDeadSessionIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private HttpServer forgetful;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("mcp.servers", List.of(Map.of("name", "f", "url", "http://127.0.0.1:" + forgetful.getAddress().getPort() + "/mcp"))));

    @BeforeEach
    void start() throws Exception
    {
        // Answers initialize with a session of its own, and 404 to anything after it.
        forgetful = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        forgetful.createContext("/mcp", exchange ->
        {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            if (body.contains("\"initialize\""))
            {
                byte[] answer = ("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                    + "\"serverInfo\":{\"name\":\"forgetful\",\"version\":\"1\"}}}").getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.getResponseHeaders().add("Mcp-Session-Id", "upstream-1");
                exchange.sendResponseHeaders(200, answer.length);
                exchange.getResponseBody().write(answer);
            }
            else
            {
                exchange.sendResponseHeaders(404, -1);
            }
            exchange.close();
        });
        forgetful.start();
    }

    @AfterEach
    void stop()
    {
        forgetful.stop(0);
    }

    private HttpResponse<String> post(String session, String body) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri("/mcp/f/mcp")).header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream").header("MCP-Protocol-Version", "2025-06-18")
            .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null)
            request.header("Mcp-Session-Id", session);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aSessionTheUpstreamForgot_endsWith404_andIsCountedDead() throws Exception
    {
        HttpResponse<String> initialized = post(null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
            + "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
        assertEquals(200, initialized.statusCode(), initialized.body());
        String session = initialized.headers().firstValue("Mcp-Session-Id").orElseThrow();
        assertTrue(gateway.sandgate().store().sessions().find(session).isPresent());

        HttpResponse<String> forgotten = post(session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
        assertEquals(404, forgotten.statusCode(), forgotten.body());
        assertTrue(gateway.sandgate().store().sessions().find(session).isEmpty(), "ended on every replica");
        assertEquals(1.0, gateway.sandgate().metrics().find("sandgate.mcp.sessions.dead").counter().count());
        assertEquals(404, post(session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}").statusCode(), "and stays ended");
        assertEquals(1.0, gateway.sandgate().metrics().find("sandgate.mcp.sessions.dead").counter().count(), "counted once");
    }
}
