package io.sandgate.testing;

import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jwt.JWTClaimsSet;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.MimeTypes;
import org.eclipse.jetty.server.FormFields;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;

/**
 * A protocol-faithful test double of an OAuth 2.1 authorization server on a real Jetty server at
 * 127.0.0.1, port 0, written from the RFCs. Its issuer is its base URL {@code http://127.0.0.1:PORT}
 * (no trailing slash). Time is the given clock's, so expiry is tested without sleeping.
 * <ul>
 *   <li>{@code GET /.well-known/oauth-authorization-server} (RFC 8414), also at
 *       {@code /.well-known/openid-configuration}: endpoints, {@code jwks_uri}, grants
 *       {@code client_credentials} and token exchange, {@code client_secret_basic} and
 *       {@code client_secret_post}, the clients' scopes, and an {@code authorization_endpoint} with
 *       {@code response_types_supported: []}, which the TypeScript SDK cannot do without
 *       ({@code /authorize} answers {@code unsupported_response_type}).</li>
 *   <li>{@code GET /jwks}: the published keys of {@link TestTokens}; see {@link #jwksDown},
 *       {@link #rotate()}, {@link #unpublish}, {@link #jwksFetches()}.</li>
 *   <li>{@code POST /token}: clients of {@link #client} authenticated by HTTP Basic (RFC 6749 §2.3.1:
 *       form-urlencoded, then Base64) or in the form, never both. {@code client_credentials} takes
 *       {@code scope} (a subset of the client's; absent: all of them) and {@code resource} (RFC 8707,
 *       repeatable, becomes {@code aud}). Token exchange (RFC 8693) takes a live {@code subject_token}
 *       of this server, {@code audience} and/or {@code resource}, {@code scope}; the new token keeps
 *       the subject's {@code sub} and gains {@code act: {sub: <exchanging client>}}, nesting any
 *       earlier {@code act}. Tokens are RFC 9068 JWTs ({@code typ: at+jwt}) signed RS256 by the
 *       current RSA key: iss, sub, client_id, aud, scope, iat, nbf, exp, jti.</li>
 *   <li>{@code POST /introspect} (RFC 7662), client-authenticated: active for a live
 *       {@link #opaqueToken} or JWT of this server, {@code {"active":false}} for anything unknown,
 *       expired or {@link #revoke revoked}.</li>
 * </ul>
 * Errors are RFC 6749 §5.2 JSON; answers carry {@code Cache-Control: no-store}.
 *
 * <h2>What the TypeScript MCP SDK 1.32.2 asks of the MCP endpoint in front of this server</h2>
 * Read from its {@code client/auth.js}, {@code streamableHttp.js} and {@code sse.js}. What the
 * gateway meets of it (the 401 and its challenge, the metadata, the resource check, the 403) is
 * pinned by {@code TypeScriptSdkOAuthIT}, which runs {@code src/test/mcp-ts/oauth-client.mjs}
 * through the gateway; the rest (the fallbacks when a challenge names no metadata, which the
 * gateway's always does; {@code expectedIssuer}) is as read:
 * <ul>
 *   <li>Any 401 starts the flow. {@code WWW-Authenticate} is read only when it starts with
 *       {@code Bearer} and a space; {@code resource_metadata}, {@code scope} and {@code error} are each
 *       found by the regex {@code <name>=("([^"]+)"|([^\s,]+))} anywhere in it (so quote them).
 *       Streamable HTTP gives up on a 401 right after a fresh token; the SSE transport's POST has no
 *       such guard and fetches a token and posts again for as long as 401s come.</li>
 *   <li>Protected-resource metadata (RFC 9728): the {@code resource_metadata} URL alone when given;
 *       else {@code /.well-known/oauth-protected-resource<path of the MCP URL>}, then (after a 4xx or
 *       a failed fetch) {@code /.well-known/oauth-protected-resource}. It requires {@code resource}
 *       (a URL) and takes {@code authorization_servers[0]}. Without usable metadata it takes the MCP
 *       origin as the authorization server and, failing its metadata too, posts to {@code /token} there.</li>
 *   <li>{@code resource} must share the MCP URL's origin and be a path prefix of it at a {@code /}
 *       boundary ({@code /mcp/a} covers {@code /mcp/a/mcp}, not {@code /mcp/ab}); with SSE the MCP URL
 *       is the {@code /sse} one, for the 401 of a POST too. The token request sends it verbatim as
 *       {@code resource}, so it is the token's {@code aud}.</li>
 *   <li>With {@code expectedIssuer}, {@code authorization_servers[0]} must equal it (as URLs, one
 *       trailing slash tolerated), or no credentials are sent anywhere.</li>
 *   <li>Authorization-server metadata: {@code /.well-known/oauth-authorization-server}, then
 *       {@code /.well-known/openid-configuration} (on a 4xx only; an unparsable document is fatal).
 *       It needs {@code issuer}, {@code authorization_endpoint}, {@code token_endpoint},
 *       {@code response_types_supported}; Basic authentication is used when listed or nothing is.</li>
 *   <li>The token request's {@code scope} is the provider's own: the challenge's {@code scope} is
 *       ignored for client credentials. A 403 {@code error="insufficient_scope"} (Streamable HTTP
 *       only) fetches one more token with that same scope; the second identical 403 ends the call.</li>
 * </ul>
 */
