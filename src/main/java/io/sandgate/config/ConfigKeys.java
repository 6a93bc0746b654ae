package io.sandgate.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import io.sandgate.core.Secret;
import io.sandgate.net.Cidr;

import static io.sandgate.config.ValueParser.bool;
import static io.sandgate.config.ValueParser.duration;
import static io.sandgate.config.ValueParser.integer;
import static io.sandgate.config.ValueParser.list;
import static io.sandgate.config.ValueParser.listOf;
import static io.sandgate.config.ValueParser.map;
import static io.sandgate.config.ValueParser.matching;
import static io.sandgate.config.ValueParser.oneOf;
import static io.sandgate.config.ValueParser.positiveDuration;
import static io.sandgate.config.ValueParser.ratio;
import static io.sandgate.config.ValueParser.regex;
import static io.sandgate.config.ValueParser.string;

/**
 * Every setting Sandgate knows, in the order of the reference table in docs/configuration.md. A key that is
 * not listed here stops start-up.
 */
public final class ConfigKeys
{
    /** Filled by the declarations below, in their order; first so that it exists before them. */
    private static final List<ConfigKey<?>> DECLARED = new ArrayList<>();

    public static final ConfigKey<String> CONFIG = key("config", "conf/sandgate.yaml", string(),
        "Path of the YAML file; a missing file is an error unless it is this default.");

    public static final ConfigKey<String> SERVER_HOST = key("server.host", "0.0.0.0", string(),
        "Embedded runner: address to listen on.");
    public static final ConfigKey<Integer> SERVER_PORT = key("server.port", "8080", integer(0, 65535),
        "Embedded runner: HTTP port (0 picks a free one).");
    public static final ConfigKey<Integer> SERVER_MAX_THREADS = key("server.max-threads", "200", integer(8, 10_000),
        "Embedded runner: size of the thread pool. The listeners' selectors come from it (the public one's, which also run ingress, one per core up to an eighth of it; the others' up to a thirty-second), and the runner refuses to start when they leave less than half of it to run requests. Half of it may wait for Redis at once (`store.redis.timeout`); in a servlet container, set it to the container's pool size.");
    public static final ConfigKey<Integer> SERVER_MAX_CONCURRENT_REQUESTS_PER_CLIENT = key("server.max-concurrent-requests-per-client", "256",
        integer(1, 1_000_000), "Requests one client (its trusted address, or an egress agent by its token) may have in progress at once (429 above); established WebSockets and MCP streams do not count.");
    public static final ConfigKey<Integer> SERVER_MAX_CONNECTIONS_PER_CLIENT = key("server.max-connections-per-client", "1024",
        integer(1, 1_000_000), "Embedded runner: connections one client address (an IPv6 one by its /64, `server.client-ipv6-prefix`) may hold open at once, all listeners together, idle and upgraded ones included; a connection above it is closed as soon as it is accepted. Trusted proxies (`ingress.trusted-proxies`) are not counted; raise it where many clients reach the gateway from one address (a NAT).");
    public static final ConfigKey<Integer> SERVER_MAX_CONNECTIONS = keyWithoutDefault("server.max-connections", "(from the descriptor limit)",
        integer(16, 100_000_000), "Embedded runner: connections the listeners hold open at once, all clients together. At the cap, the connections that have waited longest for a request (idle between requests, nothing received yet, or a head not yet whole) are closed to admit new ones, as nginx reuses connections; when none waits, a new connection is closed as it is accepted. Unset, it is half of what the process's file descriptor limit leaves after a tenth (at least 256) for its own files: each connection may hold one to its upstream.");
    public static final ConfigKey<Duration> SERVER_HEAD_TIMEOUT = key("server.head-timeout", "30s", positiveDuration(),
        "Embedded runner: how long a request's head (request line and header fields) may take to arrive, from its first byte; a connection whose head is not whole by then is closed, however steadily its bytes trickle in. The wait for a request before its first byte is `server.idle-timeout`'s.");
    public static final ConfigKey<Integer> SERVER_CLIENT_IPV6_PREFIX = key("server.client-ipv6-prefix", "64", integer(16, 128),
        "The per-client limits (`server.max-connections-per-client`, `server.max-concurrent-requests-per-client`, `mcp.max-sessions-per-client`, `mcp.max-streams-per-client`) count an IPv6 client by this many leading bits of its address: a host given a /64 can take a new address from it for every connection. Set 128 where distinct clients share a /64, as the pods of one Kubernetes node do in an IPv6 cluster (one address each from the node's range); with `server.internal-port` set, the internal listener's clients are counted by `server.internal-client-ipv6-prefix` instead.");
    public static final ConfigKey<Integer> SERVER_INTERNAL_CLIENT_IPV6_PREFIX = key("server.internal-client-ipv6-prefix", "128", integer(16, 128),
        "Embedded runner, with `server.internal-port` set: as `server.client-ipv6-prefix`, for the clients of the internal listener (sandboxes and agents calling MCP and egress). They are the cluster's pods, and in an IPv6 cluster the pods of a node share its /64, one address each, which a pod cannot change without `NET_ADMIN`: so each address is a client. Set 64 where a client of that listener can take any address of its /64.");
    public static final ConfigKey<Duration> SERVER_STOP_TIMEOUT = key("server.stop-timeout", "10s", duration(),
        "Embedded runner: how long a stop waits for exchanges in flight.");
    public static final ConfigKey<Duration> DRAIN_GRACE = key("server.drain.grace", "5s", duration(),
        "Drain (SIGTERM, `POST /admin/drain`): how long the listeners keep serving after `/readyz` turned 503, for the balancer to notice.");
    public static final ConfigKey<Duration> DRAIN_SPREAD = key("server.drain.spread", "10s", duration(),
        "Drain: bridged WebSockets are closed with 1012 (service restart) spread evenly over this time, so their clients reconnect to other replicas without a herd.");
    public static final ConfigKey<Duration> DRAIN_TIMEOUT = key("server.drain.timeout", "30s", positiveDuration(),
        "Drain: the process exits when nothing is left open, or at this time after the drain began.");
    public static final ConfigKey<Duration> SERVER_IDLE_TIMEOUT = key("server.idle-timeout", "75s", positiveDuration(),
        "Embedded runner: how long a client's connection may stay idle while the gateway waits on the client (for its next request, more of a body, or room to write) before it is closed; keep it above the idle timeout of a load balancer in front (AWS ALB's is 60 s), or the balancer sends requests on connections the gateway is closing.");
    public static final ConfigKey<Integer> SERVER_INTERNAL_PORT = key("server.internal-port", null, integer(0, 65535),
        "Embedded runner: when set, MCP, egress (CONNECT included), admin and metrics are served only on this port and `server.port` serves ingress and health.");
    public static final ConfigKey<ServerConfig.IngressFrontEnd> SERVER_INGRESS_FRONT_END = key("server.ingress-front-end", "core",
        oneOf(ServerConfig.IngressFrontEnd.class),
        "Embedded runner: `core` serves ingress HTTP on Jetty's core API, `servlet` on the servlets the WAR uses; WebSocket upgrades go through the servlets either way.");
    public static final ConfigKey<List<String>> SERVER_PUBLIC_ORIGINS = key("server.public-origins", null, list(),
        "Origins users reach the gateway under (`https://gw.example`); requests carrying an `Origin` are accepted from these, loopback origins and each face's own allow-list, except by host-mode sandboxes (see `ingress.host-mode.allowed-origins`). Host-mode links (grants, the dashboard's) take their scheme and port from the first of these.");
    public static final ConfigKey<Boolean> INGRESS_ENABLED = key("ingress.enabled", "true", bool(),
        "Serve the ingress face.");
    public static final ConfigKey<Boolean> MCP_ENABLED = key("mcp.enabled", "true", bool(),
        "Serve the MCP face.");
    public static final ConfigKey<Boolean> EGRESS_ENABLED = key("egress.enabled", "true", bool(),
        "Serve the egress face.");

