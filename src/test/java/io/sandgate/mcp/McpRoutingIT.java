package io.sandgate.mcp;

import java.util.List;
import java.util.Map;

import io.modelcontextprotocol.client.McpSyncClient;
import io.sandgate.testing.Balancer;
import io.sandgate.testing.McpClients;
import io.sandgate.testing.McpUpstream;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * MCP sessions across two gateway replicas sharing a real redis-server, with the official MCP Java
 * SDK on both ends: a balancer sends each client's stream to replica A and its POSTs to replica B
 * (or alternates them), as a load balancer without affinity would.
 */
class McpRoutingIT extends McpTwoReplicas
{
    /** initialize, tools/list, 200 tools/call in a row, and a sampling round trip. */
    private static void conversation(McpSyncClient client, McpClients.Options options, int calls)
    {
        client.initialize();
        assertEquals(McpUpstream.TOOL_NAMES.stream().sorted().toList(),
            client.listTools().tools().stream().map(t -> t.name()).sorted().toList());
        for (int i = 0; i < calls; i++)
            assertEquals("echo: call " + i, McpClients.text(McpClients.call(client, "echo", Map.of("text", "call " + i))));
        String asked = McpClients.text(McpClients.call(client, "ask", Map.of("question", "meaning of life?")));
        assertEquals("client said: " + McpClients.SAMPLING_ANSWER, asked);
        assertTrue(options.received().samplingQuestions.contains("meaning of life?"), options.received().samplingQuestions.toString());
        assertEquals(McpClients.SAMPLING_ANSWER, upstream.lastSamplingAnswer.get());
    }

    private static void assertSplit(Balancer balancer, String streamPath)
    {
        List<String> routed = balancer.routed;
        assertTrue(routed.stream().anyMatch(r -> r.startsWith("GET " + streamPath) && r.endsWith("-> " + replicaA.port())), routed.toString());
        assertTrue(routed.stream().filter(r -> r.startsWith("POST")).allMatch(r -> r.endsWith("-> " + replicaB.port())), routed.toString());
    }

    @Test
    void sseClient_streamOnA_postsOnB_sseUpstream() throws Exception
    {
        McpClients.Options options = McpClients.options();
        try (McpSyncClient client = McpClients.sse(streamOnAPostsOnB.baseUrl(), "/mcp/legacy/sse", options))
        {
            conversation(client, options, 200);
        }
        assertSplit(streamOnAPostsOnB, "/mcp/legacy/sse");
        assertTrue(upstream.requestsTo("/sse").size() >= 1);
    }

    @Test
    void streamableClient_postsAlternateBetweenReplicas() throws Exception
    {
        McpClients.Options options = McpClients.options();
        try (McpSyncClient client = McpClients.streamable(alternating.baseUrl(), "/mcp/stream/mcp", options))
        {
            conversation(client, options, 200);
            McpClients.callWithProgress(client, "progress", Map.of("steps", 3), "p-1");
        }
        List<String> posts = alternating.routed.stream().filter(r -> r.startsWith("POST")).toList();
        assertTrue(posts.stream().anyMatch(r -> r.endsWith("-> " + replicaA.port())) && posts.stream().anyMatch(r -> r.endsWith("-> " + replicaB.port())), posts.toString());
    }
}