public final class AuthorizationServerDouble implements AutoCloseable
{
    public static final String CLIENT_CREDENTIALS = "client_credentials";
    public static final String TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
    public static final String ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
    public static final String JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt";
    public static final String METADATA_PATH = "/.well-known/oauth-authorization-server";
    public static final String OPENID_METADATA_PATH = "/.well-known/openid-configuration";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** A token this server issued at its token endpoint. */
    public record Issued(String grantType, String clientId, String subject, List<String> audience, String scope, Instant time)
    {
    }

    private record Client(String id, String secret, Set<String> scopes)
    {
    }

    /** An opaque token's introspection answer, active until {@code expiresAt}. */
    private record Opaque(Map<String, Object> answer, Instant expiresAt)
    {
    }

    /** An answer: status, a JSON body, and the challenge of a 401. */
    private record Answer(int status, Object body, String wwwAuthenticate)
    {
        static Answer json(Object body)
        {
            return new Answer(HttpStatus.OK_200, body, null);
        }
    }

    /** An RFC 6749 §5.2 error, thrown from deep in a grant and answered as it is. */
    private static final class OAuthError extends Exception
    {
        final Answer answer;

        OAuthError(int status, String error, String description)
        {
            super(error, null, false, false);
            // RFC 6749 §5.2: a failed client authentication names the schemes the endpoint takes.
            this.answer = new Answer(status, Map.of("error", error, "error_description", description),
                status == HttpStatus.UNAUTHORIZED_401 ? "Basic realm=\"authorization-server-double\"" : null);
        }
    }

    private final Clock clock;
    private final Server server;
    private final String issuer;
    private final TestTokens tokens;
    private final Map<String, Client> clients = new ConcurrentHashMap<>();
    private final Map<String, Opaque> opaqueTokens = new ConcurrentHashMap<>();
    private final Set<String> revoked = ConcurrentHashMap.newKeySet();
    private final List<Issued> issued = new CopyOnWriteArrayList<>();
    private final List<String> issuedTokens = new CopyOnWriteArrayList<>();
    private final AtomicInteger jwksFetches = new AtomicInteger();
    private final AtomicInteger tokenRequests = new AtomicInteger();
    private final AtomicInteger introspections = new AtomicInteger();
    private volatile boolean jwksDown;

    private AuthorizationServerDouble(Clock clock)
    {
        this.clock = clock;
        server = LoopbackServers.server("authorization-server-double");
        ServerConnector connector = LoopbackServers.connector(server);
        server.setHandler(new Endpoints());
        // The issuer is the base URL, known once the port is bound; nobody can call before then.
        LoopbackServers.start(server, this::close, "the authorization server double");
        issuer = "http://127.0.0.1:" + connector.getLocalPort();
        tokens = new TestTokens(issuer, clock);
    }

    public static AuthorizationServerDouble start()
    {
        return start(Clock.systemUTC());
    }

