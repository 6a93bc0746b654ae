package io.sandgate.testing;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;

/**
 * An in-process stand-in for HashiCorp Vault's HTTP API, on a real Jetty server at 127.0.0.1 and an
 * ephemeral port, written from Vault's API documentation. It answers exactly what the Vault
 * secret source sends:
 * <ul>
 *   <li>KV v2 under mount {@code secret} (or others added with {@link #enableKv(String)}):
 *       {@code GET /v1/{mount}/data/{path}[?version=N]} and {@code POST|PUT} of
 *       {@code {"data":{...}}} to the same path, which adds a version;</li>
 *   <li>{@code GET /v1/auth/token/lookup-self}, {@code POST /v1/auth/token/renew-self};</li>
 *   <li>{@code POST /v1/auth/approle/login} ({@code role_id}, {@code secret_id}) and
 *       {@code POST /v1/auth/kubernetes/login} ({@code role}, {@code jwt}).</li>
 * </ul>
 * Every other call needs a live {@code X-Vault-Token}, or gets 403
 * {@code {"errors":["permission denied"]}}. Token TTLs run on the real clock, so a missed renewal
 * shows as a 403. {@link #seal()} makes every call answer 503 {@code {"errors":["Vault is sealed"]}};
 * {@link #stop()} and {@link #start()} take the server down and up on the same port. Counters
 * ({@link #logins()}, {@link #renewals()}, {@link #reads()}, ...) let tests assert on traffic.
 */
