package io.sandgate.mcp;

import java.io.IOException;

import io.sandgate.config.McpConfig;
import io.sandgate.web.AccessNote;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Servlet glue of the MCP face, mapped at {@code /mcp/*}: {@code /mcp/{name}/sse} and
 * {@code /mcp/{name}/message} (HTTP+SSE), {@code /mcp/{name}/mcp} (Streamable HTTP).
 */
public final class McpServlet extends HttpServlet
{
    private final McpGateway mcp;
    private final LegacySseTransport sse;
    private final StreamableTransport streamable;

    public McpServlet(McpGateway mcp)
    {
        this.mcp = mcp;
        UpstreamStreams upstreams = new UpstreamStreams(mcp);
        this.sse = new LegacySseTransport(mcp, upstreams);
        this.streamable = new StreamableTransport(mcp, upstreams);
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException
    {
        AccessNote.face(request, AccessNote.Face.MCP);
        try
        {
            String path = request.getPathInfo();
            String[] parts = path == null ? new String[0] : path.split("/", -1);
            if (parts.length != 3)
                throw GatewayException.notFound("not an MCP endpoint: use /mcp/{server}/sse, /message or /mcp");
            McpConfig.Server server = mcp.server(parts[1]);
            mcp.checkOrigin(request);
            String method = request.getMethod();
            switch (parts[2])
            {
                case "sse" -> only(method, "GET", () -> sse.openStream(request, response, server));
                case "message" -> only(method, "POST", () -> sse.message(request, response, server));
                case "mcp" ->
                {
                    switch (method)
                    {
                        case "POST" -> streamable.post(request, response, server);
                        case "GET" -> streamable.get(request, response, server);
                        case "DELETE" -> streamable.delete(request, response, server);
                        default -> throw new GatewayException(HttpStatus.METHOD_NOT_ALLOWED_405, "method_not_allowed", "use POST, GET or DELETE");
                    }
                }
                default -> throw GatewayException.notFound("not an MCP endpoint: use /mcp/{server}/sse, /message or /mcp");
            }
        }
        catch (RuntimeException x)
        {
            Errors.write(request, response, Errors.map(x, Errors.Peer.MCP_SERVER));
        }
    }

    private interface Handler
    {
        void handle() throws IOException;
    }

    private static void only(String method, String allowed, Handler handler) throws IOException
    {
        if (!allowed.equals(method))
            throw new GatewayException(HttpStatus.METHOD_NOT_ALLOWED_405, "method_not_allowed", "use " + allowed);
        handler.handle();
    }
}