    /** A server whose tokens, expiry checks and introspection answers follow {@code clock}. */
    public static AuthorizationServerDouble start(Clock clock)
    {
        return new AuthorizationServerDouble(clock);
    }

    // ------------------------------------------------------------------------ test controls

    public String issuer()
    {
        return issuer;
    }

    public String metadataUrl()
    {
        return issuer + METADATA_PATH;
    }

    public String jwksUri()
    {
        return issuer + "/jwks";
    }

    public String tokenEndpoint()
    {
        return issuer + "/token";
    }

    public String introspectionEndpoint()
    {
        return issuer + "/introspect";
    }

    /** Registers a confidential client that may ask for these scopes (and any subset). */
    public AuthorizationServerDouble client(String id, String secret, Set<String> allowedScopes)
    {
        clients.put(id, new Client(id, secret, Set.copyOf(allowedScopes)));
        return this;
    }

    /** The lifetime of tokens issued from now on, by the endpoint and by {@link #token()}. Default 5 minutes. */
    public AuthorizationServerDouble tokenLifetime(Duration lifetime)
    {
        tokens.lifetime(lifetime);
        return this;
    }

    /** Whether {@code /jwks} answers 503, as an issuer in trouble does. */
    public void jwksDown(boolean down)
    {
        jwksDown = down;
    }

    /** Publishes a new RSA key that RS256 tokens use from now on; returns its kid ({@code rsa-2}, ...). */
    public String rotate()
    {
        return tokens.rotate();
    }

    /** Takes a key out of the JWKS; tokens can still be signed with it ({@code token().kid(kid)}). */
    public void unpublish(String kid)
    {
        tokens.unpublish(kid);
    }

    /** An opaque token that only {@code /introspect} can tell about. */
    public String opaqueToken(String subject, String clientId, String scope, String audience, Duration lifetime)
    {
        String token = "opaque-" + UUID.randomUUID();
        Instant now = clock.instant();
        Map<String, Object> answer = new LinkedHashMap<>(Map.of("active", true, "sub", subject, "client_id", clientId, "iss", issuer,
            "iat", now.getEpochSecond(), "exp", now.plus(lifetime).getEpochSecond(), "token_type", "Bearer"));
        // Either may be left out (null), as some servers do.
        if (scope != null)
            answer.put("scope", scope);
        if (audience != null)
            answer.put("aud", audience);
        opaqueTokens.put(token, new Opaque(answer, now.plus(lifetime)));
        return token;
    }

    /** Introspection calls this token inactive from now on (opaque or JWT). */
    public void revoke(String token)
    {
        revoked.add(token);
    }

    /** A builder of a token of this server; see {@link TestTokens.Builder}. */
    public TestTokens.Builder token()
    {
        return tokens.token();
    }

    /** The keys and the forgeries ({@code unsigned}, {@code hmacWithPublicKey}, {@code tampered}, ...). */
    public TestTokens tokens()
    {
        return tokens;
    }

    public String unsigned(JWTClaimsSet claims)
    {
        return tokens.unsigned(claims);
    }

    public String hmacWithPublicKey(JWTClaimsSet claims)
    {
        return tokens.hmacWithPublicKey(claims);
    }

    public String tampered(String jwt)
    {
        return tokens.tampered(jwt);
    }

    public String signedByStranger(JWTClaimsSet claims)
    {
        return tokens.signedByStranger(claims);
    }

    /** {@code GET /jwks} requests so far, those answered 503 included. */
    public int jwksFetches()
    {
        return jwksFetches.get();
    }

    /** {@code POST /token} requests so far, refused ones included. */
    public int tokenRequests()
    {
        return tokenRequests.get();
    }

    /** {@code POST /introspect} requests so far. */
    public int introspections()
    {
        return introspections.get();
    }

    /** Every token the endpoint issued, in order. */
    public List<Issued> issued()
    {
        return List.copyOf(issued);
    }

    /**
     * The access tokens the endpoint issued, in order: what a test looks for where a token must
     * never show up (an upstream's requests, a log).
     */
    public List<String> issuedTokens()
    {
        return List.copyOf(issuedTokens);
    }

    /** The token exchanges (RFC 8693) among {@link #issued()}. */
    public List<Issued> exchanges()
    {
        return issued.stream().filter(i -> TOKEN_EXCHANGE.equals(i.grantType())).toList();
    }

