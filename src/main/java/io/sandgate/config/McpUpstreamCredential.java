package io.sandgate.config;

import java.net.URI;
import java.util.Optional;
import java.util.Set;

/**
 * What the gateway sends an MCP server in place of its clients' tokens, which never go upstream
 * ({@code mcp.servers[].credential}): a credential of its own from the secret source, or a token
 * an authorization server exchanges for the client's (RFC 8693), made for that server alone.
 *
 * @param secret the name of the secret (in {@code egress.secrets}) sent as it is
 * @param header the header carrying it
 * @param format the header value, {@code {secret}} standing for the secret or the exchanged token
 * @param exchange the token exchange, when the credential is one
 */
public record McpUpstreamCredential(Optional<String> secret, String header, String format, Optional<TokenExchange> exchange)
{
    static final String SHAPE = "{secret, header, format} or {token-exchange: {url, client-id, client-secret, audience, scope}}";

    /**
     * @param url the authorization server's token endpoint
     * @param clientSecret the name of the secret holding the gateway's client secret
     * @param audience the {@code audience} asked for: by default the server's URL
     * @param scope the {@code scope} asked for, if any
     */
    public record TokenExchange(URI url, String clientId, String clientSecret, String audience, Optional<String> scope)
    {
    }

    static Optional<McpUpstreamCredential> parse(Object raw, String where, URI serverUrl)
    {
        if (raw == null)
            return Optional.empty();
        ConfigTable table = ConfigTable.of(raw, where, SHAPE, Set.of("secret", "header", "format", "token-exchange"));
        String header = table.text("header", "Authorization");
        if (!header.matches("[A-Za-z0-9-]+"))
            throw new IllegalArgumentException(table.at("header") + ": " + header + " (expected: a header name)");
        String format = table.text("format", "Bearer {secret}");
        if (!format.contains("{secret}"))
            throw new IllegalArgumentException(table.at("format") + ": " + format + " (expected: a value holding {secret})");
        Optional<String> secret = table.text("secret");
        Optional<TokenExchange> exchange = Optional.ofNullable(table.raw("token-exchange")).map(value ->
        {
            ConfigTable entry = ConfigTable.of(value, table.at("token-exchange"), "{url, client-id, client-secret, audience, scope}",
                Set.of("url", "client-id", "client-secret", "audience", "scope"));
            entry.required("url", "the authorization server's token endpoint");
            return new TokenExchange(entry.get("url", ValueParser.url(), null), entry.required("client-id", "the gateway's client id"),
                entry.required("client-secret", "the name of the secret holding the gateway's client secret"),
                entry.text("audience", serverUrl.toString()), entry.text("scope"));
        });
        if (secret.isPresent() == exchange.isPresent())
            throw new IllegalArgumentException(where + " (expected: " + SHAPE + ": one of secret and token-exchange)");
        return Optional.of(new McpUpstreamCredential(secret, header, format, exchange));
    }
}