    public static final ConfigKey<StoreConfig.Type> STORE_TYPE = key("store.type", "memory", oneOf(StoreConfig.Type.class),
        "`memory` (single replica) or `redis` (shared by all replicas).");
    public static final ConfigKey<String> REDIS_ADDRESS = key("store.redis.address", "redis://127.0.0.1:6379", string(),
        "Single Redis server (`redis://` or `rediss://`).");
    public static final ConfigKey<List<String>> REDIS_CLUSTER_NODES = key("store.redis.cluster-nodes", null, list(),
        "Redis Cluster seed nodes; when set, used instead of the single address.");
    public static final ConfigKey<List<String>> REDIS_SENTINEL_NODES = key("store.redis.sentinel-nodes", null, list(),
        "Redis Sentinel nodes; needs `store.redis.sentinel-master`.");
    public static final ConfigKey<String> REDIS_SENTINEL_MASTER = key("store.redis.sentinel-master", null, string(),
        "Master name watched by the sentinels.");
    public static final ConfigKey<String> REDIS_USERNAME = key("store.redis.username", null, string(),
        "Redis ACL user.");
    public static final ConfigKey<Secret> REDIS_PASSWORD = secret("store.redis.password", "(none)",
        "Redis password (redacted wherever config is shown).");
    public static final ConfigKey<Integer> REDIS_DATABASE = key("store.redis.database", "0", integer(0, 15),
        "Redis database number (single and sentinel modes).");
    public static final ConfigKey<Duration> REDIS_TIMEOUT = key("store.redis.timeout", "1s", positiveDuration(),
        "Redis command timeout; a route miss while Redis is down fails after this. At most half of `server.max-threads` wait for Redis at once; calls beyond fail (503) once Redis has not answered for 100 ms.");
    public static final ConfigKey<Duration> REDIS_REVALIDATE_INTERVAL = key("store.redis.revalidate-interval", "30s", positiveDuration(),
        "Cached routes are re-read this often even without change notifications (a safety net).");
    public static final ConfigKey<Duration> REDIS_POLL_INTERVAL = key("store.redis.poll-interval", "500ms", positiveDuration(),
        "Re-read interval of the route table when keyspace notifications cannot be enabled on the server. When set, also the interval of the MCP sessions' safety poll (otherwise 30s), which checks each session served for a message whose wake-up was lost; a pub/sub reconnect checks at once (docs/CAPACITY.md).");
    public static final ConfigKey<Duration> REDIS_NEGATIVE_CACHE_TTL = key("store.redis.negative-cache-ttl", "2s", duration(),
        "How long a replica believes Redis that a sandbox id has no route, so that repeated lookups of such an id (a browser polling a sandbox not yet ready, made-up ids) do not each cost a Redis read; a change to the route hash ends it at once. `0s` turns it off.");

