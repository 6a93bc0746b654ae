package io.sandgate.mcp;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.LocalResources;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.NodeScript;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The official TypeScript MCP SDK client ({@code @modelcontextprotocol/sdk}, pinned in
 * {@code src/test/mcp-ts/package-lock.json}), unmodified, against the same two-replica setup as
 * {@link McpRoutingIT}: a real redis-server shared by two gateways, a balancer in front of them,
 * and the Java-SDK {@link McpUpstream} behind them. {@code src/test/mcp-ts/client.mjs} runs
 * initialize, tools/list, 200 echo calls and a sampling round trip ({@code ask}), once over
 * {@code SSEClientTransport} (stream on replica A, every POST on replica B) and once over
 * {@code StreamableHTTPClientTransport} (GET stream on A, POSTs alternating between B and A).
 *
 * <p>Node and the locked packages come from {@code ./scripts/test.sh} ({@code npm ci --prefix
 * src/test/mcp-ts}); without them this test fails, naming that script, rather than skipping.
 */
@ExtendWith(WorkDirExtension.class)
class TypeScriptSdkClientIT extends McpTwoReplicas
{
    private static final Path CLIENT_DIR = MavenPaths.projectBase().resolve("src/test/mcp-ts");
    private static final String INSTALL_HINT =
        "run ./scripts/test.sh, which installs them (apt-get install nodejs npm; npm ci --prefix src/test/mcp-ts)";
    /** client.mjs ends itself after 60 s; this is the backstop. */
    private static final Duration PROCESS_TIMEOUT = Duration.ofSeconds(75);
    private static final int ECHO_CALLS = 200;
    private static final String SAMPLING_ANSWER = "forty-two";
    private static final String QUESTION = "meaning of life?";

    private static Path node;
    private static Path work;

    @BeforeAll
    static void start(WorkDir workDir) throws Exception
    {
        node = requireNodeAndPackages();
        work = workDir.getEmptyPathDir();
    }

    @BeforeEach
    void clear()
    {
        upstream.clearRecords();
    }

    @Test
    void sseClientTransport_streamOnA_postsOnB_sseUpstream() throws Exception
    {
        JsonNode result = runClient("sse", streamOnAPostsOnB.baseUrl() + "/mcp/legacy/sse");

        assertConversation(result, McpUpstream.TRANSPORT_SSE);
        List<String> routed = streamOnAPostsOnB.routed;
        List<String> gets = routed.stream().filter(r -> r.startsWith("GET ")).toList();
        List<String> posts = routed.stream().filter(r -> r.startsWith("POST ")).toList();
        assertEquals(List.of("GET /mcp/legacy/sse -> " + replicaA.port()), gets, routed::toString);
        // initialize, initialized, tools/list, 200 echo, ask, and the client's sampling answer.
        assertTrue(posts.size() >= ECHO_CALLS + 5, () -> posts.size() + " POSTs: " + routed);
        assertTrue(posts.stream().allMatch(r -> r.startsWith("POST /mcp/legacy/message") && r.endsWith("-> " + replicaB.port())),
            routed::toString);
        assertTrue(upstream.requestsTo(McpUpstream.SSE_PATH).size() >= 1, () -> upstream.requests.toString());
    }

    @Test
    void streamableHttpClientTransport_postsAlternateBetweenReplicas() throws Exception
    {
        JsonNode result = runClient("streamable", alternating.baseUrl() + "/mcp/stream/mcp");

        assertConversation(result, McpUpstream.TRANSPORT_STREAMABLE);
        assertTrue(result.path("terminated").asBoolean(), result::toPrettyString);
        List<String> routed = alternating.routed;
        assertTrue(routed.stream().anyMatch(r -> r.equals("GET /mcp/stream/mcp -> " + replicaA.port())), routed::toString);
        assertTrue(routed.stream().filter(r -> r.startsWith("GET ")).allMatch(r -> r.endsWith("-> " + replicaA.port())), routed::toString);
        List<String> posts = routed.stream().filter(r -> r.startsWith("POST ")).toList();
        assertTrue(posts.size() >= ECHO_CALLS + 5, () -> posts.size() + " POSTs: " + routed);
        assertTrue(posts.stream().anyMatch(r -> r.endsWith("-> " + replicaA.port())), routed::toString);
        assertTrue(posts.stream().anyMatch(r -> r.endsWith("-> " + replicaB.port())), routed::toString);
        assertTrue(routed.stream().anyMatch(r -> r.startsWith("DELETE /mcp/stream/mcp")), routed::toString);
        // Whichever replica took a POST, it reached the one upstream session made by initialize.
        assertEquals(1, upstream.callsOf("echo").stream().map(McpUpstream.Call::sessionId).distinct().count(),
            () -> upstream.callsOf("echo").stream().map(McpUpstream.Call::sessionId).collect(Collectors.toSet()).toString());
    }

