package io.sandgate.mcp.identity;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.McpConfig;
import io.sandgate.config.McpUpstreamCredential;
import io.sandgate.core.Secret;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;

/**
 * What the gateway sends an MCP server as its credential: never the client's token, which was made
 * for the gateway, but a secret of the gateway's own, or a token the authorization server made for
 * the server from the client's (RFC 8693 token exchange). Exchanged tokens are kept per server and
 * principal until shortly before they expire, so that a principal's calls cost one exchange per
 * token lifetime; they are held in memory only, never logged, never stored.
 */
public final class UpstreamCredentials
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    /** Exchanged tokens are renewed this long before they expire, so that none expires on its way. */
    private static final Duration MARGIN = Duration.ofSeconds(30);
    private static final String TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
    private static final String ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token";

    /** A header and its value; the value never prints. */
    public record Header(String name, Secret value)
    {
    }


    private final Function<String, Secret> secrets;
    private final Clock clock;
    private final HttpClient http;
    /** Exchanged tokens by server and principal, until they are to be renewed. */
    private final Expiring<Secret> exchanged = new Expiring<>();
    private final Map<String, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();
    private final Counter exchanges;
    private final Counter exchangeFailures;

    /** @param secrets the gateway's secrets by name ({@code egress.secrets}) */
    public UpstreamCredentials(Function<String, Secret> secrets, Clock clock, MeterRegistry registry)
    {
        this.secrets = secrets;
        this.clock = clock;
        this.http = HttpClient.newBuilder().connectTimeout(TIMEOUT).followRedirects(HttpClient.Redirect.NEVER).build();
        this.exchanges = Counter.builder("sandgate.mcp.token.exchanges").description("RFC 8693 token exchanges made for MCP servers").register(registry);
        this.exchangeFailures = Counter.builder("sandgate.mcp.token.exchange.failures").description("Token exchanges that failed (the call got 502)").register(registry);
    }

    /**
     * Makes sure the credential of a principal's calls to the server is at hand: for a token
     * exchange, exchanges the client's token unless a kept one is still good. Blocks while it
     * exchanges, at most {@link #TIMEOUT}.
     *
     * @param token the client's bearer token, exchanged and forgotten
     * @throws GatewayException 502 when the exchange fails
     */
    public void prepare(McpConfig.Server server, Principal principal, String token)
    {
        Optional<McpUpstreamCredential.TokenExchange> exchange = server.credential().flatMap(McpUpstreamCredential::exchange);
        if (exchange.isEmpty() || principal == null)
            return;
        String key = key(server, principal.owner());
        Instant now = clock.instant();
        if (exchanged.get(key, now) != null)
            return;
        // A principal's first requests arriving together make one exchange, which the others wait for.
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> running = inFlight.putIfAbsent(key, mine);
        if (running != null)
        {
            awaitOther(running);
            return;
        }
        try
        {
            Exchanged fresh = exchange(exchange.get(), token, now);
            exchanged.put(key, fresh.token(), fresh.renewAt(), now);
            mine.complete(null);
        }
        catch (RuntimeException x)
        {
            mine.completeExceptionally(x);
            throw x;
        }
        finally
        {
            inFlight.remove(key, mine);
        }
    }

    private void awaitOther(CompletableFuture<Void> running)
    {
        try
        {
            running.get(TIMEOUT.toMillis() * 2, TimeUnit.MILLISECONDS);
        }
        catch (ExecutionException x)
        {
            throw x.getCause() instanceof GatewayException refusal ? refusal : failed("the token exchange failed");
        }
        catch (TimeoutException x)
        {
            throw failed("the token exchange took too long");
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            throw failed("the token exchange was interrupted");
        }
    }

    /**
     * The header a request to the server on behalf of the owner carries, if any: none when the
     * server has no credential, when the request goes to another origin than the server's (an HTTP+SSE
     * server names its own message URL, which must not take the credential elsewhere), or when no
     * exchanged token of the owner is kept (a stream reopened on a replica the owner never called).
     *
     * @param owner as a session records it ({@link Principal#owner()} when the server authenticates)
     */
    public Optional<Header> header(McpConfig.Server server, String owner, URI target)
    {
        if (server.credential().isEmpty() || !sameOrigin(server.url(), target))
            return Optional.empty();
        McpUpstreamCredential credential = server.credential().get();
        Secret value;
        if (credential.secret().isPresent())
        {
            value = secrets.apply(credential.secret().get());
        }
        else
        {
            value = exchanged.get(key(server, owner), clock.instant());
            if (value == null)
                return Optional.empty();
        }
        return Optional.of(new Header(credential.header(), new Secret(credential.format().replace("{secret}", value.reveal()))));
    }

    private static boolean sameOrigin(URI a, URI b)
    {
        return a.getScheme().equalsIgnoreCase(b.getScheme()) && a.getHost().equalsIgnoreCase(b.getHost()) && port(a) == port(b);
    }

    private static int port(URI uri)
    {
        return uri.getPort() != -1 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }

    private static String key(McpConfig.Server server, String owner)
    {
        return server.name() + "\n" + owner;
    }

    private record Exchanged(Secret token, Instant renewAt)
    {
    }

    private Exchanged exchange(McpUpstreamCredential.TokenExchange exchange, String token, Instant now)
    {
        exchanges.increment();
        StringBuilder form = new StringBuilder("grant_type=").append(encode(TOKEN_EXCHANGE))
            .append("&subject_token=").append(encode(token))
            .append("&subject_token_type=").append(encode(ACCESS_TOKEN))
            .append("&requested_token_type=").append(encode(ACCESS_TOKEN))
            .append("&audience=").append(encode(exchange.audience()));
        exchange.scope().ifPresent(scope -> form.append("&scope=").append(encode(scope)));
        HttpRequest request = HttpRequest.newBuilder(exchange.url()).timeout(TIMEOUT)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept", "application/json")
            .header("Authorization", ClientSecretBasic.header(exchange.clientId(), secrets.apply(exchange.clientSecret())))
            .POST(HttpRequest.BodyPublishers.ofString(form.toString()))
            .build();
        try
        {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            JsonNode body = response.statusCode() == 200 ? JSON.readTree(response.body()) : null;
            String issued = body == null ? null : body.path("access_token").asText(null);
            if (issued == null || issued.isEmpty())
                throw failed("the authorization server refused the token exchange (" + response.statusCode() + ")");
            long lifetime = body.path("expires_in").asLong(60);
            return new Exchanged(new Secret(issued), now.plusSeconds(lifetime).minus(MARGIN));
        }
        catch (IOException x)
        {
            throw failed("the authorization server could not be reached for the token exchange");
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            throw failed("the token exchange was interrupted");
        }
    }

    private GatewayException failed(String message)
    {
        exchangeFailures.increment();
        return new GatewayException(HttpStatus.BAD_GATEWAY_502, "token_exchange_failed", message);
    }

    private static String encode(String value)
    {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