    public static final ConfigKey<String> INGRESS_PREFIX = key("ingress.prefix", "/vnc/", matching("/([A-Za-z0-9._~-]+/)+", "a path that starts and ends with '/', such as /vnc/", "path starting and ending with /"),
        "Ingress mount; starts and ends with `/`.");
    public static final ConfigKey<Pattern> INGRESS_ID_PATTERN = key("ingress.id-pattern", "\\d+", regex(),
        "Sandbox id pattern, always matched whole.");
    public static final ConfigKey<Integer> INGRESS_ID_MAX_LENGTH = key("ingress.id-max-length", "64", integer(1, 255),
        "Longer ids are answered 400.");
    public static final ConfigKey<String> INGRESS_ROUTES_KEY = key("ingress.routes-key", "vnc_sandboxes", string().where(k -> !k.isBlank(), "a Redis key name", "non-blank Redis key"),
        "Redis hash of sandbox id -> `host:port`.");
    public static final ConfigKey<Map<String, String>> INGRESS_STATIC_ROUTES = key("ingress.static-routes", null, map(),
        "Routes loaded into the in-memory store at start (`id: host:port`).");
    public static final ConfigKey<String> INGRESS_HEADER = key("ingress.header", "X-Sandbox-Id", matching("[A-Za-z0-9-]+", "a header name"),
        "Request header naming the sandbox, the last resolution step.");
    public static final ConfigKey<String> INGRESS_HOST_PATTERN = key("ingress.host-pattern", null, string(),
        "Host mode: a Host of this shape (`{id}.sbx.example.com`, or `{port}-{id}.sbx.example.com`) is that sandbox's own origin and gets its whole path; other hosts keep path mode.");
    public static final ConfigKey<List<Integer>> INGRESS_SANDBOX_PORTS = key("ingress.sandbox-ports", null,
        listOf(integer(1, 65535)::parse, "ports from 1 to 65535, such as 6080,8888", "list of ports 1–65535"),
        "Sandbox ports a `{port}` in `ingress.host-pattern` may name besides the route's own.");
    public static final ConfigKey<Boolean> INGRESS_PATH_MODE = key("ingress.path-mode", "true", bool(),
        "Serve sandboxes under `ingress.prefix` on the gateway's own hosts (`/vnc/{id}/`). `false` needs `ingress.host-pattern`: each sandbox is then served on its own host only, and those paths answer 404; path-mode pages of every sandbox share the gateway's origin.");
    public static final ConfigKey<List<String>> INGRESS_HOST_MODE_ALLOWED_ORIGINS = key("ingress.host-mode.allowed-origins", null, list(),
        "Host mode: origins (`https://app.example`) whose pages may open a sandbox's WebSockets, or send it a request with an unsafe method (POST, PUT, PATCH, DELETE, ...), besides the sandbox's own origin. Nothing else is: not `server.public-origins`, loopback origins or `ingress.websocket.allowed-origins`, under which path-mode pages of every sandbox run; `*` is refused.");
    public static final ConfigKey<String> COOKIE_NAME = key("ingress.cookie.name", "vnc_session_id", matching("[A-Za-z0-9_!#$%&'*+.^`|~-]+", "a cookie name token"),
        "Session cookie name.");
    public static final ConfigKey<Secret> COOKIE_SECRET = secret("ingress.cookie.secret", "random per start, with a warning", ValueParser.secret(16),
        "HMAC key for session cookies and grants; set it (same on every replica) in production.");
    public static final ConfigKey<Duration> COOKIE_TTL = key("ingress.cookie.ttl", "12h", positiveDuration(),
        "How long the browser keeps the session cookie after it was last set; in `open` mode also the lifetime of an entry, renewed whenever its sandbox is opened again.");
    public static final ConfigKey<CookieConfig.SecureMode> COOKIE_SECURE = key("ingress.cookie.secure", "auto", oneOf(CookieConfig.SecureMode.class),
        "`auto` (Secure behind HTTPS), `always` or `never`.");
    public static final ConfigKey<Integer> COOKIE_MAX_SANDBOXES = key("ingress.cookie.max-sandboxes", "8", integer(1, 32),
        "Sandboxes one browser may hold in its cookie at once (tabs on several sandboxes).");
    public static final ConfigKey<IngressConfig.Access> INGRESS_ACCESS = key("ingress.access", "open", oneOf(IngressConfig.Access.class),
        "`open`, or `signed`: the first URL must carry a grant token.");
    public static final ConfigKey<String> GRANT_PARAM = key("ingress.grant.param", "sandgate_grant", matching("[A-Za-z0-9_.-]+", "letters, digits, '_', '.', '-'"),
        "Query parameter that carries a grant token in `signed` mode.");
    public static final ConfigKey<Duration> INGRESS_SESSION_MAX_AGE = key("ingress.session-max-age", "12h", positiveDuration(),
        "`signed` mode: the access a grant opens ends this long after redemption at the latest (sooner if the grant sets a shorter limit); never renewed.");
    public static final ConfigKey<List<Cidr>> TRUSTED_PROXIES = key("ingress.trusted-proxies", null,
        listOf(Cidr::parse, "IP literals with an optional /prefix, such as 10.0.0.0/8", "list of CIDRs"),
        "CIDRs whose X-Forwarded-* headers are kept; from anyone else they are dropped.");
    public static final ConfigKey<Duration> INGRESS_IDLE_TIMEOUT = key("ingress.idle-timeout", "3600s", positiveDuration(),
        "Idle timeout of an exchange with a sandbox (no total timeout).");
    public static final ConfigKey<Duration> INGRESS_CONNECT_TIMEOUT = key("ingress.connect-timeout", "5s", positiveDuration(),
        "Connect timeout towards a sandbox.");
    public static final ConfigKey<Duration> INGRESS_DESTINATION_IDLE_TIMEOUT = key("ingress.destination-idle-timeout", "60s", positiveDuration(),
        "Connection pools to sandbox addresses unused this long are released (pod IPs churn).");
    public static final ConfigKey<Integer> INGRESS_MAX_CONNECTIONS = key("ingress.max-connections-per-sandbox", "256", integer(1, 65_535),
        "Connection pool size towards one sandbox address.");
    public static final ConfigKey<Integer> ROUTE_CACHE_SIZE = key("ingress.route-cache-size", "100000", integer(16, 10_000_000),
        "Routes kept in each replica's local cache; as many ids known to have no route are kept beside them (`store.redis.negative-cache-ttl`).");
    public static final ConfigKey<Integer> INGRESS_ROUTE_MISSES_PER_CLIENT = key("ingress.route-misses-per-client-per-minute", "600", integer(1, 100_000_000),
        "Lookups of sandboxes that have no route one client may make per minute, a minute's worth at once; past it, its requests for sandboxes this replica has no route cached for are refused (429, `Retry-After`) without asking the store. Cached routes are never refused. Bounds what a client spraying made-up ids costs Redis, and how fast it learns which ids are live.");

