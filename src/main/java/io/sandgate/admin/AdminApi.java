package io.sandgate.admin;

import java.time.Clock;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import java.util.regex.Matcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.config.ConfigException;
import io.sandgate.config.IngressConfig;
import io.sandgate.config.SandgateConfig;
import io.sandgate.config.ValueParser;
import io.sandgate.core.Audit;
import io.sandgate.core.Secret;
import io.sandgate.egress.Egress;
import io.sandgate.ingress.Grants;
import io.sandgate.ingress.IdSyntax;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RoutePage;
import io.sandgate.ingress.RouteStore;
import io.sandgate.ingress.SandboxUrls;
import io.sandgate.mcp.McpSession;
import io.sandgate.mcp.SessionBus;
import io.sandgate.net.Origins;
import io.sandgate.ops.Drain;
import io.sandgate.ops.MetricHistory;
import io.sandgate.web.GatewayException;
import jakarta.servlet.http.HttpServletRequest;

/**
 * The admin operations, as plain functions over the gateway's components:
 * <ul>
 * <li>{@code GET /routes?offset=&limit=}, {@code GET|PUT|DELETE /routes/{id}}: the sandbox route table;
 * {@code GET /search/routes?prefix=&cursor=&limit=}: a page of the routes whose id starts with a prefix;</li>
 * <li>{@code POST /grants/{id}}: a grant link for a sandbox; {@code POST /revoke/{id}}: revokes every
 * grant and session issued for it so far, on every replica;</li>
 * <li>{@code GET /ingress/sessions}: open bridged WebSockets by sandbox;</li>
 * <li>{@code GET /mcp/sessions}, {@code DELETE /mcp/sessions/{id}}: MCP sessions;</li>
 * <li>{@code GET /egress/pools}, {@code POST /egress/reload}: egress;</li>
 * <li>{@code GET /history}: the recent samples the dashboard charts;</li>
 * <li>{@code GET /config}: effective settings, secrets redacted;</li>
 * <li>{@code POST /drain}: this replica drains; {@code GET /drain}: how far ({@link #drain}).</li>
 * </ul>
 */
public final class AdminApi
{
    /** Longer than any cursor a store gives. */
    private static final int MAX_CURSOR = 300;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ROUTE_BODY = "body must be {\"target\":\"host:port\"} with an optional \"generation\", "
        + "or {\"state\":\"paused\"} with an optional target";

    private AdminApi()
    {
    }

