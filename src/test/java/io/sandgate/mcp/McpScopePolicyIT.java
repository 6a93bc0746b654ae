package io.sandgate.mcp;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.sandgate.testing.AuthorizationServerDouble;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpClients;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.ReferenceMcpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tools.scopes}: what a caller may list and call is what the scopes of its token grant, on
 * every path a call takes through the gateway: a 2025 Streamable HTTP session, the HTTP+SSE
 * transport (the list's answer arrives on the stream), the SSE bridge, a 2026-07-28 request to a
 * stateless server, and the stateless bridge (a session-era client in front of that server). A tool
 * not granted is missing from the list and its call is answered as a call of a tool the server
 * lacks, before the server sees it. The clients are the MCP Java SDK's, but for 2026-07-28.
 */
class McpScopePolicyIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PUBLIC = "https://gw.example";
    private static final McpUpstream javaSdk = McpUpstream.start();
    private static final ReferenceMcpServer reference = ReferenceMcpServer.start();
    private static final AuthorizationServerDouble as = AuthorizationServerDouble.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .set("mcp.auth", Map.of("issuers", List.of(as.issuer()), "jwks-url", as.jwksUri(), "resource-url", PUBLIC))
        .set("mcp.servers", List.of(
            server("stream", javaSdk.streamableUrl(), "streamable", "e*"),
            server("legacy", javaSdk.sseUrl(), "sse", "e*"),
            server("bridged", javaSdk.sseUrl(), "sse", "e*"),
            server("modern", reference.url(), "stateless", "test_simple_*"))));

    private static Map<String, Object> server(String name, String url, String transport, String readable)
    {
        return Map.of("name", name, "url", url, "transport", transport,
            "tools", Map.of("scopes", Map.of("mcp:admin", List.of("*"), "mcp:read", List.of(readable))));
    }

    @AfterAll
    static void stop() throws Exception
    {
        Fixtures.closeInOrder(javaSdk, reference, as);
    }

    /** Each way a client's calls reach a server through the gateway, with the server's tools: one {@code mcp:read} grants, one it does not. */
    enum Route
    {
        STREAMABLE("stream", "echo", "add"),
        LEGACY_SSE("legacy", "echo", "add"),
        SSE_BRIDGE("bridged", "echo", "add"),
        STATELESS("modern", "test_simple_text", "test_image_content"),
        STATELESS_BRIDGE("modern", "test_simple_text", "test_image_content");

        final String server;
        final String readable;
        final String adminOnly;

        Route(String server, String readable, String adminOnly)
        {
            this.server = server;
            this.readable = readable;
            this.adminOnly = adminOnly;
        }
    }

    /** A client of the route, holding a token with the scope given. */
    private interface Client extends AutoCloseable
    {
        List<String> tools() throws Exception;

        /** Calls the tool; null when it went, else the refusal's JSON-RPC code and message. */
        String call(String tool) throws Exception;

        @Override
        void close();
    }

    private static Client client(Route route, String scope)
    {
        String token = as.token().subject("agent").audience(PUBLIC + "/mcp/" + route.server).scope(scope).sign();
        if (route == Route.STATELESS)
            return new StatelessClient(new BearerClient(route.server, token));
        String base = gateway.uri("/mcp/" + route.server).toString();
        McpClients.Options options = McpClients.options().header("Authorization", "Bearer " + token);
        McpSyncClient sdk = route == Route.LEGACY_SSE ? McpClients.sse(base, "/sse", options) : McpClients.streamable(base, "/mcp", options);
        sdk.initialize();
        return new SdkClient(sdk);
    }

    private record SdkClient(McpSyncClient sdk) implements Client
    {
        @Override
        public List<String> tools()
        {
            return sdk.listTools().tools().stream().map(Tool::name).sorted().toList();
        }

        @Override
        public String call(String tool)
        {
            try
            {
                CallToolResult result = McpClients.call(sdk, tool, Map.of("text", "hi", "a", 1, "b", 2));
                assertFalse(Boolean.TRUE.equals(result.isError()), result.toString());
                return null;
            }
            catch (RuntimeException x)
            {
                for (Throwable cause = x; cause != null; cause = cause.getCause())
                {
                    if (cause instanceof McpError error)
                        return error.getJsonRpcError().code() + " " + error.getJsonRpcError().message();
                }
                throw x;
            }
        }

        @Override
        public void close()
        {
            sdk.closeGracefully();
        }
    }

    private record StatelessClient(BearerClient http) implements Client
    {
        @Override
        public List<String> tools() throws Exception
        {
            HttpResponse<String> answer = http.stateless(gateway, 1, "tools/list", null, null);
            assertEquals(200, answer.statusCode(), answer.body());
            List<String> tools = new ArrayList<>();
            JSON.readTree(answer.body()).path("result").path("tools").forEach(tool -> tools.add(tool.path("name").asText()));
            return tools.stream().sorted().toList();
        }

        @Override
        public String call(String tool) throws Exception
        {
            HttpResponse<String> answer = http.stateless(gateway, 2, "tools/call", tool, "{}");
            JsonNode body = JSON.readTree(answer.body());
            if (body.has("result"))
            {
                assertFalse(body.path("result").path("isError").asBoolean(), answer.body());
                return null;
            }
            return body.path("error").path("code").asInt() + " " + body.path("error").path("message").asText();
        }

        @Override
        public void close()
        {
        }
    }

    /** Tool calls that reached the route's server so far. */
    private static int callsReaching(Route route) throws Exception
    {
        if (!route.server.equals("modern"))
            return javaSdk.toolCalls.get();
        int calls = 0;
        for (JsonNode request : reference.observed())
        {
            if ("tools/call".equals(request.path("mcpMethod").asText()))
                calls++;
        }
        return calls;
    }

    private static void assertRefusedBeforeTheServer(Route route, Client client, String tool) throws Exception
    {
        int before = callsReaching(route);
        String refusal = client.call(tool);
        assertTrue(refusal != null && refusal.startsWith(JsonRpcErrors.INVALID_PARAMS + " ") && refusal.contains("not available"), tool + ": " + refusal);
        assertEquals(before, callsReaching(route), "the call of " + tool + " reached the server");
    }

    /** A client learns from the metadata which scopes to ask for. */
    @Test
    void metadata_namesTheScopesOfTheToolRules() throws Exception
    {
        HttpResponse<String> metadata = HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri("/.well-known/oauth-protected-resource/mcp/stream/mcp"))
            .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, metadata.statusCode(), metadata.body());
        List<String> scopes = new ArrayList<>();
        JSON.readTree(metadata.body()).path("scopes_supported").forEach(scope -> scopes.add(scope.asText()));
        assertEquals(List.of("mcp:admin", "mcp:read"), scopes.stream().sorted().toList(), metadata.body());
    }

    @ParameterizedTest
    @EnumSource(Route.class)
    void readScope_listsAndCallsOnlyItsTools(Route route) throws Exception
    {
        try (Client client = client(route, "mcp:read"))
        {
            assertEquals(List.of(route.readable), client.tools());
            assertEquals(null, client.call(route.readable));
            assertRefusedBeforeTheServer(route, client, route.adminOnly);
        }
    }

    @ParameterizedTest
    @EnumSource(Route.class)
    void adminScope_listsAndCallsEveryTool(Route route) throws Exception
    {
        try (Client client = client(route, "mcp:admin"))
        {
            List<String> tools = client.tools();
            if (route.server.equals("modern"))
                assertTrue(tools.size() > 2 && tools.containsAll(List.of(route.readable, route.adminOnly)), tools.toString());
            else
                assertEquals(McpUpstream.TOOL_NAMES.stream().sorted().toList(), tools);
            assertEquals(null, client.call(route.readable));
            assertEquals(null, client.call(route.adminOnly));
        }
    }

    @ParameterizedTest
    @EnumSource(Route.class)
    void neitherScope_listsNothing_andCallsNothing(Route route) throws Exception
    {
        try (Client client = client(route, "mcp:other profile"))
        {
            assertEquals(List.of(), client.tools());
            assertRefusedBeforeTheServer(route, client, route.readable);
            assertRefusedBeforeTheServer(route, client, route.adminOnly);
        }
    }
}
