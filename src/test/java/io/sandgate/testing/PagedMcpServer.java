package io.sandgate.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code src/test/mcp-ts/paged-server.mjs}: a small MCP server on the TypeScript SDK 2.x whose
 * {@code tools/list} pages ({@code pageSize} tools a page), 2025-era sessions only. Its tools
 * answer {@code <name>:<tool>}; {@code ask} samples and {@code confirm} elicits from the client,
 * {@code progress} reports progress. A Node child process on a free loopback port.
 */
public final class PagedMcpServer extends ProcessFixture
{
    private static final Path SCRIPT = ReferenceMcpServer.PACKAGES_DIR.resolve("paged-server.mjs");
    private static final String INSTALL = "apt-get install nodejs npm; npm ci --prefix src/test/mcp-ts (./scripts/test.sh does both)";

    private final Path node;
    private final String name;
    private int port;
    private Process process;

    private PagedMcpServer(Path node, String name)
    {
        super("paged-mcp-" + name);
        this.node = node;
        this.name = name;
    }

    /** Starts a server of {@code tools} tools ({@code ask}, {@code confirm}, {@code progress}, {@code echo}, then {@code tool_00}...). */
    public static PagedMcpServer start(String name, int tools, int pageSize)
    {
        return start(name, tools, pageSize, false);
    }

    /** @param sessionless a server that makes no sessions: each POST is served on its own, GET is 405 */
    public static PagedMcpServer start(String name, int tools, int pageSize, boolean sessionless)
    {
        Path node = executable("node", INSTALL);
        PagedMcpServer server = new PagedMcpServer(node, name);
        server.onAFreePort(port ->
        {
            server.port = port;
            Process started = server.launch(List.of(node.toString(), SCRIPT.toString(), Integer.toString(port), name, Integer.toString(tools),
                Integer.toString(pageSize), sessionless ? "sessionless" : "sessions"), server.console(), server.console());
            server.process = started;
            server.awaitReady(started, "paged-server.mjs on port " + port, "print its URL",
                () -> Files.readString(server.console()).contains("listening " + server.url()));
        });
        return server;
    }

    public String url()
    {
        return "http://127.0.0.1:" + port + "/mcp";
    }

    /** Stops the process, so that the member is down; {@link #url} stays what it was. */
    @Override
    protected void stopProcesses()
    {
        stop(process, SHUTDOWN_TIMEOUT);
        process = null;
    }

    @Override
    public String diagnostics()
    {
        return "--- " + console() + '\n' + tail(console());
    }

    private Path console()
    {
        return directory.resolve("paged-server.log");
    }

    @Override
    public String toString()
    {
        return "PagedMcpServer[" + name + ", " + url() + "]";
    }
}