    /**
     * @param clock the time grants are issued and revocations stamped by
     * @param egress the egress face, or null where it does not run (control-plane role)
     * @param closeIngress closes the bridged WebSockets of a sandbox on this replica and returns how
     *        many, when its access is revoked (other replicas refuse the next request of each session)
     * @param reloadEgress reads the configuration again and applies its egress routes, pools,
     *        credentials and agents; returns the number of routes in force
     * @param history this replica's recent samples, for the dashboard's charts
     */
    public static List<AdminServlet.Route> routes(SandgateConfig config, Clock clock, RouteStore routeStore, SessionBus sessions, Egress egress,
                                                 Supplier<Map<String, Integer>> liveIngress, ToIntFunction<String> closeIngress,
                                                 IntSupplier reloadEgress, MetricHistory history)
    {
        IngressConfig ingress = config.ingress();
        List<AdminServlet.Route> routes = new ArrayList<>();
        routes.add(new AdminServlet.Route("GET", "/routes", call ->
        {
            Map<String, Route> all = routeStore.all();
            int offset = call.intParam("offset", 0, Integer.MAX_VALUE);
            int limit = call.intParam("limit", 100, 1000);
            List<Map<String, Object>> items = new ArrayList<>();
            Desktops desktops = Desktops.of(config, call);
            all.entrySet().stream().skip(offset).limit(limit).forEach(e -> items.add(describe(e.getKey(), e.getValue(), desktops)));
            Map<String, Object> page = new LinkedHashMap<>();
            page.put("total", all.size());
            page.put("offset", offset);
            page.put("items", items);
            return page;
        }));
        routes.add(new AdminServlet.Route("GET", "/search/routes", call -> search(config, routeStore, call)));
        routes.add(new AdminServlet.Route("GET", "/routes/{id}", call ->
        {
            String id = sandboxId(ingress, call.id());
            return describe(id, routeStore.find(id).orElseThrow(() -> GatewayException.notFound("no route for sandbox " + id)), Desktops.of(config, call));
        }));
        routes.add(new AdminServlet.Route("PUT", "/routes/{id}", call ->
        {
            String id = sandboxId(ingress, call.id());
            JsonNode body = call.body();
            if (body == null || !body.isObject())
                throw GatewayException.badRequest(ROUTE_BODY);
            Route route;
            try
            {
                // The fields a route value holds, and only those, parsed as the store's values are.
                ObjectNode value = JSON.createObjectNode();
                for (String field : List.of("target", "generation", "state"))
                {
                    if (body.has(field))
                        value.set(field, body.get(field));
                }
                route = Route.parse(value.toString());
            }
            catch (IllegalArgumentException x)
            {
                throw GatewayException.badRequest(x.getMessage() + "; " + ROUTE_BODY);
            }
            // A new target for the sandbox is no pardon: access revoked before stays revoked.
            route = route.keepingRevocationOf(routeStore.find(id));
            routeStore.put(id, route);
            return describe(id, route, Desktops.of(config, call));
        }));
        routes.add(new AdminServlet.Route("DELETE", "/routes/{id}", call ->
        {
            String id = sandboxId(ingress, call.id());
            if (!routeStore.remove(id))
                throw GatewayException.notFound("no route for sandbox " + id);
            return null;
        }));
        routes.add(new AdminServlet.Route("POST", "/grants/{id}", call -> grant(config, clock, routeStore, sandboxId(ingress, call.id()), call)));
        routes.add(new AdminServlet.Route("POST", "/revoke/{id}", call ->
        {
            String id = sandboxId(ingress, call.id());
            Route stamped = routeStore.revoke(id, clock.instant().truncatedTo(ChronoUnit.MILLIS))
                .orElseThrow(() -> GatewayException.notFound("no route for sandbox " + id + ": nothing to revoke"));
            Map<String, Object> item = describe(id, stamped, Desktops.of(config, call));
            int closed = closeIngress.applyAsInt(id);
            item.put("webSocketsClosed", closed);
            Audit.accessRevoked(id, closed);
            return item;
        }));
        routes.add(new AdminServlet.Route("GET", "/ingress/sessions", call ->
        {
            List<Map<String, Object>> items = new ArrayList<>();
            int total = 0;
            for (Map.Entry<String, Integer> entry : liveIngress.get().entrySet())
            {
                items.add(Map.of("sandbox", entry.getKey(), "webSockets", entry.getValue()));
                total += entry.getValue();
            }
            return Map.of("total", total, "items", items);
        }));
        routes.add(new AdminServlet.Route("GET", "/mcp/sessions", call ->
        {
            List<Map<String, Object>> items = new ArrayList<>();
            for (McpSession session : sessions.list(call.intParam("limit", 100, 1000)))
            {
                Map<String, Object> item = new LinkedHashMap<>();
                item.put("id", session.id());
                item.put("server", session.server());
                item.put("upstreamSession", session.upstreamSessionId().isPresent());
                session.protocolVersion().ifPresent(v -> item.put("protocolVersion", v));
                items.add(item);
            }
            return Map.of("items", items);
        }));
        routes.add(new AdminServlet.Route("DELETE", "/mcp/sessions/{id}", call ->
        {
            if (!McpSession.isWellFormedId(call.id()))
                throw GatewayException.badRequest("malformed MCP session id (expected: 32 hex digits)");
            if (sessions.find(call.id()).isEmpty())
                throw GatewayException.notFound("no MCP session " + call.id());
            sessions.delete(call.id());
            return null;
        }));
        if (egress != null)
        {
            routes.add(new AdminServlet.Route("GET", "/egress/pools", call -> egress.describe()));
            routes.add(new AdminServlet.Route("POST", "/egress/reload", call -> Map.of("routes", reloadEgress(reloadEgress))));
        }
        routes.add(new AdminServlet.Route("GET", "/history", call -> history.view()));
        routes.add(new AdminServlet.Route("GET", "/config", call -> config.effective()));
        return routes;
    }

    /**
     * {@code POST /drain} begins this replica's drain, as SIGTERM does, and answers at once with
     * {@code begun}: false when a drain was under way already, which the call joins (one drain,
     * one timeline, whoever asks). {@code GET /drain} shows its state.
     */
    public static List<AdminServlet.Route> drain(Drain drain)
    {
        return List.of(
            new AdminServlet.Route("POST", "/drain", call ->
            {
                boolean begun = drain.begin(Drain.Cause.ADMIN);
                Map<String, Object> view = drain.view();
                view.put("begun", begun);
                return view;
            }),
            new AdminServlet.Route("GET", "/drain", call -> drain.view()));
    }

    /**
     * Runs an egress reload; a configuration that does not read is the caller's to fix, so it
     * answers 400 with every problem found (nothing changed).
     */
    private static int reloadEgress(IntSupplier reload)
    {
        try
        {
            return reload.getAsInt();
        }
        catch (ConfigException x)
        {
            throw GatewayException.badRequest("egress reload refused, nothing changed: " + String.join("; ", x.problems()));
        }
    }

