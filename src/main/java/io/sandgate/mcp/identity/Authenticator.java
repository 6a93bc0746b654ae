package io.sandgate.mcp.identity;

import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.McpAuthConfig;
import io.sandgate.config.McpConfig;
import io.sandgate.config.McpFederation;
import io.sandgate.core.Secret;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The MCP face as an OAuth 2.1 resource server (MCP authorization, RFC 9728, RFC 6750): each
 * server with {@code auth} takes only bearer tokens its issuers made for it, and tells a caller
 * without one where to get one. Servers without {@code auth} stay open, as before.
 */
public final class Authenticator implements Closeable
{
    /** Where the protected-resource metadata of {@code /mcp/{name}/{endpoint}} is (RFC 9728, the path-suffixed form). */
    public static final String METADATA_PATH = "/.well-known/oauth-protected-resource";
    private static final Pattern BEARER = Pattern.compile("(?i)Bearer +([A-Za-z0-9\\-._~+/]+=*) *");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Map<String, ServerAuth> servers = new ConcurrentHashMap<>();
    private final MeterRegistry registry;

    /** One server's verifier and what its challenges say. */
    private record ServerAuth(McpAuthConfig config, TokenVerifier verifier)
    {
    }

    /**
     * @param secrets the gateway's secrets by name (an introspection client secret)
     * @param background where key sets are fetched ahead of the first call
     */
    public Authenticator(McpConfig config, Function<String, Secret> secrets, Clock clock, MeterRegistry registry, Executor background)
    {
        this.registry = registry;
        for (McpConfig.Server server : config.servers())
            server.auth().ifPresent(auth -> servers.put(server.name(), serverAuth(auth, secrets, clock, background)));
        // Federations and servers share one name space: a federation is known by its name here too.
        for (McpFederation federation : config.federations())
            federation.auth().ifPresent(auth -> servers.put(federation.name(), serverAuth(auth, secrets, clock, background)));
    }

    private static ServerAuth serverAuth(McpAuthConfig auth, Function<String, Secret> secrets, Clock clock, Executor background)
    {
        TokenVerifier verifier;
        if (auth.jwksUrl().isPresent())
        {
            JwtTokenVerifier jwt = new JwtTokenVerifier(auth, clock);
            background.execute(jwt::warm);
            verifier = jwt;
        }
        else
        {
            verifier = new IntrospectionVerifier(auth, secrets, clock);
        }
        return new ServerAuth(auth, verifier);
    }

    /** Whether any server authenticates its callers. */
    public boolean any()
    {
        return !servers.isEmpty();
    }

    /**
     * Who calls, by the request's {@code Authorization}; empty for a server that is open.
     *
     * @param endpoint the endpoint called ({@code mcp}, {@code sse}, {@code message}), whose metadata the challenge names
     * @throws GatewayException 401 {@code invalid_token} with a challenge naming the metadata, or 403 {@code insufficient_scope}
     */
    public Optional<Principal> authenticate(McpConfig.Server server, String endpoint, String authorization)
    {
        return authenticate(server.name(), endpoint, authorization);
    }

    /** As {@link #authenticate(McpConfig.Server, String, String)}, for a server or a federation by name. */
    public Optional<Principal> authenticate(String name, String endpoint, String authorization)
    {
        ServerAuth auth = servers.get(name);
        if (auth == null)
            return Optional.empty();
        if (authorization == null)
            throw refused(auth, endpoint, "missing", HttpStatus.UNAUTHORIZED_401, null, "this MCP server needs a bearer token: see the resource metadata in WWW-Authenticate");
        Matcher matcher = BEARER.matcher(authorization);
        if (!matcher.matches())
            throw refused(auth, endpoint, "invalid", HttpStatus.UNAUTHORIZED_401, "invalid_token", "Authorization is not a bearer token");
        Principal principal;
        try
        {
            principal = auth.verifier().verify(matcher.group(1));
        }
        catch (TokenRefusedException x)
        {
            throw refused(auth, endpoint, "invalid", HttpStatus.UNAUTHORIZED_401, "invalid_token", x.getMessage());
        }
        catch (TokenUncheckableException x)
        {
            Counter.builder("sandgate.mcp.auth.unchecked").description("MCP requests answered 503: the issuer's keys or introspection did not answer")
                .register(registry).increment();
            throw GatewayException.unavailable(x.getMessage());
        }
        if (!principal.scopes().containsAll(auth.config().scopes()))
            throw refused(auth, endpoint, "insufficient_scope", HttpStatus.FORBIDDEN_403, "insufficient_scope", "the token lacks a scope this server needs");
        return Optional.of(principal);
    }