    public static final ConfigKey<Duration> WS_PING_INTERVAL = key("ingress.websocket.ping-interval", "15s", positiveDuration(),
        "Ping both legs of a bridged WebSocket this often, so idle proxies and NATs keep it open.");
    public static final ConfigKey<Duration> WS_IDLE_TIMEOUT = key("ingress.websocket.idle-timeout", "3600s", positiveDuration(),
        "A bridged WebSocket with no frame either way for this long is closed (1001).");
    public static final ConfigKey<Integer> WS_MAX_MESSAGE_SIZE = key("ingress.websocket.max-message-size", "16777216", integer(1024, Integer.MAX_VALUE),
        "Largest WebSocket message tunnelled, in bytes as on the wire (compressed when the endpoints negotiated compression); larger ones close the session (1009).");
    public static final ConfigKey<List<String>> WS_ALLOWED_ORIGINS = key("ingress.websocket.allowed-origins", null, list(),
        "Path mode: origins (`https://app.example`) that may open sandbox WebSockets besides loopback ones and `server.public-origins`; `*` allows any. Host mode has its own list, `ingress.host-mode.allowed-origins`.");

    public static final ConfigKey<String> WAKE_URL = key("ingress.wake.url", null, matching("https?://\\S+", "an http:// or https:// URL"),
        "Sandbox lifecycle: the sandbox manager's resume endpoint. A request for a paused sandbox makes one replica POST `{\"sandbox\": \"<id>\", \"reason\": \"traffic\"}` to it (2xx: accepted; 5xx, 429 or no answer: retried with back-off; any other status: refused), then every request for that sandbox waits, without a thread, until its route turns running. Unset (and `ingress.wake.kubernetes` off), a paused sandbox answers 503.");
    public static final ConfigKey<Secret> WAKE_TOKEN = secret("ingress.wake.token", "(none)",
        "Sandbox lifecycle: bearer token sent to `ingress.wake.url` and `ingress.idle.url`.");
    public static final ConfigKey<Boolean> WAKE_KUBERNETES = key("ingress.wake.kubernetes", "false", bool(),
        "Sandbox lifecycle: resume (and, with `ingress.idle.after`, pause) a sandbox by patching its agent-sandbox `Sandbox` resource (the one named by its id, in a watched namespace) running (suspended): `spec.operatingMode` `Running` (`Suspended`), or with `controlplane.watcher.sandbox-api: v1alpha1` `spec.replicas` 1 (0). Through the pod watcher's Kubernetes client, instead of calling a URL; needs `controlplane.watcher.enabled` and `controlplane.watcher.sandbox-api`.");
    public static final ConfigKey<Duration> WAKE_TIMEOUT = key("ingress.wake.timeout", "30s", positiveDuration(),
        "Sandbox lifecycle: how long a request waits for its paused sandbox to run; then 503 with `Retry-After` (a browser's page navigation gets a page that reloads itself).");
    public static final ConfigKey<Integer> WAKE_MAX_WAITING = key("ingress.wake.max-waiting", "256", integer(1, 1_000_000),
        "Sandbox lifecycle: requests that may wait for one sandbox to wake on a replica; more get 503 with `Retry-After` at once.");
    public static final ConfigKey<Integer> WAKE_MAX_WAITING_TOTAL = key("ingress.wake.max-waiting-total", "4096", integer(1, 10_000_000),
        "Sandbox lifecycle: requests that may wait for sandboxes to wake on a replica, all sandboxes together; more get 503 with `Retry-After` at once.");
    public static final ConfigKey<Boolean> WAKE_ON_MISS = key("ingress.wake.on-miss", "false", bool(),
        "Sandbox lifecycle: also ask the manager to resume a sandbox that has no route at all (for platforms that remove the routes of paused sandboxes), and wait for its route to appear; off, such a request is 404.");
    public static final ConfigKey<Duration> ACTIVITY_FLUSH = key("ingress.activity.flush", "10s", positiveDuration(),
        "Sandbox lifecycle: how often a replica writes to the store when each sandbox it carried traffic for last did so (requests, and WebSocket data frames either way): at most once per sandbox per flush, all sandboxes in one pipelined write.");
    public static final ConfigKey<Duration> IDLE_AFTER = key("ingress.idle.after", null, positiveDuration(),
        "Sandbox lifecycle: pause a sandbox that carried no traffic on any replica for this long (the leader asks `ingress.idle.url` or the Kubernetes backend, once per idle spell). Unset: never.");
    public static final ConfigKey<String> IDLE_URL = key("ingress.idle.url", null, matching("https?://\\S+", "an http:// or https:// URL"),
        "Sandbox lifecycle: the sandbox manager's pause endpoint; the leader POSTs `{\"sandbox\": \"<id>\", \"reason\": \"idle\"}` to it, as `ingress.wake.url`.");
    public static final ConfigKey<Boolean> IDLE_COUNT_OPEN_WEBSOCKETS = key("ingress.idle.count-open-websockets", "true", bool(),
        "Sandbox lifecycle: a sandbox with an open WebSocket on any replica is never paused, however quiet; false pauses it by its traffic alone.");