    /**
     * A page of the routes whose id starts with {@code prefix}: {@code items}, and {@code next} to
     * pass as {@code cursor} for the following page while there is one.
     */
    private static Map<String, Object> search(SandgateConfig config, RouteStore routeStore, AdminServlet.Call call)
    {
        IngressConfig ingress = config.ingress();
        String prefix = call.request().getParameter("prefix");
        prefix = prefix == null ? "" : prefix;
        // A prefix no sandbox id can start with finds nothing, always: the caller mistyped, say so.
        Matcher matcher = ingress.idPattern().matcher(prefix);
        if (prefix.length() > ingress.idMaxLength() || !(matcher.matches() || matcher.hitEnd()))
            throw GatewayException.badRequest("prefix: " + prefix + " (expected: the start of a sandbox id, as ingress.id-pattern reads)");
        String cursor = call.request().getParameter("cursor");
        if (cursor != null && (cursor.isEmpty() || cursor.length() > MAX_CURSOR))
            throw GatewayException.badRequest("cursor: (expected: the next of the page before)");
        int limit = call.intParam("limit", 50, 1000);
        if (limit == 0)
            throw GatewayException.badRequest("limit: 0 (expected: 1 to 1000)");
        RoutePage page;
        try
        {
            page = routeStore.search(prefix, cursor, limit);
        }
        catch (IllegalArgumentException x)
        {
            throw GatewayException.badRequest(x.getMessage());
        }
        List<Map<String, Object>> items = new ArrayList<>();
        Desktops desktops = Desktops.of(config, call);
        page.routes().forEach((id, route) -> items.add(describe(id, route, desktops)));
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("prefix", prefix);
        result.put("items", items);
        page.next().ifPresent(next -> result.put("next", next));
        return result;
    }

    static String sandboxId(IngressConfig ingress, String id)
    {
        if (!IdSyntax.of(ingress).isId(id))
            throw GatewayException.badRequest("malformed sandbox id");
        return id;
    }

    /**
     * Body {@code {"subject":"alice","ttl":"5m","sessionLimit":"1h"}}, ttl (default 5m) and sessionLimit
     * optional. The answer's {@code url} is the link to hand over: on the sandbox's own host in host
     * mode ({@link SandboxUrls}); {@code path} is its path, on that host or under the gateway's.
     */
    private static Map<String, Object> grant(SandgateConfig config, Clock clock, RouteStore routeStore, String id, AdminServlet.Call call)
    {
        IngressConfig ingress = config.ingress();
        JsonNode body = call.body();
        // Without a configured secret each replica signs with a key of its own, and a grant made
        // here would open nothing elsewhere.
        Secret secret = ingress.cookie().secret().orElseThrow(() ->
            new IllegalArgumentException("ingress.cookie.secret is not set: grants need the secret every replica shares"));
        if (body == null || !body.path("subject").isTextual())
            throw GatewayException.badRequest("body must be {\"subject\":\"...\"} with an optional \"ttl\" and \"sessionLimit\" (durations such as 5m)");
        Duration ttl = duration(body, "ttl").orElse(Duration.ofMinutes(5));
        Optional<Duration> sessionLimit = duration(body, "sessionLimit");
        Grants grants = Grants.create(secret, clock);
        String subject = body.get("subject").asText();
        String token = sessionLimit.isPresent() ? grants.issue(id, subject, ttl, sessionLimit.get()) : grants.issue(id, subject, ttl);
        String query = "?" + ingress.grantParam() + "=" + token;
        Desktops desktops = Desktops.of(config, call);
        // The route's port, which a {port} in the host pattern names; a missing route is no error in path mode.
        String url = desktops.urls().root(id, routeStore.find(id).map(Route::port).orElse(0), desktops.fallbackOrigin()) + query;
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("token", token);
        item.put("path", desktops.urls().hostMode() ? "/" + query : ingress.prefix() + id + "/" + query);
        item.put("url", url);
        return item;
    }

    /**
     * Where the links of one call lead ({@link SandboxUrls}): a host-mode link takes its scheme and
     * port from the first public origin, or without one from the admin request's own.
     */
    private record Desktops(SandboxUrls urls, String fallbackOrigin)
    {
        static Desktops of(SandgateConfig config, AdminServlet.Call call)
        {
            HttpServletRequest request = call.request();
            String own;
            try
            {
                own = Origins.canonical(request.getScheme() + "://" + request.getServerName() + ":" + request.getServerPort(), "origin");
            }
            catch (IllegalArgumentException x)
            {
                own = "http://localhost";
            }
            return new Desktops(new SandboxUrls(config.ingress(), config.server().publicOrigins(), request.getContextPath()), own);
        }

        /** The sandbox's desktop, as the dashboard opens it; null when its host names a port a paused route without a target has not. */
        String of(String id, Route route)
        {
            try
            {
                return urls.root(id, route.port(), fallbackOrigin);
            }
            catch (IllegalArgumentException x)
            {
                return null;
            }
        }
    }

    private static Optional<Duration> duration(JsonNode body, String field)
    {
        if (!body.hasNonNull(field))
            return Optional.empty();
        try
        {
            Duration duration = ValueParser.duration().parse(body.get(field).asText());
            if (duration.isZero())
                throw new IllegalArgumentException("longer than zero");
            return Optional.of(duration);
        }
        catch (IllegalArgumentException x)
        {
            throw GatewayException.badRequest(field + ": " + body.get(field).asText() + " (expected: " + x.getMessage() + ")");
        }
    }

    private static Map<String, Object> describe(String id, Route route, Desktops desktops)
    {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("id", id);
        item.put("target", route.authority());
        item.put("state", route.state().label());
        item.put("desktop", desktops.of(id, route));
        route.generation().ifPresent(g -> item.put("generation", g));
        route.revokedBefore().ifPresent(r -> item.put("revokedBefore", r.toString()));
        return item;
    }
}
