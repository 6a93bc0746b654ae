package io.sandgate.mcp.identity;

import java.io.IOException;
import java.util.Optional;

import io.sandgate.config.McpConfig;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Serves the protected-resource metadata (RFC 9728) of each MCP server that authenticates, at
 * {@value Authenticator#METADATA_PATH}{@code /mcp/{name}} and under it for each endpoint: what a
 * client reads after a 401 to learn where to get a token. Public by design: it names only the
 * resource, its authorization servers and scopes.
 */
public final class ResourceMetadataServlet extends HttpServlet
{
    private final McpConfig config;
    private final Authenticator authenticator;

    public ResourceMetadataServlet(McpConfig config, Authenticator authenticator)
    {
        this.config = config;
        this.authenticator = authenticator;
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException
    {
        Optional<String> metadata = authenticator.metadata(config, request.getPathInfo());
        response.setHeader("Cache-Control", "max-age=300");
        if (metadata.isEmpty())
        {
            response.setStatus(HttpStatus.NOT_FOUND_404);
            response.setContentType("application/json");
            response.getWriter().write("{\"error\":\"not_found\",\"message\":\"no protected MCP resource here\"}");
            return;
        }
        response.setContentType("application/json");
        // Browser-based MCP clients read it from other origins; it holds nothing private.
        response.setHeader("Access-Control-Allow-Origin", "*");
        response.getWriter().write(metadata.get());
    }
}
