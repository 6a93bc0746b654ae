package io.sandgate.config;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * How one MCP server's endpoints authenticate their callers ({@code mcp.auth}, and
 * {@code mcp.servers[].auth} over it): as an OAuth 2.1 resource server, which takes bearer tokens
 * that an authorization server issued for it and nothing else.
 *
 * @param issuers the {@code iss} values accepted
 * @param jwksUrl where the issuers' public keys are (JWT access tokens); empty with introspection
 * @param introspection the RFC 7662 endpoint that judges opaque tokens, if tokens are opaque
 * @param audiences what a token's {@code aud} must hold one of: by default the server's resource
 *        URL and its endpoints' (RFC 8707), so that a token for another server of this gateway,
 *        or for another service of the same issuer, is refused
 * @param scopes scopes every call needs (403 {@code insufficient_scope} without)
 * @param algorithms JWS algorithms accepted; asymmetric only, so that a public key can never be
 *        taken for an HMAC secret
 * @param clockSkew how far {@code exp} and {@code nbf} may be off
 * @param resource the server's resource URL, as clients reach it ({@code https://gw.example/mcp/tools})
 * @param authorizationServers what the protected-resource metadata names; by default the issuers
 */
public record McpAuthConfig(List<String> issuers, Optional<URI> jwksUrl, Optional<Introspection> introspection, List<String> audiences,
                            List<String> scopes, Set<String> algorithms, Duration clockSkew, URI resource, List<String> authorizationServers)
{
    /** The table's keys, global and per server. */
    static final Set<String> KEYS = Set.of("issuers", "jwks-url", "introspection", "audiences", "scopes", "algorithms", "clock-skew",
        "resource-url", "authorization-servers");
    static final String SHAPE = "{issuers, jwks-url | introspection, audiences, scopes, algorithms, clock-skew, resource-url, authorization-servers}, or off";
    /** Asymmetric signatures only: RSA, elliptic curves, Edwards curves. */
    public static final Set<String> ALGORITHMS = Set.of("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519");
    private static final List<String> DEFAULT_ALGORITHMS = List.of("RS256", "ES256", "EdDSA");

    /**
     * An RFC 7662 introspection endpoint and how the gateway authenticates to it.
     *
     * @param clientSecret the name of the secret (in {@code egress.secrets}) holding the gateway's client secret
     */
    public record Introspection(URI url, String clientId, String clientSecret)
    {
    }

    public McpAuthConfig
    {
        issuers = List.copyOf(issuers);
        audiences = List.copyOf(audiences);
        scopes = List.copyOf(scopes);
        algorithms = Set.copyOf(algorithms);
        authorizationServers = List.copyOf(authorizationServers);
    }

    /**
     * One server's settings: its own table over the global one, key by key ({@code jwks-url} and
     * {@code introspection} as one key: naming either replaces both); {@code off} (or
     * {@code false}) for a server left open when the others are not.
     *
     * @param global {@code mcp.auth}, or null
     * @param own {@code mcp.servers[].auth}, or null
     * @param publicOrigin the origin clients reach the gateway under when {@code resource-url} is not
     *        given: the first of {@code server.public-origins}, or null
     * @return empty when the server's endpoints are open
     */
    static Optional<McpAuthConfig> resolve(Map<String, ?> global, Object own, String where, String serverName, String publicOrigin)
    {
        if (own != null && (Boolean.FALSE.equals(own) || "off".equals(own) || "false".equals(own)))
            return Optional.empty();
        if (global == null && own == null)
            return Optional.empty();
        ConfigTable ownTable = own == null ? null : ConfigTable.of(own, where, SHAPE, KEYS);
        Map<?, ?> under = global;
        // Two ways of checking tokens, not two settings: a server that names one does not keep the
        // global other, which would win and leave its own unused.
        if (global != null && ownTable != null && (ownTable.raw("jwks-url") != null || ownTable.raw("introspection") != null))
        {
            Map<Object, Object> rest = new LinkedHashMap<>(global);
            rest.remove("jwks-url");
            rest.remove("introspection");
            under = rest;
        }
        ConfigTable globalTable = under == null ? null : ConfigTable.of(under, ConfigKeys.MCP_AUTH.name(), SHAPE, KEYS);
        ConfigTable table = globalTable == null ? ownTable : ownTable == null ? globalTable : ConfigTable.layered(globalTable, ownTable);
        return Optional.of(parse(table, serverName, publicOrigin));
    }

    private static McpAuthConfig parse(ConfigTable table, String serverName, String publicOrigin)
    {
        List<String> issuers = table.get("issuers", ValueParser.list(), List.of());
        if (issuers.isEmpty())
            throw new IllegalArgumentException(table.at("issuers") + ": missing (expected: the token issuers accepted, as their iss values)");
        Optional<URI> jwks = table.optional("jwks-url", ValueParser.url());
        Optional<Introspection> introspection = Optional.ofNullable(table.raw("introspection")).map(raw ->
        {
            ConfigTable entry = ConfigTable.of(raw, table.at("introspection"), "{url, client-id, client-secret}", Set.of("url", "client-id", "client-secret"));
            entry.required("url", "the RFC 7662 introspection endpoint");
            return new Introspection(entry.get("url", ValueParser.url(), null), entry.required("client-id", "the gateway's client id at the authorization server"),
                entry.required("client-secret", "the name of the secret holding the gateway's client secret"));
        });
        if (jwks.isEmpty() && introspection.isEmpty())
            throw new IllegalArgumentException(table.where() + ": jwks-url or introspection missing (expected: where token signatures are checked)");
        if (jwks.isPresent() && introspection.isPresent())
            throw new IllegalArgumentException(table.where() + ": jwks-url and introspection both given (expected: one of them, JWTs checked by the"
                + " issuer's keys or opaque tokens by introspection)");
        List<String> algorithms = table.get("algorithms", ValueParser.list(), DEFAULT_ALGORITHMS);
        for (String algorithm : algorithms)
        {
            if (!ALGORITHMS.contains(algorithm))
                throw new IllegalArgumentException(table.at("algorithms") + ": " + algorithm + " (expected: asymmetric JWS algorithms among " + new TreeSet<>(ALGORITHMS)
                    + "; none and HMAC are never accepted)");
        }
        String base = table.text("resource-url", publicOrigin);
        if (base == null)
            throw new IllegalArgumentException(table.at("resource-url") + ": missing (expected: the gateway's public URL, such as https://gw.example,"
                + " from which each server's resource URL is made; or set " + ConfigKeys.SERVER_PUBLIC_ORIGINS.name() + ")");
        URI resource = ValueParser.url().parse(base.replaceAll("/+$", "") + "/mcp/" + serverName);
        List<String> audiences = table.get("audiences", ValueParser.list(), defaultAudiences(resource));
        return new McpAuthConfig(issuers, jwks, introspection, audiences, table.get("scopes", ValueParser.list(), List.of()), Set.copyOf(algorithms),
            table.get("clock-skew", ValueParser.duration(), Duration.ofSeconds(30)), resource, table.get("authorization-servers", ValueParser.list(), issuers));
    }

    /** The resource and each endpoint under it: a client may name either as its RFC 8707 resource. */
    private static List<String> defaultAudiences(URI resource)
    {
        List<String> audiences = new ArrayList<>();
        audiences.add(resource.toString());
        for (String endpoint : List.of("mcp", "sse", "message"))
            audiences.add(resource + "/" + endpoint);
        return audiences;
    }
}
