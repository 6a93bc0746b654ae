package io.sandgate.store;

import io.sandgate.core.StoreHealth;
import io.sandgate.core.Leadership;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RouteStore;
import io.sandgate.ingress.Routes;
import io.sandgate.mcp.MemorySessionBus;
import io.sandgate.egress.MemoryStickySessions;
import io.sandgate.ingress.Redemptions;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** The embedded default: one replica, state in this process, nothing to run beside it. */
final class MemoryStore implements Store, RouteStore
{
    private final Map<String, Route> routes = new ConcurrentHashMap<>();
    private final MemorySessionBus sessions;
    private final MemoryStickySessions sticky = new MemoryStickySessions();
    private final Redemptions redemptions = Redemptions.inMemory(Clock.systemUTC());

    MemoryStore(Map<String, String> staticRoutes, MemorySessionBus sessions)
    {
        this.sessions = sessions;
        routes.putAll(Routes.parseStatic(staticRoutes));
    }

    @Override
    public RouteStore routes()
    {
        return this;
    }

    @Override
    public Redemptions redemptions()
    {
        return redemptions;
    }

    @Override
    public Leadership leadership(String name)
    {
        return Leadership.always();
    }

    @Override
    public io.sandgate.egress.StickySessions sticky()
    {
        return sticky;
    }

    @Override
    public io.sandgate.mcp.SessionBus sessions()
    {
        return sessions;
    }

    @Override
    public StoreHealth health()
    {
        return new StoreHealth("memory", true, "in-process");
    }

    @Override
    public Optional<Route> find(String id)
    {
        return Optional.ofNullable(routes.get(id));
    }

    @Override
    public void put(String id, Route route)
    {
        routes.put(id, route);
    }

    @Override
    public boolean remove(String id)
    {
        return routes.remove(id) != null;
    }

    @Override
    public boolean removeIf(String id, String generation)
    {
        Route current = routes.get(id);
        return current != null && current.generation().equals(java.util.Optional.of(generation)) && routes.remove(id, current);
    }

    @Override
    public Optional<Route> revoke(String id, Instant before)
    {
        return Optional.ofNullable(routes.computeIfPresent(id, (key, route) -> route.revokedBefore(before)));
    }

    @Override
    public Map<String, Route> all()
    {
        return new TreeMap<>(routes);
    }

    @Override
    public void close()
    {
        sessions.close();
    }
}
