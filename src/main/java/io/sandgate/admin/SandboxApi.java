package io.sandgate.admin;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.sandgate.config.IngressConfig;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RouteStore;
import io.sandgate.ingress.lifecycle.ActivityTable;
import io.sandgate.web.GatewayException;

/**
 * {@code GET /sandboxes/{id}}: one sandbox's lifecycle as the gateway sees it. Its state is its
 * route's ({@code running}, {@code paused}, or {@code none} without a route); its last activity the
 * latest traffic any replica carried for it, and per replica that replica's own and the WebSockets
 * it holds open, as the replicas last published them (at most {@code ingress.activity.flush} ago).
 * 400 for an id the ingress would not take, 404 for a sandbox with neither a route nor a record.
 */
public final class SandboxApi
{
    /** As long as a store call may take before the admin call answers 503. */
    private static final Duration STORE_WAIT = Duration.ofSeconds(5);

    private SandboxApi()
    {
    }

    public static List<AdminServlet.Route> routes(IngressConfig ingress, RouteStore routeStore, ActivityTable activity)
    {
        return List.of(new AdminServlet.Route("GET", "/sandboxes/{id}", call ->
        {
            String id = AdminApi.sandboxId(ingress, call.id());
            Optional<Route> route = routeStore.find(id);
            ActivityTable.SandboxActivity traffic = read(activity, id);
            if (route.isEmpty() && traffic.isEmpty())
                throw GatewayException.notFound("no route and no recorded activity for sandbox " + id);
            return describe(id, route, traffic);
        }));
    }

    private static ActivityTable.SandboxActivity read(ActivityTable activity, String id)
    {
        try
        {
            return activity.sandbox(id).get(STORE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while reading sandbox activity", x);
        }
        catch (ExecutionException | TimeoutException x)
        {
            throw new StoreUnavailableException("sandbox activity could not be read", x);
        }
    }

    private static Map<String, Object> describe(String id, Optional<Route> route, ActivityTable.SandboxActivity traffic)
    {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("id", id);
        item.put("state", route.map(r -> r.state().label()).orElse("none"));
        item.put("lastActivity", traffic.lastActivity().map(Instant::toString).orElse(null));
        item.put("webSockets", traffic.webSockets());
        List<Map<String, Object>> replicas = new ArrayList<>();
        traffic.replicas().forEach((name, replica) ->
        {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("replica", name);
            entry.put("lastActivity", replica.lastActivity().map(Instant::toString).orElse(null));
            entry.put("webSockets", replica.webSockets());
            replicas.add(entry);
        });
        item.put("replicas", replicas);
        return item;
    }
}