    @Override
    public void close()
    {
        LoopbackServers.stop(server, "the authorization server double");
    }

    // ------------------------------------------------------------------------------ the API

    private final class Endpoints extends Handler.Abstract
    {
        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            Answer answer;
            try
            {
                answer = route(request);
            }
            catch (OAuthError x)
            {
                answer = x.answer;
            }
            response.setStatus(answer.status());
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, MimeTypes.Type.APPLICATION_JSON.asString());
            // RFC 6749 §5.1: token answers must not be cached; nothing here needs caching.
            response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
            if (answer.wwwAuthenticate() != null)
                response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, answer.wwwAuthenticate());
            response.write(true, ByteBuffer.wrap(JSON.writeValueAsBytes(answer.body())), callback);
            return true;
        }
    }

    private Answer route(Request request) throws OAuthError
    {
        String path = Request.getPathInContext(request);
        boolean get = HttpMethod.GET.is(request.getMethod());
        boolean post = HttpMethod.POST.is(request.getMethod());
        return switch (path)
        {
            case METADATA_PATH, OPENID_METADATA_PATH -> get ? Answer.json(metadata(path.equals(OPENID_METADATA_PATH))) : notAllowed();
            case "/jwks" -> get ? jwks() : notAllowed();
            case "/token" -> post ? tokenRequest(request) : notAllowed();
            case "/introspect" -> post ? introspect(request) : notAllowed();
            case "/authorize" -> error(HttpStatus.BAD_REQUEST_400, "unsupported_response_type", "this server only issues tokens at its token endpoint");
            default -> error(HttpStatus.NOT_FOUND_404, "not_found", path);
        };
    }

    private Map<String, Object> metadata(boolean openId)
    {
        Set<String> scopes = new TreeSet<>();
        clients.values().forEach(c -> scopes.addAll(c.scopes()));
        List<String> authMethods = List.of("client_secret_basic", "client_secret_post");
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("issuer", issuer);
        metadata.put("authorization_endpoint", issuer + "/authorize");
        metadata.put("token_endpoint", tokenEndpoint());
        metadata.put("jwks_uri", jwksUri());
        metadata.put("introspection_endpoint", introspectionEndpoint());
        metadata.put("scopes_supported", List.copyOf(scopes));
        metadata.put("response_types_supported", List.of());
        metadata.put("grant_types_supported", List.of(CLIENT_CREDENTIALS, TOKEN_EXCHANGE));
        metadata.put("token_endpoint_auth_methods_supported", authMethods);
        metadata.put("introspection_endpoint_auth_methods_supported", authMethods);
        if (openId)
        {
            // Required by OpenID Connect Discovery 1.0; this server issues no ID tokens.
            metadata.put("subject_types_supported", List.of("public"));
            metadata.put("id_token_signing_alg_values_supported", List.of(JWSAlgorithm.RS256.getName()));
        }
        return metadata;
    }

    private Answer jwks()
    {
        jwksFetches.incrementAndGet();
        if (jwksDown)
            return error(HttpStatus.SERVICE_UNAVAILABLE_503, "temporarily_unavailable", "the key set is not available");
        return Answer.json(tokens.publicKeys().toJSONObject(true));
    }

    private Answer tokenRequest(Request request) throws OAuthError
    {
        tokenRequests.incrementAndGet();
        Fields form = form(request);
        Client client = authenticate(request, form);
        String grantType = single(form, "grant_type");
        if (grantType == null)
            throw new OAuthError(HttpStatus.BAD_REQUEST_400, "invalid_request", "grant_type is missing");
        return switch (grantType)
        {
            case CLIENT_CREDENTIALS -> clientCredentials(client, form);
            case TOKEN_EXCHANGE -> exchange(client, form);
            default -> error(HttpStatus.BAD_REQUEST_400, "unsupported_grant_type", grantType);
        };
    }

    /** RFC 6749 §4.4. */
    private Answer clientCredentials(Client client, Fields form) throws OAuthError
    {
        String scope = grantedScope(client, single(form, "scope"), String.join(" ", new TreeSet<>(client.scopes())));
        List<String> audience = targets(form, "resource");
        String token = tokens.token().subject(client.id()).clientId(client.id()).audience(audience).scope(scope).sign();
        issued.add(new Issued(CLIENT_CREDENTIALS, client.id(), client.id(), audience, scope, clock.instant()));
        issuedTokens.add(token);
        return tokenAnswer(token, null, scope);
    }

    /** RFC 8693 §2: the exchanging client acts for the subject of the token it presents. */
    private Answer exchange(Client client, Fields form) throws OAuthError
    {
        String subjectToken = single(form, "subject_token");
        String subjectType = single(form, "subject_token_type");
        String requestedType = single(form, "requested_token_type");
        List<String> types = List.of(ACCESS_TOKEN_TYPE, JWT_TOKEN_TYPE);
        if (subjectToken == null || subjectType == null || !types.contains(subjectType) || (requestedType != null && !types.contains(requestedType)))
            throw new OAuthError(HttpStatus.BAD_REQUEST_400, "invalid_request", "subject_token and a token type of " + types + " are required");
        JWTClaimsSet subject = tokens.verified(subjectToken);
        if (subject == null || revoked.contains(subjectToken))
            throw new OAuthError(HttpStatus.BAD_REQUEST_400, "invalid_grant", "subject_token is not a valid token of this server");
        List<String> audience = new ArrayList<>(targets(form, "audience"));
        audience.addAll(targets(form, "resource"));
        if (audience.isEmpty())
            throw new OAuthError(HttpStatus.BAD_REQUEST_400, "invalid_target", "audience or resource is required");
        String subjectScope = (String)subject.getClaim("scope");
        String scope = grantedScope(client, single(form, "scope"), subjectScope == null ? "" : subjectScope);
        Map<String, Object> actor = new LinkedHashMap<>();
        actor.put("sub", client.id());
        // RFC 8693 §4.1: an earlier actor nests inside the current one.
        if (subject.getClaim("act") != null)
            actor.put("act", subject.getClaim("act"));
        String token = tokens.token().subject(subject.getSubject()).clientId(client.id()).audience(audience)
            .scope(scope.isEmpty() ? null : scope).claim("act", actor).sign();
        issued.add(new Issued(TOKEN_EXCHANGE, client.id(), subject.getSubject(), List.copyOf(audience), scope, clock.instant()));
        issuedTokens.add(token);
        return tokenAnswer(token, requestedType == null ? ACCESS_TOKEN_TYPE : requestedType, scope);
    }

    /** RFC 6749 §5.1, with RFC 8693's {@code issued_token_type} for an exchange. */
    private Answer tokenAnswer(String token, String issuedType, String scope)
    {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("access_token", token);
        if (issuedType != null)
            body.put("issued_token_type", issuedType);
        body.put("token_type", "Bearer");
        body.put("expires_in", tokens.lifetime().toSeconds());
        if (!scope.isEmpty())
            body.put("scope", scope);
        return Answer.json(body);
    }

    /** RFC 7662 §2. */
    private Answer introspect(Request request) throws OAuthError
    {
        introspections.incrementAndGet();
        Fields form = form(request);
        authenticate(request, form);
        String token = single(form, "token");
        if (token == null)
            throw new OAuthError(HttpStatus.BAD_REQUEST_400, "invalid_request", "token is missing");
        Opaque opaque = revoked.contains(token) ? null : opaqueTokens.get(token);
        JWTClaimsSet jwt = revoked.contains(token) || opaqueTokens.containsKey(token) ? null : tokens.verified(token);
        if (opaque != null && clock.instant().isBefore(opaque.expiresAt()))
            return Answer.json(opaque.answer());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("active", jwt != null);
        if (jwt != null)
        {
            body.putAll(jwt.toJSONObject());
            body.put("token_type", "Bearer");
        }
        return Answer.json(body);
    }

    // --------------------------------------------------------------------------- helpers

    /** The form of a POST; RFC 6749 §3.2 wants {@code application/x-www-form-urlencoded}. */
    private static Fields form(Request request) throws OAuthError
    {
        String type = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
        if (type == null || !MimeTypes.Type.FORM_ENCODED.is(MimeTypes.getContentTypeWithoutCharset(type)))
            throw new OAuthError(HttpStatus.BAD_REQUEST_400, "invalid_request", "expected application/x-www-form-urlencoded");
        return FormFields.getFields(request);
    }

    /** RFC 6749 §3.2: a parameter given more than once is an error; one given empty counts as absent. */
    private static String single(Fields form, String name) throws OAuthError
    {
        List<String> values = values(form, name);
        if (values.size() > 1)
            throw new OAuthError(HttpStatus.BAD_REQUEST_400, "invalid_request", name + " is repeated");
        return values.isEmpty() || values.get(0).isEmpty() ? null : values.get(0);
    }

    /** RFC 6749 §2.3.1: HTTP Basic or the form, but not both; 401 {@code invalid_client} for a wrong pair. */
    private Client authenticate(Request request, Fields form) throws OAuthError
    {
        String header = request.getHeaders().get(HttpHeader.AUTHORIZATION);
        String formId = single(form, "client_id");
        String formSecret = single(form, "client_secret");
        String id = formId;
        String secret = formSecret;
        if (header != null && header.regionMatches(true, 0, "Basic ", 0, 6))
        {
            if (formSecret != null)
                throw new OAuthError(HttpStatus.BAD_REQUEST_400, "invalid_request", "more than one client authentication method");
            String pair;
            try
            {
                pair = new String(Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
            }
            catch (IllegalArgumentException x)
            {
                throw new OAuthError(HttpStatus.UNAUTHORIZED_401, "invalid_client", "malformed Basic credentials");
            }
            int colon = pair.indexOf(':');
            if (colon < 0)
                throw new OAuthError(HttpStatus.UNAUTHORIZED_401, "invalid_client", "malformed Basic credentials");
            id = URLDecoder.decode(pair.substring(0, colon), StandardCharsets.UTF_8);
            secret = URLDecoder.decode(pair.substring(colon + 1), StandardCharsets.UTF_8);
            if (formId != null && !formId.equals(id))
                throw new OAuthError(HttpStatus.BAD_REQUEST_400, "invalid_request", "client_id differs from the Basic credentials");
        }
        Client client = id == null ? null : clients.get(id);
        if (client == null || secret == null
            || !MessageDigest.isEqual(client.secret().getBytes(StandardCharsets.UTF_8), secret.getBytes(StandardCharsets.UTF_8)))
            throw new OAuthError(HttpStatus.UNAUTHORIZED_401, "invalid_client", "client authentication failed");
        return client;
    }

    /** The requested scope if the client may have all of it (RFC 6749 §3.3), else {@code fallback} when none was asked for. */
    private static String grantedScope(Client client, String requested, String fallback) throws OAuthError
    {
        if (requested == null)
            return fallback;
        Set<String> asked = new TreeSet<>(List.of(requested.trim().split(" +")));
        if (!client.scopes().containsAll(asked))
            throw new OAuthError(HttpStatus.BAD_REQUEST_400, "invalid_scope", "not allowed for " + client.id() + ": " + requested);
        return String.join(" ", asked);
    }

    /** RFC 8707 §2 / RFC 8693 §2.1: absolute URIs without a fragment ({@code audience} may be any name). */
    private static List<String> targets(Fields form, String name) throws OAuthError
    {
        List<String> values = values(form, name).stream().filter(v -> !v.isEmpty()).toList();
        if (name.equals("resource"))
        {
            for (String value : values)
            {
                HttpURI uri = HttpURI.from(value);
                if (!uri.isAbsolute() || uri.getFragment() != null)
                    throw new OAuthError(HttpStatus.BAD_REQUEST_400, "invalid_target", "resource must be an absolute URI without a fragment: " + value);
            }
        }
        return values;
    }

    private static List<String> values(Fields form, String name)
    {
        List<String> values = form.getValues(name);
        return values == null ? List.of() : values;
    }

    private static Answer notAllowed()
    {
        return error(HttpStatus.METHOD_NOT_ALLOWED_405, "invalid_request", "method not allowed");
    }

    private static Answer error(int status, String error, String description)
    {
        return new OAuthError(status, error, description).answer;
    }
}