    public static final ConfigKey<List<Map<?, ?>>> MCP_SERVERS = key("mcp.servers", null, ValueParser.listOfMaps(),
        "Upstream MCP servers: `[{name, url, transport, tools, auth, quota, credential, pin}]`, served at `/mcp/{name}/`; transport `streamable` (default), `sse` (2024-11-05) "
            + "or `stateless` (2026-07-28 only); `tools: {allow: [globs], deny: [globs], scopes: {scope: [globs]}}` hides tools from lists and calls; "
            + "`quota: {calls, window, tools: {name: calls}}` per caller across replicas; `credential: {secret, header, format}` or `{token-exchange: {url, client-id, client-secret, audience, scope}}` "
            + "is what the server gets instead of the client's token (docs/mcp-auth.md); "
            + "`pin: off` (default), `warn` or `enforce` pins tool definitions by digest at their first list: a changed or new tool is reported and, enforced, hidden and refused until approved in the admin API (docs/mcp-pinning.md).");
    public static final ConfigKey<List<Map<?, ?>>> MCP_FEDERATIONS = key("mcp.federations", null, ValueParser.listOfMaps(),
        "Several MCP servers as one: `[{name, servers: [names of mcp.servers], prefix: always or when-needed, separator}]`, served at `/mcp/{name}/mcp`; "
            + "names get `{server}{separator}` (default `__`) always, or only where they clash (docs/mcp-federation.md).");
    public static final ConfigKey<Map<String, ?>> MCP_AUTH = key("mcp.auth", null, ValueParser.structuredMap(),
        "MCP endpoints as OAuth 2.1 resource servers: `{issuers, jwks-url or introspection: {url, client-id, client-secret}, audiences, scopes, algorithms, clock-skew, resource-url, authorization-servers}`; "
            + "each server's `auth` overrides it key by key, `auth: off` leaves one open. Unset: the endpoints are open to any caller (docs/mcp-auth.md).");
    public static final ConfigKey<Boolean> MCP_PRINCIPAL_LABEL = key("mcp.principal-label", "false", bool(),
        "Label the tool-call counters with the caller (issuer and subject): one time series per caller, so only where callers are few.");
    public static final ConfigKey<Duration> MCP_KEEPALIVE = key("mcp.keepalive-interval", "15s", positiveDuration(),
        "SSE comment sent on idle client streams so that proxies do not cut them.");
    public static final ConfigKey<Duration> MCP_SESSION_TTL = key("mcp.session-ttl", "30m", positiveDuration(),
        "An MCP session unused this long expires on every replica.");
    public static final ConfigKey<Integer> MCP_REPLAY_BUFFER = key("mcp.replay-buffer", "1000", integer(1, 1_000_000),
        "Events kept per session for `Last-Event-ID` resume.");
    public static final ConfigKey<Integer> MCP_REPLAY_BUFFER_BYTES = key("mcp.replay-buffer-bytes", "16777216", integer(65536, Integer.MAX_VALUE),
        "Bytes of messages kept per session for `Last-Event-ID` resume, besides `mcp.replay-buffer`'s count; the oldest go first, the newest is always kept. A client that falls further behind its stream loses the oldest, as beyond the count.");
    public static final ConfigKey<Integer> MCP_REPLAY_BUFFER_BYTES_PER_CLIENT = key("mcp.replay-buffer-bytes-per-client", "67108864", integer(65536, Integer.MAX_VALUE),
        "Memory store: bytes of messages the logs of one client's sessions keep together (a client may hold `mcp.max-sessions-per-client` of them); past it the session being written to loses its oldest first, its newest always kept. The Redis store bounds a client by the product of the two (docs/CAPACITY.md).");
    public static final ConfigKey<Integer> MCP_MAX_BODY = key("mcp.max-body-size", "4194304", integer(1024, 256 * 1024 * 1024),
        "Largest JSON-RPC request body accepted, in bytes (413 above); also the most of a federation member's answer read whole (a list page, initialize), over which the member is left out.");
    public static final ConfigKey<Integer> MCP_MAX_SESSIONS_PER_CLIENT = key("mcp.max-sessions-per-client", "256", integer(1, 1_000_000),
        "Live 2025-era sessions one client address (the trusted one) may hold across replicas (429 above); DELETE or `mcp.session-ttl` frees them.");
    public static final ConfigKey<Integer> MCP_MAX_STREAMS_PER_CLIENT = key("mcp.max-streams-per-client", "64", integer(1, 1_000_000),
        "Client streams (SSE, GET) one client address may hold open on one replica (429 above).");
    public static final ConfigKey<List<String>> MCP_ALLOWED_ORIGINS = key("mcp.allowed-origins", null, list(),
        "Browser origins allowed on MCP endpoints besides the gateway's own; `*` allows any. Requests without Origin pass.");