    /** What the script reported, checked again here, and what the upstream saw. */
    private static void assertConversation(JsonNode result, String upstreamTransport)
    {
        assertTrue(result.path("ok").asBoolean(false), result::toPrettyString);
        assertEquals("sandgate-mcp-upstream", result.path("serverName").asText(), result::toPrettyString);
        assertEquals(McpUpstream.TOOL_NAMES.stream().sorted().toList(),
            toStrings(result.path("tools")), result::toPrettyString);
        assertEquals(ECHO_CALLS, result.path("echoMatched").asInt(), result::toPrettyString);
        assertEquals("client said: " + SAMPLING_ANSWER, result.path("ask").asText(), result::toPrettyString);
        assertEquals(List.of(QUESTION), toStrings(result.path("samplingQuestions")), result::toPrettyString);

        List<McpUpstream.Call> echoes = upstream.callsOf("echo");
        assertEquals(ECHO_CALLS, echoes.size(), () -> "echo calls upstream: " + echoes.size());
        for (int i = 0; i < ECHO_CALLS; i++)
        {
            assertEquals(upstreamTransport, echoes.get(i).transport());
            assertEquals("call " + i, echoes.get(i).arguments().get("text"));
        }
        assertEquals(1, upstream.callsOf("ask").size());
        assertEquals(1, upstream.samplingRequests.get());
        // The TypeScript client's sampling answer went back through the gateway to the upstream.
        assertEquals(SAMPLING_ANSWER, upstream.lastSamplingAnswer.get());
    }

    private static List<String> toStrings(JsonNode array)
    {
        List<String> values = new ArrayList<>();
        array.forEach(v -> values.add(v.asText()));
        return values;
    }

    /** Runs client.mjs; fails with its stderr and report unless it exits 0 with one JSON line. */
    private static JsonNode runClient(String transport, String url) throws Exception
    {
        // Kept under target/tests for a look after a failure.
        NodeScript.Ended ended = NodeScript.run(node, CLIENT_DIR, CLIENT_DIR.resolve("client.mjs"), work, "client-" + transport, PROCESS_TIMEOUT,
            transport, url);
        if (ended.exitCode() != 0 || ended.lastLine().isEmpty())
            fail("client.mjs " + transport + " " + url + " failed (exit " + ended.exitCode() + ")\n" + ended.output()
                + "--- replica A is port " + replicaA.port() + ", replica B is port " + replicaB.port() + "\n");
        System.out.println("client.mjs " + transport + ": " + ended.lastLine());
        return new ObjectMapper().readTree(ended.lastLine());
    }

    /** Fails (never skips) when node or the locked packages are missing, naming scripts/test.sh. */
    private static Path requireNodeAndPackages()
    {
        List<String> missing = new ArrayList<>();
        Path found = LocalResources.executable("node");
        if (found == null)
            missing.add("node (package nodejs)");
        for (String module : new String[]{"@modelcontextprotocol/sdk", "zod"})
        {
            if (!Files.isRegularFile(CLIENT_DIR.resolve("node_modules").resolve(module).resolve("package.json")))
                missing.add("node module " + module + " (npm ci in src/test/mcp-ts)");
        }
        if (!missing.isEmpty())
            fail("TypeScriptSdkClientIT runs the TypeScript MCP SDK client in Node, but this machine lacks: "
                + String.join(", ", missing) + ";\n" + INSTALL_HINT);
        return found;
    }

}
