package io.sandgate.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.eclipse.jetty.toolchain.test.MavenPaths;

/**
 * Sandgate's reference MCP server, {@code src/test/mcp-ts/reference-server.mjs}: the TypeScript SDK
 * 2.x serving the 2026-07-28 revision and 2025-era sessions on one endpoint, with the tools,
 * prompts and resources of the conformance suite's server scenarios. A Node child process on a
 * free loopback port.
 */
public final class ReferenceMcpServer extends ProcessFixture
{
    public static final Path PACKAGES_DIR = MavenPaths.projectBase().resolve("src/test/mcp-ts");
    private static final Path SCRIPT = PACKAGES_DIR.resolve("reference-server.mjs");
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final String INSTALL = "apt-get install nodejs npm; npm ci --prefix src/test/mcp-ts (./scripts/test.sh does both)";

    private final Path node;
    private int port;
    private Process process;

    private ReferenceMcpServer(Path node)
    {
        super("reference-mcp");
        this.node = node;
    }

    /**
     * Starts the server and returns once it listens.
     *
     * @throws IllegalStateException if node or the locked packages are missing, or the server does not come up
     */
    public static ReferenceMcpServer start()
    {
        Path node = executable("node", INSTALL);
        if (!Files.isRegularFile(PACKAGES_DIR.resolve("node_modules/@modelcontextprotocol/server/package.json")))
            throw new IllegalStateException("@modelcontextprotocol/server is not installed; run " + INSTALL);
        ReferenceMcpServer server = new ReferenceMcpServer(node);
        server.onAFreePort(port ->
        {
            server.port = port;
            server.launchAndAwaitListening();
        });
        return server;
    }

    /** The Streamable HTTP endpoint, for either era. */
    public String url()
    {
        return "http://127.0.0.1:" + port + "/mcp";
    }

    /**
     * What the server saw on its endpoint so far, oldest first: one object per HTTP request with
     * {@code method}, {@code protocolVersion} (the MCP-Protocol-Version header, or null),
     * {@code mcpMethod} (the Mcp-Method header, or null) and {@code session} (whether an
     * Mcp-Session-Id came along) and {@code paramHeaders} (the names of its Mcp-Param-* headers).
     */
    public JsonNode observed() throws IOException, InterruptedException
    {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/observed")).build();
        return new ObjectMapper().readTree(HTTP.send(request, HttpResponse.BodyHandlers.ofString()).body());
    }

    @Override
    protected void stopProcesses()
    {
        stop(process, SHUTDOWN_TIMEOUT);
        process = null;
    }

    @Override
    public String diagnostics()
    {
        return "--- " + consoleFile() + '\n' + tail(consoleFile());
    }

    @Override
    public String toString()
    {
        return "ReferenceMcpServer[" + url() + ", dir=" + directory + "]";
    }

    /**
     * The official conformance repository's example server instead of ours, when
     * {@code -Dsandgate.conformance.server=<its examples/servers/typescript, npm ci'd>} names one:
     * {@code scripts/conformance-official.sh} measures with it. It is not on npm, so the test
     * command cannot install it; nothing of it is kept in this repository.
     */
    private static final String OFFICIAL = System.getProperty("sandgate.conformance.server", "");

    private void launchAndAwaitListening()
    {
        if (!OFFICIAL.isEmpty())
        {
            launchOfficial(Path.of(OFFICIAL));
            return;
        }
        Process started = launch(List.of(node.toString(), SCRIPT.toString(), Integer.toString(port)), consoleFile(), consoleFile());
        process = started;
        try
        {
            // The script prints its URL only once the port is bound.
            awaitReady(started, "reference-server.mjs on port " + port, "print its URL",
                () -> Files.readString(consoleFile()).contains("listening " + url()));
        }
        catch (IllegalStateException e)
        {
            process = null;
            throw e;
        }
    }

    private void launchOfficial(Path dir)
    {
        Path tsx = dir.resolve("node_modules/.bin/tsx");
        if (!Files.isExecutable(tsx))
            throw new IllegalStateException(dir + " has no node_modules/.bin/tsx: run npm ci there");
        Process started = launch(List.of("env", "PORT=" + port, tsx.toString(), dir.resolve("everything-server.ts").toString()), consoleFile(), consoleFile());
        process = started;
        awaitReady(started, "the official example server on port " + port, "print its URL",
            () -> Files.readString(consoleFile()).contains("localhost:" + port + "/mcp"));
    }

    private Path consoleFile()
    {
        return directory.resolve("reference-server.log");
    }
}
