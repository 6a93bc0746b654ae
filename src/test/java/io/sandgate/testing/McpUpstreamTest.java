package io.sandgate.testing;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.InitializeResult;
import io.modelcontextprotocol.spec.McpSchema.LoggingMessageNotification;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Proves {@link McpUpstream} and {@link McpClients} with SDK clients talking straight to the
 * upstream, over each transport, before any gateway sits between them.
 */
class McpUpstreamTest
{
    enum Transport
    {
        STREAMABLE(McpUpstream.TRANSPORT_STREAMABLE, McpUpstream.STREAMABLE_PATH),
        SSE(McpUpstream.TRANSPORT_SSE, McpUpstream.SSE_PATH);

        final String label;
        final String path;

        Transport(String label, String path)
        {
            this.label = label;
            this.path = path;
        }

        McpSyncClient client(McpUpstream upstream, McpClients.Options options)
        {
            return this == STREAMABLE
                    ? McpClients.streamable(upstream.baseUrl(), path, options)
                    : McpClients.sse(upstream.baseUrl(), path, options);
        }
    }

    private McpUpstream upstream;
    private McpSyncClient client;

    @BeforeEach
    void setUp()
    {
        upstream = McpUpstream.start();
    }

    @AfterEach
    void tearDown()
    {
        if (client != null)
        {
            // Graceful: the Streamable client's DELETE completes before the upstream stops
            // (close() would send it in the background and log a refused connection).
            client.closeGracefully();
        }
        upstream.close();
    }

    private McpSyncClient connect(Transport transport, McpClients.Options options)
    {
        client = transport.client(upstream, options);
        InitializeResult init = client.initialize();
        assertEquals("sandgate-mcp-upstream", init.serverInfo().name());
        return client;
    }

