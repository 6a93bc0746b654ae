package io.sandgate.mcp;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LocalResources;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.NodeScript;
import io.sandgate.testing.ReferenceMcpServer;
import io.sandgate.testing.RoundRobinReplicas;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The TypeScript SDK 2.x client ({@code @modelcontextprotocol/client}, {@code src/test/mcp-ts/client2.mjs})
 * through the gateway, choosing the revision itself: against the 2.x reference server it may speak
 * 2026-07-28, against the MCP Java SDK server ({@link McpUpstream}, 2025 era) it must fall back to
 * a session. Each through one gateway, and through two replicas sharing a real Redis behind a
 * front that alternates every request between them.
 */
class TypeScriptSdk2ClientIT
{
    private static final Path CLIENT = ReferenceMcpServer.PACKAGES_DIR.resolve("client2.mjs");
    private static final Duration PROCESS_TIMEOUT = Duration.ofSeconds(45);
    private static final List<String> PROGRESS_STEPS = List.of("0", "50", "100");

    private static final ReferenceMcpServer reference = ReferenceMcpServer.start();
    private static final McpUpstream javaSdk = McpUpstream.start();
    private static RoundRobinReplicas replicas;

    private static void servers(GatewayConfig config)
    {
        config.set("mcp.servers", List.of(
            Map.of("name", "reference", "url", reference.url(), "transport", "streamable"),
            Map.of("name", "java", "url", javaSdk.streamableUrl(), "transport", "streamable")));
    }

    @RegisterExtension
    static final GatewayExtension single = new GatewayExtension(TypeScriptSdk2ClientIT::servers);

    @RegisterExtension
    static final GatewayExtension twoReplicas = GatewayExtension.manual(TypeScriptSdk2ClientIT::servers);

    @BeforeAll
    static void startReplicas() throws Exception
    {
        replicas = RoundRobinReplicas.start(twoReplicas);
    }

    @AfterAll
    static void stopAll() throws Exception
    {
        Fixtures.closeInOrder(replicas, reference, javaSdk);
    }

    private static String base(String target)
    {
        return target.equals("one gateway") ? single.uri().toString() : replicas.baseUrl();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"one gateway", "two replicas, round robin"})
    void referenceServer_clientNegotiatesModernRevision(String target) throws Exception
    {
        assertReferenceConversation(runClient(base(target) + "/mcp/reference/mcp", "test_tool_with_progress", "{}"));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"one gateway", "two replicas, round robin"})
    void javaSdkServer_clientFallsBackToSession(String target) throws Exception
    {
        assertJavaSdkConversation(runClient(base(target) + "/mcp/java/mcp", "progress", "{\"steps\":3}"));
    }

    /** What the client reports, and the revision the reference server saw on each request. */
    private static void assertReferenceConversation(JsonNode result) throws Exception
    {
        assertEquals("2026-07-28", result.path("protocolVersion").asText(), result::toPrettyString);
        assertEquals("sandgate-reference-server", result.path("serverName").asText(), result::toPrettyString);
        assertTrue(toStrings(result.path("tools")).contains("test_tool_with_progress"), result::toPrettyString);
        assertEquals(PROGRESS_STEPS, toStrings(result.path("progress")), result::toPrettyString);
        assertEquals("Progress tool finished", result.path("toolText").asText(), result::toPrettyString);
        assertEquals(List.of("test://static-binary", "test://static-text", "test://watched-resource"), toStrings(result.path("resources")),
            result::toPrettyString);
        assertEquals("This is the content of the static text resource.", result.path("resourceText").asText(), result::toPrettyString);
        assertEquals("This is a simple prompt for testing.", result.path("promptText").asText(), result::toPrettyString);

        // The last requests the upstream saw are this client's: stateless, each with the revision
        // and method headers the gateway relayed.
        List<JsonNode> seen = new ArrayList<>();
        reference.observed().forEach(seen::add);
        List<JsonNode> ours = seen.subList(seen.size() - 7, seen.size());
        List<String> methods = ours.stream().map(r -> r.path("mcpMethod").asText()).toList();
        assertEquals(List.of("server/discover", "tools/list", "tools/call", "resources/list", "resources/read", "prompts/list", "prompts/get"),
            methods, seen::toString);
        assertTrue(ours.stream().allMatch(r -> "2026-07-28".equals(r.path("protocolVersion").asText()) && !r.path("session").asBoolean()),
            seen::toString);
    }

    private static void assertJavaSdkConversation(JsonNode result)
    {
        assertTrue(result.path("protocolVersion").asText().startsWith("2025-"), result::toPrettyString);
        assertEquals("sandgate-mcp-upstream", result.path("serverName").asText(), result::toPrettyString);
        assertEquals(McpUpstream.TOOL_NAMES.stream().sorted().toList(), toStrings(result.path("tools")), result::toPrettyString);
        assertEquals(3, result.path("progress").size(), result::toPrettyString);
    }

    private static List<String> toStrings(JsonNode array)
    {
        List<String> values = new ArrayList<>();
        array.forEach(v -> values.add(v.asText()));
        return values;
    }

    /** Runs client2.mjs; fails with its output unless it exits 0 with a JSON line that says ok. */
    private static JsonNode runClient(String url, String progressTool, String arguments) throws Exception
    {
        Path node = LocalResources.executable("node");
        if (node == null)
            fail("node is missing: run ./scripts/test.sh (apt-get install nodejs npm; npm ci --prefix src/test/mcp-ts)");
        Path work = Files.createTempDirectory(MavenPaths.targetTests(), "client2-");
        NodeScript.Ended ended = NodeScript.run(node, ReferenceMcpServer.PACKAGES_DIR, CLIENT, work, "client2", PROCESS_TIMEOUT, url, progressTool, arguments);
        if (ended.exitCode() != 0 || ended.lastLine().isEmpty())
            fail("client2.mjs " + url + " failed (exit " + ended.exitCode() + ")\n" + ended.output());
        JsonNode result = new ObjectMapper().readTree(ended.lastLine());
        System.out.println("client2.mjs " + url + ": " + result);
        assertTrue(result.path("ok").asBoolean(), ended.output());
        return result;
    }
}