    /** The token of a bearer {@code Authorization}, or null when it is none. */
    public static String bearer(String authorization)
    {
        if (authorization == null)
            return null;
        Matcher matcher = BEARER.matcher(authorization);
        return matcher.matches() ? matcher.group(1) : null;
    }

    private GatewayException refused(ServerAuth auth, String endpoint, String reason, int status, String error, String description)
    {
        Counter.builder("sandgate.mcp.auth.refused").description("MCP requests refused for their token (missing, invalid, insufficient_scope)")
            .tag("reason", reason).register(registry).increment();
        StringBuilder challenge = new StringBuilder("Bearer resource_metadata=\"").append(metadataUrl(auth.config(), endpoint)).append('"');
        if (!auth.config().scopes().isEmpty())
            challenge.append(", scope=\"").append(String.join(" ", auth.config().scopes())).append('"');
        if (error != null)
            challenge.append(", error=\"").append(error).append("\", error_description=\"").append(description).append('"');
        return GatewayException.challenged(status, error == null ? "unauthorized" : error, description, challenge.toString());
    }

    private static String metadataUrl(McpAuthConfig config, String endpoint)
    {
        String resource = resourceOf(config, endpoint);
        URI uri = URI.create(resource);
        String origin = uri.getScheme() + "://" + uri.getRawAuthority();
        return origin + METADATA_PATH + uri.getRawPath();
    }

    /** The resource an endpoint of the server is: the server's resource URL, then the endpoint. */
    private static String resourceOf(McpAuthConfig config, String endpoint)
    {
        return endpoint == null ? config.resource().toString() : config.resource() + "/" + endpoint;
    }

    /**
     * The protected-resource metadata (RFC 9728) of a path under {@value #METADATA_PATH}:
     * {@code /mcp/{name}} or {@code /mcp/{name}/{endpoint}}; empty for any other, or a server that is open.
     *
     * @param path what follows {@value #METADATA_PATH} (RFC 9728 inserts it between the origin and the resource's path)
     */
    public Optional<String> metadata(McpConfig config, String path)
    {
        if (path == null)
            return Optional.empty();
        String[] parts = path.split("/", -1);
        if (parts.length < 3 || parts.length > 4 || !parts[0].isEmpty() || !"mcp".equals(parts[1]))
            return Optional.empty();
        String endpoint = parts.length == 4 ? parts[3] : null;
        if (endpoint != null && !List.of("mcp", "sse", "message").contains(endpoint))
            return Optional.empty();
        McpConfig.Server server = config.server(parts[2]);
        McpFederation federation = config.federation(parts[2]);
        if (federation != null && endpoint != null && !"mcp".equals(endpoint))
            return Optional.empty();
        ServerAuth auth = servers.get(parts[2]);
        if (auth == null || server == null && federation == null)
            return Optional.empty();
        ObjectNode body = JSON.createObjectNode().put("resource", resourceOf(auth.config(), endpoint));
        auth.config().authorizationServers().forEach(body.putArray("authorization_servers")::add);
        Set<String> scopes = new LinkedHashSet<>(auth.config().scopes());
        // A federation's callers get what their scopes grant on each member.
        for (McpConfig.Server granting : server != null ? List.of(server) : federation.servers().stream().map(config::server).toList())
            scopes.addAll(granting.tools().scopes().keySet());
        if (!scopes.isEmpty())
            scopes.forEach(body.putArray("scopes_supported")::add);
        body.putArray("bearer_methods_supported").add("header");
        body.put("resource_name", server != null ? "MCP server " + server.name() : "MCP federation " + federation.name());
        return Optional.of(body.toString());
    }

    @Override
    public void close() throws IOException
    {
        for (ServerAuth auth : servers.values())
        {
            if (auth.verifier() instanceof Closeable closeable)
                closeable.close();
        }
    }
}
