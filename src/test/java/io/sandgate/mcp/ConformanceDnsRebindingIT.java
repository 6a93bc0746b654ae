package io.sandgate.mcp;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDir;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The official MCP conformance suite's {@code dns-rebinding-protection} scenario against the
 * embedded runner with its defaults, in front of an MCP server that has no protection of its own
 * (the MCP Java SDK's): the gateway must refuse a rebinding Host/Origin and accept loopback.
 */
@ExtendWith(WorkDirExtension.class)
class ConformanceDnsRebindingIT
{
    private static final Path SUITE_DIR = MavenPaths.projectBase().resolve("src/test/conformance");
    private static final Path CLI = SUITE_DIR.resolve("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    private static final McpUpstream upstream = McpUpstream.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("mcp.servers", List.of(Map.of("name", "conf", "url", upstream.streamableUrl(), "transport", "streamable"))));

    @AfterAll
    static void stop()
    {
        upstream.close();
    }

    @Test
    void dnsRebindingProtection_passesThroughTheGateway(WorkDir workDir) throws Exception
    {
        if (!Files.isRegularFile(CLI))
            fail("the MCP conformance suite is not installed: run ./scripts/test.sh (npm ci --prefix src/test/conformance)");
        Path work = workDir.getEmptyPathDir();
        Path out = work.resolve("stdout.txt");
        List<String> command = new ArrayList<>(List.of("node", "--import", "./compat.mjs", CLI.toString(), "server",
            "--url", gateway.uri("/mcp/conf/mcp").toString(), "--scenario", "dns-rebinding-protection", "--spec-version", "2025-11-25",
            "-o", work.resolve("results").toString()));
        Process process = new ProcessBuilder(command).directory(SUITE_DIR.toFile()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!process.waitFor(90, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            fail("the conformance suite did not finish in 90 s:\n" + Files.readString(out, StandardCharsets.UTF_8));
        }
        String report = Files.readString(out, StandardCharsets.UTF_8).replaceAll("\u001b\\[[0-9;]*m", "");
        assertEquals(0, process.exitValue(), report);
        assertTrue(report.matches("(?s).*\\[localhost-host-rebinding-rejected\\s*] SUCCESS.*"), report);
        assertTrue(report.matches("(?s).*\\[localhost-host-valid-accepted\\s*] SUCCESS.*"), report);
        assertTrue(report.contains("Passed: 2/2, 0 failed"), report);
    }
}