    public static final ConfigKey<List<Map<?, ?>>> EGRESS_ROUTES = key("egress.routes", null, ValueParser.listOfMaps(),
        "Egress route table, first match wins: `match.domains`, `match.task_type`, `upstream`, `timeout`, `retry`, `sticky_session`, `sticky_ttl`, `scheme`, `credential`, `scan`, `scan_responses`, `max_body_size` (bytes, default 10485760: larger request bodies get 413 and reach no node), `inspect` (default false: CONNECT tunnels of the route are opened with a leaf of the gateway's CA and their requests served as base-URL ones).");
    public static final ConfigKey<Map<String, ?>> EGRESS_POOLS = key("egress.pools", null, ValueParser.structuredMap(),
        "Egress node pools: `{name: {region, nodes: [{id, address, region, weight}]}}`.");
    public static final ConfigKey<Duration> EGRESS_TIMEOUT = key("egress.timeout", "30s", duration(),
        "Total time of one egress exchange when the route sets none.");
    public static final ConfigKey<Duration> EGRESS_CONNECT_TIMEOUT = key("egress.connect-timeout", "3s", duration(),
        "Connect timeout towards an egress node.");
    public static final ConfigKey<Duration> EGRESS_FIRST_BYTE_TIMEOUT = key("egress.first-byte-timeout", "10s", duration(),
        "Longest silence from the target, before the first byte and between bytes.");
    public static final ConfigKey<Double> EGRESS_RETRY_BUDGET = key("egress.retry-budget", "0.2", ValueParser.ratio(),
        "Retries allowed as a share of recent requests, so failures cannot snowball.");
    public static final ConfigKey<Duration> EGRESS_RETRY_BACKOFF = key("egress.retry-backoff", "50ms", duration(),
        "First retry back-off; doubles per attempt, with full jitter.");
    public static final ConfigKey<List<String>> EGRESS_NODE_ERROR_HEADERS = key("egress.node-error-headers", "Proxy-Status,X-Proxy-Error,X-Squid-Error,Server: tinyproxy/", list(),
        "Headers (a name, or `Name: value-prefix`) that mark a 5xx answer to a plain-http request as the node's own error page: the agent gets 502 egress_target_unreachable, the node is not blamed.");
    public static final ConfigKey<Integer> EGRESS_FORWARD_PROXY_PORT = key("egress.forward-proxy-port", null, integer(0, 65535),
        "Embedded runner: a second port where every request is a forward-proxy request (HTTP_PROXY); CONNECT works on both ports.");
    public static final ConfigKey<List<Integer>> EGRESS_CONNECT_PORTS = key("egress.connect-ports", "443",
        listOf(integer(1, 65535)::parse, "ports from 1 to 65535, such as 443,8443", "list of ports 1–65535"),
        "Target ports a CONNECT tunnel, and an https target (reached through one), may go to; others are refused (403).");
    public static final ConfigKey<String> EGRESS_INSPECT_CA = key("egress.inspect.ca", null, string(),
        "Secret (file, env or Vault) holding the PEM certificate and key of the CA that signs inspected tunnels' leaves; unset, one is generated and shared through the store.");
    public static final ConfigKey<List<String>> EGRESS_INSPECT_PASSTHROUGH = key("egress.inspect.passthrough", null, list(),
        "Domain globs (`host`, `*.example.com`, `*`) whose CONNECT tunnels stay blind even on a route with `inspect: true` (pinned or mTLS origins).");
    public static final ConfigKey<Integer> EGRESS_MAX_CONNECTIONS = key("egress.max-connections-per-node", "256", integer(1, 65_535),
        "Connection pool size towards each egress node (per target).");
    public static final ConfigKey<String> EGRESS_TRUST_STORE = key("egress.tls.trust-store", null, string(),
        "PKCS12 trust store for HTTPS targets, instead of the JVM's CAs.");
    public static final ConfigKey<Secret> EGRESS_TRUST_STORE_PASSWORD = secret("egress.tls.trust-store-password", "(none)",
        "Password of that trust store.");
    public static final ConfigKey<Duration> EGRESS_TCP_INTERVAL = key("egress.health.tcp-interval", "3s", duration(), "TCP probe period.");
    public static final ConfigKey<Duration> EGRESS_TCP_TIMEOUT = key("egress.health.tcp-timeout", "2s", duration(), "TCP probe timeout.");
    public static final ConfigKey<Integer> EGRESS_TCP_FAILURES = key("egress.health.tcp-failures", "3", integer(1, 100),
        "Consecutive failed TCP probes that eject a node.");
    public static final ConfigKey<Duration> EGRESS_HTTP_INTERVAL = key("egress.health.http-interval", "15s", duration(), "HTTP probe period (through the node).");
    public static final ConfigKey<String> EGRESS_HTTP_URL = key("egress.health.http-url", null, string(),
        "URL the HTTP probe fetches through each node; without it there is no HTTP probe.");
    public static final ConfigKey<Duration> EGRESS_SLOW_TLS = key("egress.health.slow-tls", "3s", duration(),
        "An HTTP probe slower than this (or not 2xx/3xx) halves the node's weight.");
    public static final ConfigKey<Integer> EGRESS_LATENCY_WINDOW = key("egress.health.latency-window", "10", integer(2, 1000),
        "Probe latencies kept per node for the jitter check.");
    public static final ConfigKey<Duration> EGRESS_JITTER_DOWN = key("egress.health.jitter-down-weight", "50ms", duration(),
        "Latency standard deviation above which a node's weight drops 30 %.");
    public static final ConfigKey<Duration> EGRESS_JITTER_EJECT = key("egress.health.jitter-eject", "100ms", duration(),
        "Latency standard deviation above which a node is ejected.");
    public static final ConfigKey<Integer> EGRESS_PASSIVE_FAILURES = key("egress.health.passive-failures", "3", integer(1, 100),
        "Consecutive failed requests through a node that eject it.");
    public static final ConfigKey<Duration> EGRESS_PASSIVE_EJECTION = key("egress.health.passive-ejection-time", "10s", duration(),
        "A node ejected for failing requests stays out this long, even if it still accepts TCP connections.");
    public static final ConfigKey<List<Integer>> EGRESS_RECOVERY_STEPS = key("egress.health.recovery-steps", "10,50,100",
        listOf(Integer::parseInt, "percentages such as 10,50,100", "list of % ending in 100"),
        "Share (%) of its weight a recovered node takes at each step.");
    public static final ConfigKey<Duration> EGRESS_RECOVERY_STEP_INTERVAL = key("egress.health.recovery-step-interval", "10s", duration(),
        "Time a recovered node spends at each step.");
    public static final ConfigKey<Double> EGRESS_REGION_EJECTED = key("egress.health.region-ejected-share", "0.5", ValueParser.ratio(),
        "A region with more of its nodes ejected fails over to the others.");
    public static final ConfigKey<Double> EGRESS_REGION_SUCCESS = key("egress.health.region-min-success", "0.8", ValueParser.ratio(),
        "A region whose recent success rate is lower fails over to the others.");