    @Test
    void urlsPointAtLoopbackEndpoints()
    {
        assertTrue(upstream.port() > 0);
        assertEquals("http://127.0.0.1:" + upstream.port() + "/mcp", upstream.streamableUrl());
        assertEquals("http://127.0.0.1:" + upstream.port() + "/sse", upstream.sseUrl());
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void initializeNegotiatesTheTransportsProtocolAndListsTheFourTools(Transport transport)
    {
        McpSyncClient c = connect(transport, McpClients.options());

        String version = c.getCurrentInitializationResult().protocolVersion();
        if (transport == Transport.SSE)
        {
            assertEquals("2024-11-05", version);
        }
        else
        {
            assertTrue(version.compareTo("2025-03-26") >= 0, version);
        }
        Set<String> names = c.listTools().tools().stream().map(Tool::name).collect(Collectors.toSet());
        assertEquals(new HashSet<>(McpUpstream.TOOL_NAMES), names);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void echoAndAddAnswer(Transport transport)
    {
        McpSyncClient c = connect(transport, McpClients.options());

        CallToolResult echo = McpClients.call(c, "echo", Map.of("text", "hello"));
        assertFalse(Boolean.TRUE.equals(echo.isError()));
        assertEquals("echo: hello", McpClients.text(echo));
        assertEquals("5", McpClients.text(McpClients.call(c, "add", Map.of("a", 2, "b", 3))));
        assertEquals("0.3", McpClients.text(McpClients.call(c, "add", Map.of("a", 0.1, "b", 0.2))));

        assertEquals(3, upstream.toolCalls.get());
        McpUpstream.Call first = upstream.calls.get(0);
        assertEquals(transport.label, first.transport());
        assertEquals("echo", first.tool());
        assertEquals("hello", first.arguments().get("text"));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void twentyCallsInARowShareOneSession(Transport transport)
    {
        McpSyncClient c = connect(transport, McpClients.options());

        for (int i = 0; i < 20; i++)
        {
            assertEquals("echo: " + i, McpClients.text(McpClients.call(c, "echo", Map.of("text", "" + i))));
        }

        assertEquals(20, upstream.toolCalls.get());
        Set<String> sessions = upstream.calls.stream().map(McpUpstream.Call::sessionId).collect(Collectors.toSet());
        assertEquals(1, sessions.size(), sessions.toString());
        assertNotNull(sessions.iterator().next());
        assertEquals(transport == Transport.STREAMABLE ? sessions : Set.of(), upstream.streamableSessions);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void askMakesASamplingRoundTripThroughTheClient(Transport transport)
    {
        McpClients.Options options = McpClients.options();
        McpSyncClient c = connect(transport, options);

        CallToolResult result = McpClients.call(c, "ask", Map.of("question", "meaning of life?"));

        assertEquals("client said: forty-two", McpClients.text(result));
        assertEquals(List.of("meaning of life?"), options.received().samplingQuestions);
        assertEquals(1, upstream.samplingRequests.get());
        assertEquals("forty-two", upstream.lastSamplingAnswer.get());
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void progressSendsNotificationsTheClientReceives(Transport transport)
    {
        McpClients.Options options = McpClients.options();
        McpSyncClient c = connect(transport, options);

        CallToolResult result = McpClients.callWithProgress(c, "progress", Map.of("steps", 3), "tok-1");

        assertEquals("done", McpClients.text(result));
        assertEquals(6, upstream.notificationsSent.get());
        await().atMost(Duration.ofSeconds(5)).until(() ->
                options.received().logs.size() == 3 && options.received().progress.size() == 3);
        // The wire order is step 1, 2, 3, but the SDK client may hand notifications to the
        // consumers out of order (seen over SSE), so compare them sorted.
        assertEquals(List.of("step 1/3", "step 2/3", "step 3/3"),
                options.received().logs.stream().map(LoggingMessageNotification::data).sorted().toList());
        assertEquals(List.of(1.0, 2.0, 3.0),
                options.received().progress.stream().map(ProgressNotification::progress).sorted().toList());
        assertTrue(options.received().progress.stream().allMatch(p -> "tok-1".equals(p.progressToken())));

        // Without a progress token the tool still logs, but sends no progress.
        assertEquals("done", McpClients.text(McpClients.call(c, "progress", Map.of("steps", 2))));
        await().atMost(Duration.ofSeconds(5)).until(() -> options.received().logs.size() == 5);
        assertEquals(3, options.received().progress.size());
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void customHeadersReachTheUpstreamOnEveryRequest(Transport transport)
    {
        McpSyncClient c = connect(transport,
                McpClients.options().header("Origin", "http://agent.example").header("X-Test", "1"));
        McpClients.call(c, "echo", Map.of("text", "x"));

        List<McpUpstream.Seen> seen = upstream.requests;
        assertFalse(seen.isEmpty());
        for (McpUpstream.Seen request : seen)
        {
            assertEquals("http://agent.example", request.header("Origin"), request.toString());
            assertEquals("1", request.header("x-test"), request.toString());
        }
        if (transport == Transport.SSE)
        {
            assertEquals("GET", upstream.requestsTo("/sse").get(0).method());
            List<McpUpstream.Seen> posts = upstream.requestsTo("/message");
            assertFalse(posts.isEmpty());
            assertTrue(posts.stream().allMatch(p -> p.pathAndQuery().startsWith("/message?sessionId=")),
                    posts.toString());
        }
        else
        {
            List<McpUpstream.Seen> mcp = upstream.requestsTo("/mcp");
            assertTrue(mcp.stream().anyMatch(r -> r.method().equals("POST")));
            // After initialize, every request carries the session the server handed out.
            assertTrue(mcp.stream().skip(1).allMatch(r -> r.header("Mcp-Session-Id") != null), mcp.toString());
        }
    }

    @Test
    void closeIsQuickWhileClientsStillHoldStreamsOpen()
    {
        McpSyncClient sse = McpClients.sse(upstream.baseUrl(), McpUpstream.SSE_PATH);
        McpSyncClient streamable = McpClients.streamable(upstream.baseUrl(), McpUpstream.STREAMABLE_PATH);
        try
        {
            sse.initialize();
            streamable.initialize();
            // The streamable client's GET stream is opened asynchronously after initialize.
            await().atMost(Duration.ofSeconds(5)).until(() -> upstream.requestsTo("/mcp").stream()
                    .anyMatch(r -> r.method().equals("GET")));

            assertTimeoutPreemptively(Duration.ofSeconds(3), upstream::close);
        }
        finally
        {
            // The Streamable client's DELETE now meets a closed port: the SDK logs one WARN
            // ("Error during asynchronous close"), expected here.
            sse.close();
            streamable.close();
        }
    }

    @Test
    void clientsAcceptABaseUrlWithAPathPrefixAndARelativeEndpoint()
    {
        // A base path is kept and a missing leading slash is added: "<base>/" + "mcp".
        client = McpClients.streamable(upstream.baseUrl() + "/", "mcp");
        client.initialize();
        assertEquals("echo: ok", McpClients.text(McpClients.call(client, "echo", Map.of("text", "ok"))));
    }
}
