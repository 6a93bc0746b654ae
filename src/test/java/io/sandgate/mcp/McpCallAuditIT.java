package io.sandgate.mcp;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LogCapture;
import io.sandgate.testing.McpClients;
import io.sandgate.testing.McpUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The audit log of tool calls ({@code mcp.tool.call}): one line per call, whatever the gateway
 * decided (allowed, denied by the tool policy, over quota), on each transport; and never a call's
 * arguments or its result, there or in any other line the gateway writes, even at DEBUG.
 */
class McpCallAuditIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final McpUpstream upstream = McpUpstream.start();
    private static final Map<String, Object> POLICY = Map.of("deny", List.of("progress"));
    private static final Map<String, Object> QUOTA = Map.of("calls", 2, "window", "1m");
    /** add's arguments and its answer: numbers no timestamp or id can hold by chance. */
    private static final String A = "1234567.0000001";
    private static final String B = "7654321.0000002";
    private static final String SUM = "8888888.0000003";

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("mcp.servers", List.of(
            Map.of("name", "streamable", "url", upstream.streamableUrl(), "transport", "streamable", "tools", POLICY, "quota", QUOTA),
            Map.of("name", "sse", "url", upstream.sseUrl(), "transport", "sse", "tools", POLICY, "quota", QUOTA),
            Map.of("name", "bridged", "url", upstream.sseUrl(), "transport", "sse", "tools", POLICY, "quota", QUOTA))));

    @AfterAll
    static void stop()
    {
        upstream.close();
    }

    private static McpSyncClient client(String server)
    {
        String base = gateway.uri("/mcp/" + server).toString();
        McpSyncClient client = server.equals("sse") ? McpClients.sse(base, "/sse") : McpClients.streamable(base, "/mcp");
        client.initialize();
        return client;
    }

    private static List<JsonNode> toolCalls(LogCapture audit, String server) throws Exception
    {
        List<JsonNode> lines = new ArrayList<>();
        for (String line : audit.lines())
        {
            JsonNode event = JSON.readTree(line);
            if ("mcp.tool.call".equals(event.path("event").asText()) && server.equals(event.path("server").asText()))
                lines.add(event);
        }
        return lines;
    }

    @ParameterizedTest
    @ValueSource(strings = {"streamable", "sse", "bridged"})
    void eachCall_isAuditedOnce_withItsOutcome_andNeverItsArgumentsOrResult(String server) throws Exception
    {
        String canary = "argument-canary-" + UUID.randomUUID();
        Logger gatewayLogs = (Logger)LoggerFactory.getLogger("io.sandgate");
        Level level = gatewayLogs.getLevel();
        gatewayLogs.setLevel(Level.DEBUG);
        try (LogCapture audit = LogCapture.auditLog(); LogCapture access = new LogCapture("sandgate"); LogCapture code = new LogCapture("io.sandgate");
             McpSyncClient client = client(server))
        {
            assertEquals("echo: " + canary, McpClients.text(McpClients.call(client, "echo", Map.of("text", canary))));
            assertEquals(SUM, McpClients.text(McpClients.call(client, "add", Map.of("a", new BigDecimal(A), "b", new BigDecimal(B)))));
            RuntimeException denied = assertThrows(RuntimeException.class, () -> McpClients.call(client, "progress", Map.of("steps", 1)));
            assertTrue(String.valueOf(denied.getMessage()).contains("not available"), String.valueOf(denied.getMessage()));
            RuntimeException over = assertThrows(RuntimeException.class, () -> McpClients.call(client, "echo", Map.of("text", canary + "-over")));
            assertTrue(String.valueOf(over.getMessage()).contains("quota"), String.valueOf(over.getMessage()));

            // A call that went is written when its exchange ends, after the client has its answer.
            await().untilAsserted(() -> assertEquals(4, toolCalls(audit, server).size(), audit.lines().toString()));
            List<JsonNode> calls = toolCalls(audit, server);
            // A refusal is written at once, a call that went once it ends: their order may differ from the calls'.
            assertEquals(List.of("add:allowed", "echo:allowed", "echo:over_quota", "progress:denied"),
                calls.stream().map(call -> call.path("tool").asText() + ":" + call.path("outcome").asText()).sorted().toList());
            for (JsonNode call : calls)
            {
                assertEquals("127.0.0.1", call.path("caller").asText(), call.toString());
                assertTrue(call.path("latencyMs").isIntegralNumber() && call.path("latencyMs").asLong() >= 0, call.toString());
                assertFalse(call.has("arguments") || call.has("result"), call.toString());
            }
            assertEquals(1, upstream.callsOf("echo").stream().filter(call -> String.valueOf(call.arguments().get("text")).startsWith(canary)).count(),
                "the refused calls never reached the server");

            assertFalse(access.lines().isEmpty(), "the access log was read too");
            List<String> everything = new ArrayList<>(audit.lines());
            everything.addAll(access.lines());
            everything.addAll(code.lines());
            for (String line : everything)
            {
                for (String secret : List.of(canary, A, B, SUM))
                    assertFalse(line.contains(secret), "a call's arguments or result in a log line: " + line);
            }
        }
        finally
        {
            gatewayLogs.setLevel(level);
        }
        assertEquals(2, counted(server, "allowed"));
        assertEquals(1, counted(server, "denied"));
        assertEquals(1, counted(server, "over_quota"));
    }

    private static double counted(String server, String outcome)
    {
        return gateway.sandgate().metrics().get("sandgate.mcp.tool.calls").tag("server", server).tag("outcome", outcome).counter().count();
    }
}