    public static final ConfigKey<Map<String, ?>> EGRESS_CREDENTIALS = key("egress.credentials", null, ValueParser.structuredMap(),
        "Real keys injected in place of agents' internal tokens: `{name: {secret, hosts, header, format}}` (`format` default `Bearer {secret}` for Authorization) or `{secret, hosts, query}`.");
    public static final ConfigKey<List<Map<?, ?>>> EGRESS_AGENTS = key("egress.agents", null, ValueParser.listOfMaps(),
        "Agents by internal token: `[{id, token, credentials, expires, revoked, policy}]`; `token` names the secret holding the agent's token; `policy` is `{domains, mode: enforce or report, budgets: {requests_per_minute, request_bytes_per_hour, response_bytes_per_hour}}`, replaceable at run time through the admin API.");
    public static final ConfigKey<CredentialsConfig.SourceKind> SECRETS_SOURCE = key("egress.secrets.source", "file", oneOf(CredentialsConfig.SourceKind.class),
        "Where secrets come from: `file`, `env` (`SANDGATE_SECRET_<NAME>`) or `vault` (KV v2).");
    public static final ConfigKey<Path> SECRETS_FILE = key("egress.secrets.file", "conf/secrets.yaml", string().then(Path::of, "a file path"),
        "YAML file `name: value` of the `file` source; must not be readable by group or others.");
    public static final ConfigKey<Duration> SECRETS_OVERLAP = key("egress.secrets.overlap", "24h", duration(),
        "How long a rotated-out key or internal token stays valid after its successor appears.");
    public static final ConfigKey<Duration> SECRETS_REFRESH = key("egress.secrets.refresh", "30s", duration(),
        "How often secret values are re-read to notice rotation.");
    public static final ConfigKey<String> VAULT_ADDRESS = key("egress.secrets.vault.address", null, string(),
        "Vault URL (`https://vault:8200`).");
    public static final ConfigKey<String> VAULT_NAMESPACE = key("egress.secrets.vault.namespace", null, string(),
        "Vault Enterprise namespace.");
    public static final ConfigKey<VaultAuth.Method> VAULT_AUTH = key("egress.secrets.vault.auth", "token", oneOf(VaultAuth.Method.class),
        "`token`, `approle` or `kubernetes`.");
    public static final ConfigKey<Secret> VAULT_TOKEN = secret("egress.secrets.vault.token", "(none)",
        "Vault token for `token` auth.");
    public static final ConfigKey<String> VAULT_ROLE_ID = key("egress.secrets.vault.role-id", null, string(),
        "AppRole role id.");
    public static final ConfigKey<Secret> VAULT_SECRET_ID = secret("egress.secrets.vault.secret-id", "(none)",
        "AppRole secret id.");
    public static final ConfigKey<String> VAULT_K8S_ROLE = key("egress.secrets.vault.kubernetes-role", null, string(),
        "Vault role for Kubernetes auth.");
    public static final ConfigKey<String> VAULT_K8S_JWT = key("egress.secrets.vault.kubernetes-jwt-path", VaultAuth.Kubernetes.DEFAULT_JWT_PATH.toString(), string(),
        "Service-account token presented for Kubernetes auth.");
    public static final ConfigKey<String> VAULT_MOUNT = key("egress.secrets.vault.mount", VaultSettings.DEFAULT_KV_MOUNT, string(),
        "KV v2 mount.");
    public static final ConfigKey<String> VAULT_PREFIX = key("egress.secrets.vault.prefix", VaultSettings.DEFAULT_PATH_PREFIX, string(),
        "Path under the mount: secret `x` is read from `prefix/x`, field `value` (`path#field` names both).");
    public static final ConfigKey<Duration> VAULT_REFRESH = key("egress.secrets.vault.refresh", ValueParser.durationText(VaultSettings.DEFAULT_REFRESH_INTERVAL), duration(),
        "A cached Vault value is re-read after this.");
    public static final ConfigKey<Duration> VAULT_MAX_AGE = key("egress.secrets.vault.max-age", ValueParser.durationText(VaultSettings.DEFAULT_CACHE_MAX_AGE), duration(),
        "A cached Vault value is served this long while Vault is down or sealed; after that 503.");
    public static final ConfigKey<List<Cidr>> EGRESS_SSRF_ALLOW = key("egress.ssrf.allow", null, listOf(Cidr::parse, "CIDRs such as 10.0.3.0/24", "list of CIDRs"),
        "CIDRs a target may resolve to despite the SSRF guard (which refuses loopback, link-local, private, CGNAT...).");
    public static final ConfigKey<Duration> EGRESS_DNS_TIMEOUT = key("egress.dns-timeout", "5s", positiveDuration(),
        "Longest wait for a target name's addresses; a lookup still unanswered is 504. Lookups run off the request threads.");
    public static final ConfigKey<Integer> EGRESS_DNS_MAX_IN_FLIGHT = key("egress.dns-max-in-flight", "64", integer(1, 10_000),
        "Target names resolved at once, each on a thread of the egress face's own; more are refused with 503. A lookup past its timeout counts until the resolver gives up.");
    public static final ConfigKey<EgressConfig.ScanMode> EGRESS_SCAN_MODE = key("egress.scan.mode", "block", oneOf(EgressConfig.ScanMode.class),
        "Leak scanner on requests (path, headers, body) when a route sets no `scan`: `block` (422), `redact`, `report` or `off`.");