public final class VaultDouble implements AutoCloseable
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CONTENT_TYPE = "application/json"; // exactly: the client compares it

    /** A token as Vault keeps it; {@code ttl} zero means it never expires (a root token). */
    private static final class TokenState
    {
        final String accessor = UUID.randomUUID().toString();
        final List<String> policies;
        final Duration ttl;
        final Duration maxTtl;
        final boolean renewable;
        final Instant issued;
        final Map<String, String> metadata;
        volatile Instant expires;
        volatile boolean revoked;

        TokenState(List<String> policies, Duration ttl, Duration maxTtl, boolean renewable, Map<String, String> metadata)
        {
            this.policies = policies;
            this.ttl = ttl;
            this.maxTtl = maxTtl;
            this.renewable = renewable;
            this.metadata = metadata;
            this.issued = Instant.now();
            this.expires = ttl.isZero() ? null : issued.plus(ttl);
        }

        boolean live()
        {
            return !revoked && (expires == null || Instant.now().isBefore(expires));
        }

        long remainingSeconds()
        {
            return expires == null ? 0 : Math.max(0, Duration.between(Instant.now(), expires).toSeconds());
        }
    }

    private record Version(Map<String, Object> data, Instant created)
    {
    }

    /** Login settings: the lease of tokens that logins hand out. */
    public record TokenPolicy(Duration ttl, Duration maxTtl, boolean renewable)
    {
    }

    private final Server server;
    private final ServerConnector connector;
    private final String rootToken = "root-" + UUID.randomUUID();
    private final Map<String, TokenState> tokens = new ConcurrentHashMap<>();
    private final Set<String> kvMounts = ConcurrentHashMap.newKeySet();
    private final Map<String, List<Version>> kv = new ConcurrentHashMap<>();
    private final Set<String> forbiddenPrefixes = ConcurrentHashMap.newKeySet();
    private final Map<String, String> appRoles = new ConcurrentHashMap<>();
    private final Map<String, String> kubernetesRoles = new ConcurrentHashMap<>();
    private final List<String> namespacesSeen = new CopyOnWriteArrayList<>();
    private final AtomicInteger logins = new AtomicInteger();
    private final AtomicInteger renewals = new AtomicInteger();
    private final AtomicInteger lookups = new AtomicInteger();
    private final AtomicInteger reads = new AtomicInteger();
    private final AtomicInteger denied = new AtomicInteger();
    private volatile TokenPolicy loginTokens = new TokenPolicy(Duration.ofHours(1), Duration.ofHours(24), true);
    private volatile boolean sealed;
    private int port;

    private VaultDouble()
    {
        server = LoopbackServers.server("vault-double");
        connector = LoopbackServers.connector(server);
        server.setHandler(new VaultHandler());
        kvMounts.add("secret");
        tokens.put(rootToken, new TokenState(List.of("root"), Duration.ZERO, Duration.ZERO, false, Map.of()));
    }

    public static VaultDouble start()
    {
        VaultDouble vault = new VaultDouble();
        vault.startServer();
        vault.port = vault.connector.getLocalPort();
        return vault;
    }

    // ------------------------------------------------------------------------ test controls

    public String address()
    {
        return "http://127.0.0.1:" + port;
    }

    /** A token with every right that never expires. */
    public String rootToken()
    {
        return rootToken;
    }

    /** A token of the default policy with that lease, as {@code vault token create} would make. */
    public String createToken(Duration ttl, Duration maxTtl, boolean renewable)
    {
        String token = "hvs." + UUID.randomUUID().toString().replace("-", "");
        tokens.put(token, new TokenState(List.of("default"), ttl, maxTtl, renewable, Map.of()));
        return token;
    }

    public void revoke(String token)
    {
        TokenState state = tokens.get(token);
        if (state != null)
            state.revoked = true;
    }

    /** Revokes every token but the root token, as after a storage wipe or mass revocation. */
    public void revokeAllButRoot()
    {
        tokens.forEach((token, state) ->
        {
            if (!token.equals(rootToken))
                state.revoked = true;
        });
    }

    /** The lease of tokens that AppRole and Kubernetes logins hand out from now on. */
    public void loginTokens(Duration ttl, Duration maxTtl, boolean renewable)
    {
        loginTokens = new TokenPolicy(ttl, maxTtl, renewable);
    }

    public void appRole(String roleId, String secretId)
    {
        appRoles.put(roleId, secretId);
    }

    public void kubernetesRole(String role, String serviceAccountJwt)
    {
        kubernetesRoles.put(role, serviceAccountJwt);
    }

    public void enableKv(String mount)
    {
        kvMounts.add(mount);
    }

    /** Writes a new version of {@code secret/{path}}; returns its version number. */
    public int put(String path, Map<String, ?> data)
    {
        return put("secret", path, data);
    }

    public int put(String mount, String path, Map<String, ?> data)
    {
        List<Version> versions = kv.computeIfAbsent(mount + "/" + path, k -> new CopyOnWriteArrayList<>());
        synchronized (versions)
        {
            versions.add(new Version(Map.copyOf(data), Instant.now()));
            return versions.size();
        }
    }

    /** Reads of KV paths starting with {@code mount/data/prefix} answer 403, for every token. */
    public void forbid(String apiPathPrefix)
    {
        forbiddenPrefixes.add(apiPathPrefix);
    }

    public void seal()
    {
        sealed = true;
    }

    public void unseal()
    {
        sealed = false;
    }

    /** Takes the server down; connections are refused until {@link #restart()}. State is kept. */
    public void stop()
    {
        try
        {
            server.stop();
        }
        catch (Exception x)
        {
            throw new IllegalStateException("cannot stop the vault double", x);
        }
    }

    /** Brings the server up again on the same port. */
    public void restart()
    {
        connector.setPort(port);
        startServer();
    }

    public int logins()
    {
        return logins.get();
    }

    public int renewals()
    {
        return renewals.get();
    }

    public int lookups()
    {
        return lookups.get();
    }

    public int reads()
    {
        return reads.get();
    }

    /** Calls answered 403. */
    public int denied()
    {
        return denied.get();
    }

    /** {@code X-Vault-Namespace} values received, in order. */
    public List<String> namespacesSeen()
    {
        return List.copyOf(namespacesSeen);
    }

    @Override
    public void close()
    {
        stop();
    }

    private void startServer()
    {
        try
        {
            server.start();
        }
        catch (Exception x)
        {
            throw new IllegalStateException("cannot start the vault double", x);
        }
    }

    // ------------------------------------------------------------------------------ the API

    private record Answer(int status, Object body)
    {
        static Answer errors(int status, String... errors)
        {
            return new Answer(status, Map.of("errors", List.of(errors)));
        }
    }

    private final class VaultHandler extends Handler.Abstract
    {
        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            String body = Content.Source.asString(request, StandardCharsets.UTF_8);
            String namespace = request.getHeaders().get("X-Vault-Namespace");
            if (namespace != null)
                namespacesSeen.add(namespace);
            Answer answer = sealed ? Answer.errors(503, "Vault is sealed") : route(request, body);
            if (answer.status() == 403)
                denied.incrementAndGet();
            response.setStatus(answer.status());
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, CONTENT_TYPE);
            response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
            byte[] json = answer.body() == null ? new byte[0] : JSON.writeValueAsBytes(answer.body());
            response.write(true, java.nio.ByteBuffer.wrap(json), callback);
            return true;
        }
    }

    private Answer route(Request request, String body) throws Exception
    {
        String method = request.getMethod();
        String path = Request.getPathInContext(request);
        if (!path.startsWith("/v1/"))
            return Answer.errors(404);
        path = path.substring("/v1/".length());
        boolean write = "POST".equals(method) || "PUT".equals(method);
        JsonNode json = body.isBlank() ? JSON.createObjectNode() : JSON.readTree(body);

        if (write && path.equals("auth/approle/login"))
            return appRoleLogin(json);
        if (write && path.equals("auth/kubernetes/login"))
            return kubernetesLogin(json);

        String tokenHeader = request.getHeaders().get("X-Vault-Token");
        TokenState caller = tokenHeader == null ? null : tokens.get(tokenHeader);
        if (caller == null || !caller.live())
            return Answer.errors(403, "permission denied");

        if ("GET".equals(method) && path.equals("auth/token/lookup-self"))
            return lookupSelf(tokenHeader, caller);
        if (write && path.equals("auth/token/renew-self"))
            return renewSelf(tokenHeader, caller, json);

        int data = path.indexOf("/data/");
        if (data > 0 && kvMounts.contains(path.substring(0, data)))
        {
            String mount = path.substring(0, data);
            String key = path.substring(data + "/data/".length());
            for (String prefix : forbiddenPrefixes)
            {
                if (path.startsWith(prefix) && !caller.policies.contains("root"))
                    return Answer.errors(403, "permission denied");
            }
            if ("GET".equals(method))
            {
                Fields query = Request.extractQueryParameters(request);
                return kvRead(mount, key, query.getValue("version"));
            }
            if (write)
                return kvWrite(mount, key, json);
        }
        return Answer.errors(404, "no handler for route \"" + path + "\". route entry not found.");
    }

    private Answer kvRead(String mount, String key, String versionParameter)
    {
        reads.incrementAndGet();
        List<Version> versions = kv.get(mount + "/" + key);
        if (versions == null || versions.isEmpty())
            return Answer.errors(404);
        int number = versions.size();
        if (versionParameter != null && !versionParameter.isEmpty() && !"0".equals(versionParameter))
            number = Integer.parseInt(versionParameter);
        if (number < 1 || number > versions.size())
            return Answer.errors(404);
        Version version = versions.get(number - 1);
        return new Answer(200, envelope(Map.of("data", version.data(), "metadata", metadata(version.created(), number)), null));
    }

    private Answer kvWrite(String mount, String key, JsonNode json) throws Exception
    {
        JsonNode data = json.get("data");
        if (data == null || !data.isObject())
            return Answer.errors(400, "no data provided");
        @SuppressWarnings("unchecked")
        Map<String, Object> values = JSON.treeToValue(data, Map.class);
        int number = put(mount, key, values);
        return new Answer(200, envelope(metadata(Instant.now(), number), null));
    }

    /** A version's metadata as KV v2 returns it on reads and writes; a live version, never deleted. */
    private static Map<String, Object> metadata(Instant created, int number)
    {
        // A LinkedHashMap, since Map.of refuses the null that custom_metadata holds.
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("created_time", created.toString());
        metadata.put("custom_metadata", null);
        metadata.put("deletion_time", "");
        metadata.put("destroyed", false);
        metadata.put("version", number);
        return metadata;
    }

    private Answer lookupSelf(String token, TokenState state)
    {
        lookups.incrementAndGet();
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("accessor", state.accessor);
        data.put("creation_time", state.issued.getEpochSecond());
        data.put("creation_ttl", state.ttl.toSeconds());
        data.put("display_name", "token");
        data.put("entity_id", "");
        data.put("expire_time", state.expires == null ? null : state.expires.toString());
        data.put("explicit_max_ttl", state.maxTtl.toSeconds());
        data.put("id", token);
        data.put("issue_time", state.issued.toString());
        data.put("meta", state.metadata.isEmpty() ? null : state.metadata);
        data.put("num_uses", 0);
        data.put("orphan", true);
        data.put("path", "auth/token/create");
        data.put("policies", state.policies);
        data.put("renewable", state.renewable);
        data.put("ttl", state.remainingSeconds());
        data.put("type", "service");
        return new Answer(200, envelope(data, null));
    }

    private Answer renewSelf(String token, TokenState state, JsonNode json)
    {
        if (!state.renewable)
            return Answer.errors(400, "lease is not renewable");
        Duration increment = state.ttl;
        JsonNode requested = json.get("increment");
        if (requested != null && requested.canConvertToLong() && requested.asLong() > 0)
            increment = Duration.ofSeconds(requested.asLong());
        Instant now = Instant.now();
        Instant expires = now.plus(increment);
        List<String> warnings = null;
        if (!state.maxTtl.isZero() && expires.isAfter(state.issued.plus(state.maxTtl)))
        {
            // Vault caps the lease at what is left of the max TTL, and says so.
            expires = state.issued.plus(state.maxTtl);
            warnings = List.of("TTL of \"" + increment.toSeconds() + "s\" exceeded the effective max_ttl; TTL value is capped accordingly");
        }
        state.expires = expires;
        renewals.incrementAndGet();
        return new Answer(200, envelope(null, auth(token, state, Math.max(0, Duration.between(now, expires).toSeconds())), warnings));
    }

    private Answer appRoleLogin(JsonNode json)
    {
        String roleId = text(json, "role_id");
        String secretId = text(json, "secret_id");
        if (roleId == null || !appRoles.containsKey(roleId))
            return Answer.errors(400, "invalid role or secret ID");
        if (!appRoles.get(roleId).equals(secretId))
            return Answer.errors(400, "invalid role or secret ID");
        return login(Map.of("role_name", roleId));
    }

    private Answer kubernetesLogin(JsonNode json)
    {
        String role = text(json, "role");
        String jwt = text(json, "jwt");
        if (role == null || !kubernetesRoles.containsKey(role))
            return Answer.errors(400, "invalid role name \"" + role + "\"");
        if (!kubernetesRoles.get(role).equals(jwt))
            return Answer.errors(403, "permission denied");
        return login(Map.of("role", role, "service_account_name", "sandgate", "service_account_namespace", "default"));
    }

    private Answer login(Map<String, String> metadata)
    {
        TokenPolicy policy = loginTokens;
        String token = "hvs." + UUID.randomUUID().toString().replace("-", "");
        TokenState state = new TokenState(List.of("default", "sandgate"), policy.ttl(), policy.maxTtl(), policy.renewable(), metadata);
        tokens.put(token, state);
        logins.incrementAndGet();
        return new Answer(200, envelope(null, auth(token, state, policy.ttl().toSeconds()), null));
    }

    private static Map<String, Object> auth(String token, TokenState state, long leaseSeconds)
    {
        Map<String, Object> auth = new LinkedHashMap<>();
        auth.put("client_token", token);
        auth.put("accessor", state.accessor);
        auth.put("policies", state.policies);
        auth.put("token_policies", state.policies);
        auth.put("metadata", state.metadata.isEmpty() ? null : state.metadata);
        auth.put("lease_duration", leaseSeconds);
        auth.put("renewable", state.renewable);
        auth.put("entity_id", "");
        auth.put("token_type", "service");
        auth.put("orphan", true);
        return auth;
    }

    private static Map<String, Object> envelope(Object data, Map<String, Object> auth)
    {
        return envelope(data, auth, null);
    }

    /** The fields every Vault response carries around {@code data} and {@code auth}. */
    private static Map<String, Object> envelope(Object data, Map<String, Object> auth, List<String> warnings)
    {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("request_id", UUID.randomUUID().toString());
        body.put("lease_id", "");
        body.put("renewable", false);
        body.put("lease_duration", 0);
        body.put("data", data);
        body.put("wrap_info", null);
        body.put("warnings", warnings);
        body.put("auth", auth);
        return body;
    }

    private static String text(JsonNode json, String field)
    {
        JsonNode node = json.get(field);
        return node == null || !node.isTextual() ? null : node.asText();
    }
}
