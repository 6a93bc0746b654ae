package io.sandgate.mcp;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tool policy judges the very call the server reads, on every path: a body with more than one
 * JSON value, or a call that names its tool with anything but a string, is refused before it is
 * relayed, since a server could read another call than the gateway (the last value, say, or
 * {@code ["add"]} as {@code add}) under a policy that saw an allowed one or none.
 */
class McpToolCallIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final McpUpstream upstream = McpUpstream.start();
    /** Deny-only: a name read as "" would pass it. */
    private static final Map<String, List<String>> DENY_ADD = Map.of("deny", List.of("add"));
    private static final String STATELESS_META = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}},";

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .set("mcp.servers", List.of(
            Map.of("name", "direct", "url", upstream.streamableUrl(), "transport", "streamable", "tools", DENY_ADD),
            Map.of("name", "bridged", "url", upstream.sseUrl(), "transport", "sse", "tools", DENY_ADD))));

    @AfterAll
    static void stop()
    {
        upstream.close();
    }

    /** A JSON-RPC error as the client got it: on the POST's answer, or on the session's stream. */
    private record Refusal(int status, JsonNode message)
    {
        int code()
        {
            return message.path("error").path("code").asInt();
        }
    }

    /** Each way a client's call reaches a server through the gateway. */
    enum Route
    {
        /** Streamable HTTP, session era, to a Streamable HTTP server. */
        STREAMABLE,
        /** HTTP+SSE (2024-11-05) client: answers to a message POST come on the session's stream. */
        LEGACY_SSE,
        /** 2026-07-28, no session. */
        STATELESS,
        /** Streamable HTTP client to an HTTP+SSE server. */
        SSE_BRIDGE;

        String call(int id, String nameJson)
        {
            return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{" + (this == STATELESS ? STATELESS_META : "")
                + "\"name\":" + nameJson + ",\"arguments\":{\"a\":1,\"b\":2,\"text\":\"x\"}}}";
        }
    }

    /** A session of the route's client, open for a test. */
    private static final class Client
    {
        private final Route route;
        private RawStreamableClient streamable;
        private String session;
        private RawSseClient.Stream stream;

        Client(Route route) throws Exception
        {
            this.route = route;
            switch (route)
            {
                case STREAMABLE, STATELESS -> streamable = new RawStreamableClient(gateway, "direct");
                case SSE_BRIDGE -> streamable = new RawStreamableClient(gateway, "bridged");
                case LEGACY_SSE -> { }
            }
            if (route == Route.LEGACY_SSE)
            {
                RawSseClient sse = new RawSseClient("direct");
                stream = sse.stream(gateway, "", null);
                session = sse.openSession(stream, gateway);
            }
            else if (route != Route.STATELESS)
            {
                session = streamable.openSession();
            }
        }

        /** Sends the body as it is; the refusal it got, wherever it came. */
        Refusal send(String body, String mcpName) throws Exception
        {
            HttpResponse<String> response = switch (route)
            {
                case STREAMABLE, SSE_BRIDGE -> streamable.post(session, body, "MCP-Protocol-Version", "2025-11-25");
                case STATELESS -> mcpName == null
                    ? streamable.post(null, body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call")
                    : streamable.post(null, body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", mcpName);
                case LEGACY_SSE -> HTTP.send(HttpRequest.newBuilder(gateway.uri("/mcp/direct/message?sessionId=" + session)).timeout(Duration.ofSeconds(10))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            };
            if (route == Route.LEGACY_SSE && response.statusCode() == 202)
            {
                for (RawSseClient.Event event = stream.next(); event.name() != null; event = stream.next())
                {
                    if (event.data().contains("\"error\""))
                        return new Refusal(202, JSON.readTree(event.data()));
                }
                throw new AssertionError("the stream ended without an answer to " + body);
            }
            return new Refusal(response.statusCode(), JSON.readTree(response.body()));
        }
    }

    private static long postsUpstream()
    {
        return upstream.requests.stream().filter(seen -> seen.method().equals("POST")).count();
    }

    /** Sends the body and asserts the refusal's code, and that nothing more reached the server. */
    private static Refusal assertRefused(Client client, String body, String mcpName, int code) throws Exception
    {
        long before = postsUpstream();
        Refusal refusal = client.send(body, mcpName);
        assertEquals(code, refusal.code(), body + " -> " + refusal);
        assertEquals(before, postsUpstream(), "relayed: " + body);
        return refusal;
    }

    @ParameterizedTest
    @EnumSource(Route.class)
    void trailingData_isAParseError_andNotRelayed(Route route) throws Exception
    {
        Client client = new Client(route);
        String allowed = route.call(5, "\"echo\"");
        String hidden = route.call(6, "\"add\"");
        for (String body : List.of(allowed + hidden, allowed + "\n" + hidden, allowed + " [" + hidden + "]", "[" + allowed + "]" + hidden, allowed + " x"))
        {
            Refusal refusal = assertRefused(client, body, "echo", JsonRpcErrors.PARSE_ERROR);
            assertEquals(400, refusal.status(), body);
        }
    }

    @ParameterizedTest
    @EnumSource(Route.class)
    void toolNameThatIsNotAString_isInvalidParams_andNotRelayed(Route route) throws Exception
    {
        Client client = new Client(route);
        for (String name : List.of("[\"add\"]", "1", "{\"name\":\"add\"}", "null", "true"))
        {
            Refusal refusal = assertRefused(client, route.call(7, name), null, JsonRpcErrors.INVALID_PARAMS);
            assertEquals(7, refusal.message().path("id").asInt(), refusal.toString());
            assertTrue(refusal.message().path("error").path("message").asText().contains("string"), refusal.toString());
        }
        String noName = route.call(8, "\"echo\"").replace("\"name\":\"echo\",", "");
        assertRefused(client, noName, null, JsonRpcErrors.INVALID_PARAMS);
        if (route != Route.STATELESS)
        {
            // A batch is refused whole, whatever else it holds.
            String batch = "[" + route.call(9, "\"echo\"") + "," + route.call(10, "[\"add\"]") + "]";
            assertEquals(400, assertRefused(client, batch, null, JsonRpcErrors.INVALID_PARAMS).status());
        }
    }
}