    public static final ConfigKey<ServerConfig.Role> SERVER_ROLE = key("server.role", "gateway", oneOf(ServerConfig.Role.class),
        "`gateway` (all faces, and the pod watcher if enabled) or `controlplane` (pod watcher, health, metrics and admin only).");
    public static final ConfigKey<Boolean> WATCHER_ENABLED = key("controlplane.watcher.enabled", "false", bool(),
        "Watch sandbox pods and write their routes (one replica at a time, by leader election).");
    public static final ConfigKey<List<String>> WATCHER_NAMESPACES = key("controlplane.watcher.namespaces", "default", list(),
        "Namespaces whose pods are watched.");
    public static final ConfigKey<String> WATCHER_ID_LABEL = key("controlplane.watcher.id-label", "sandgate.io/sandbox-id", string(),
        "Pod label (or annotation) holding the sandbox id; pods without it are ignored.");
    public static final ConfigKey<String> WATCHER_PORT_ANNOTATION = key("controlplane.watcher.port-annotation", "sandgate.io/port", string(),
        "Pod annotation holding the sandbox port.");
    public static final ConfigKey<Integer> WATCHER_DEFAULT_PORT = key("controlplane.watcher.default-port", "6080", integer(1, 65535),
        "Sandbox port when the pod has no port annotation.");
    public static final ConfigKey<Duration> WATCHER_RESYNC = key("controlplane.watcher.resync-interval", "5m", positiveDuration(),
        "Full re-list of the pods, which also removes routes whose pods are gone.");
    public static final ConfigKey<WatcherConfig.SandboxApi> WATCHER_SANDBOX_API = key("controlplane.watcher.sandbox-api", "none",
        oneOf(WatcherConfig.SandboxApi.class),
        "Also watch agent-sandbox `Sandbox` resources (group `agents.x-k8s.io`) in the watched namespaces, and write the route of one scaled to zero `paused`, keeping its last target: `v1beta1` (agent-sandbox 0.5 and later: `spec.operatingMode: Suspended`), `v1alpha1` (earlier: `spec.replicas: 0`) or `none`. A `Sandbox` stands for the sandbox its name is (a name that is no sandbox id is ignored); its pods carry that id in `controlplane.watcher.id-label`. `ingress.wake.kubernetes` scales through the same version.");
    public static final ConfigKey<String> WATCHER_PAUSED_LABEL = key("controlplane.watcher.paused-label", null,
        matching("([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", "a Kubernetes label key"),
        "A label that marks a sandbox paused while one of its pods, or its `Sandbox`, carries it with the value `true`: its route turns `paused`, keeping its last target, and is no longer forwarded to. Unset: no label pauses.");
    public static final ConfigKey<String> WATCHER_MASTER_URL = key("controlplane.kubernetes.master-url", null, string(),
        "Kubernetes API URL; without it the in-cluster service account or ~/.kube/config is used.");

    public static final ConfigKey<Secret> ADMIN_TOKEN = secret("admin.token", "(none: admin API off)",
        "Bearer token for `/admin/`.");
    // At least 100ms: finer sampling would cost more than the charts show.
    public static final ConfigKey<Duration> ADMIN_HISTORY_INTERVAL = key("admin.history.interval", "5s", duration(Duration.ofMillis(100)),
        "How often each replica samples its own request rates, latencies, egress node weights and MCP counts for the dashboard's charts.");
    public static final ConfigKey<Integer> ADMIN_HISTORY_SAMPLES = key("admin.history.samples", "360", integer(2, 10_000),
        "Samples kept in memory for the charts (360 at 5s: the last 30 minutes); older ones are dropped.");
    public static final ConfigKey<Boolean> ACCESS_LOG = key("log.access", "true", bool(),
        "Write one access-log line per request (logger `sandgate.access`).");
    public static final ConfigKey<SandgateConfig.LogFormat> LOG_FORMAT = key("log.format", "text", oneOf(SandgateConfig.LogFormat.class),
        "`text` (one readable line) or `json` (one object per line: time, level, logger, message, and `mdc` with face, sandbox, route, node, trace id where known); the audit log (`sandgate.audit`) is JSON either way.");

    public static final ConfigKey<String> TRACING_OTLP_ENDPOINT = key("tracing.otlp.endpoint", null, string(),
        "OpenTelemetry collector that receives the gateway's spans over OTLP/HTTP (`http://collector:4318`, sent to its `/v1/traces`); unset, tracing is off and no span is made.");
    public static final ConfigKey<Double> TRACING_SAMPLE_RATIO = key("tracing.sample-ratio", "1.0", ratio(),
        "Share of requests traced (0 to 1), drawn by the gateway: a caller's `traceparent` continues its trace but its sampled flag is not followed, so an untrusted caller can neither have every request traced nor hide its own.");
    public static final ConfigKey<String> TRACING_SERVICE_NAME = key("tracing.service-name", "sandgate", string().where(n -> !n.isBlank(), "a name such as sandgate", "non-blank string"),
        "The spans' `service.name`.");

    /** Every key above, in declaration order: the order of the reference table. */
    public static final List<ConfigKey<?>> ALL = List.copyOf(DECLARED);

    private static final Map<String, ConfigKey<?>> BY_NAME = byName(ALL);

    private ConfigKeys()
    {
    }

    /** The key with this dotted name, or null. */
    public static ConfigKey<?> byName(String name)
    {
        return BY_NAME.get(name);
    }

    private static Map<String, ConfigKey<?>> byName(List<ConfigKey<?>> keys)
    {
        Map<String, ConfigKey<?>> byName = new HashMap<>();
        for (ConfigKey<?> key : keys)
        {
            if (byName.put(key.name(), key) != null)
                throw new IllegalStateException("config key declared twice: " + key.name());
        }
        return Map.copyOf(byName);
    }

    private static <T> ConfigKey<T> key(String name, String defaultValue, ValueParser<T> parser, String description)
    {
        return declare(ConfigKey.of(name, defaultValue, parser, description));
    }

    /** A key without default whose absence means something the table says in words. */
    private static <T> ConfigKey<T> keyWithoutDefault(String name, String defaultText, ValueParser<T> parser, String description)
    {
        return declare(new ConfigKey<>(name, null, defaultText, parser, description, false));
    }

    private static ConfigKey<Secret> secret(String name, String defaultText, String description)
    {
        return secret(name, defaultText, ValueParser.secret(), description);
    }

    private static ConfigKey<Secret> secret(String name, String defaultText, ValueParser<Secret> parser, String description)
    {
        return declare(new ConfigKey<>(name, null, defaultText, parser, description, true));
    }

    private static <T> ConfigKey<T> declare(ConfigKey<T> key)
    {
        DECLARED.add(key);
        return key;
    }

    /** The configuration reference table (docs/configuration.md), generated so that it cannot drift from the code. */
    public static String referenceTable()
    {
        StringBuilder table = new StringBuilder("| key | default | accepts | meaning |\n|---|---|---|---|\n");
        for (ConfigKey<?> key : ALL)
        {
            table.append("| `").append(key.name()).append("` | ")
                .append(key.defaultValue() == null ? key.defaultText() : "`" + key.defaultText() + "`")
                .append(" | ").append(key.parser().accepts())
                .append(" | ").append(key.description()).append(" |\n");
        }
        return table.toString();
    }
}
