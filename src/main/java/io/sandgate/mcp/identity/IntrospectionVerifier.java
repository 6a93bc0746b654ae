package io.sandgate.mcp.identity;

import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.function.Function;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.config.McpAuthConfig;
import io.sandgate.core.Secret;

/**
 * Opaque tokens, judged by the authorization server's introspection endpoint (RFC 7662). Each
 * answer is kept by the token's digest (never the token) until the token expires, so that a client
 * making many calls costs the endpoint one; a refusal is kept briefly, so that a client repeating
 * a bad token cannot make the gateway hammer the endpoint. The table is bounded.
 */
final class IntrospectionVerifier implements TokenVerifier
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final Duration REFUSAL_KEPT = Duration.ofSeconds(10);
    /** An answer: the principal of an active token, or why the token is refused; kept until {@code until}. */
    private record Kept(Principal principal, String refusal, Instant until)
    {
    }

    private final McpAuthConfig config;
    private final McpAuthConfig.Introspection endpoint;
    private final Function<String, Secret> secrets;
    private final Clock clock;
    private final HttpClient http;
    private final Expiring<Kept> active;
    /**
     * Refusals apart from the active tokens: a flood of made-up tokens fills and empties this table
     * only, and never makes the clients with good tokens ask the endpoint again.
     */
    private final Expiring<Kept> refused;

    /** @param secrets the gateway's secrets by name, where its client secret is */
    IntrospectionVerifier(McpAuthConfig config, Function<String, Secret> secrets, Clock clock)
    {
        this(config, secrets, clock, Expiring.MAX);
    }

    /** @param kept how many answers each table (active tokens, refusals) keeps at most */
    IntrospectionVerifier(McpAuthConfig config, Function<String, Secret> secrets, Clock clock, int kept)
    {
        this.active = new Expiring<>(kept);
        this.refused = new Expiring<>(kept);
        this.config = config;
        this.endpoint = config.introspection().orElseThrow();
        this.secrets = secrets;
        this.clock = clock;
        this.http = HttpClient.newBuilder().connectTimeout(TIMEOUT).followRedirects(HttpClient.Redirect.NEVER).build();
    }

    @Override
    public Principal verify(String token)
    {
        String key = Tokens.digest(token);
        Instant now = clock.instant();
        Kept answer = active.get(key, now);
        if (answer == null)
            answer = refused.get(key, now);
        if (answer == null)
        {
            answer = introspect(token, now);
            (answer.principal() == null ? refused : active).put(key, answer, answer.until(), now);
        }
        if (answer.principal() == null)
            throw new TokenRefusedException(answer.refusal());
        return answer.principal();
    }

    private Kept introspect(String token, Instant now)
    {
        JsonNode body;
        try
        {
            HttpRequest request = HttpRequest.newBuilder(endpoint.url()).timeout(TIMEOUT)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .header("Accept", "application/json")
                .header("Authorization", ClientSecretBasic.header(endpoint.clientId(), secrets.apply(endpoint.clientSecret())))
                .POST(HttpRequest.BodyPublishers.ofString("token=" + URLEncoder.encode(token, StandardCharsets.UTF_8) + "&token_type_hint=access_token"))
                .build();
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200)
                throw new TokenUncheckableException("the token cannot be checked now: the introspection endpoint answered " + response.statusCode());
            body = JSON.readTree(response.body());
        }
        catch (IOException x)
        {
            // Not kept: the next call asks again.
            throw new TokenUncheckableException("the token cannot be checked now: the introspection endpoint is unavailable");
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            throw new TokenUncheckableException("the token cannot be checked now");
        }
        return judge(body, now);
    }

    private Kept judge(JsonNode body, Instant now)
    {
        Instant refusalEnds = now.plus(REFUSAL_KEPT);
        if (!body.path("active").asBoolean(false))
            return new Kept(null, "the token is not active", refusalEnds);
        String issuer = body.path("iss").asText(null);
        if (issuer == null && config.issuers().size() == 1)
            issuer = config.issuers().get(0);
        if (issuer == null || !config.issuers().contains(issuer))
            return new Kept(null, "the token's issuer is not one this server accepts", refusalEnds);
        if (!audienceMatches(body.path("aud")))
            return new Kept(null, "the token is for another audience than this server", refusalEnds);
        long exp = body.path("exp").asLong(0);
        if (exp == 0)
            return new Kept(null, "the token lacks a required claim (exp)", refusalEnds);
        Instant expires = Instant.ofEpochSecond(exp);
        if (!expires.plus(config.clockSkew()).isAfter(now))
            return new Kept(null, "the token has expired", refusalEnds);
        long nbf = body.path("nbf").asLong(0);
        if (nbf != 0 && Instant.ofEpochSecond(nbf).minus(config.clockSkew()).isAfter(now))
            return new Kept(null, "the token is not valid yet", refusalEnds);
        Principal principal = Principals.of(issuer, body.path("sub").asText(null), body.path("client_id").asText(""),
            Principals.scopes(body.path("scope").isTextual() ? body.path("scope").asText() : null, null), expires);
        return new Kept(principal, null, expires);
    }

    private boolean audienceMatches(JsonNode aud)
    {
        Collection<String> accepted = config.audiences();
        if (aud.isTextual())
            return accepted.contains(aud.asText());
        for (JsonNode item : aud)
        {
            if (accepted.contains(item.asText()))
                return true;
        }
        return false;
    }
}
