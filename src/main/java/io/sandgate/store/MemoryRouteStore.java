package io.sandgate.store;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.sandgate.ingress.Route;
import io.sandgate.ingress.RoutePage;
import io.sandgate.ingress.RouteStore;
import io.sandgate.ingress.Routes;

/** The route table of the in-memory store: one replica, so the map is the truth. */
final class MemoryRouteStore implements RouteStore
{
    private final Map<String, Route> routes = new ConcurrentHashMap<>();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

    MemoryRouteStore(Map<String, String> staticRoutes)
    {
        routes.putAll(Routes.parseStatic(staticRoutes));
    }

    @Override
    public Optional<Route> find(String id)
    {
        return Optional.ofNullable(routes.get(id));
    }

    /** The map is at hand, so every route is. */
    @Override
    public Optional<Route> cached(String id)
    {
        return find(id);
    }

    @Override
    public void onChanges(Runnable listener)
    {
        listeners.add(listener);
    }

    private <T> T changed(T result)
    {
        listeners.forEach(Runnable::run);
        return result;
    }

    @Override
    public void put(String id, Route route)
    {
        routes.put(id, route);
        changed(route);
    }

    @Override
    public boolean remove(String id)
    {
        return changed(routes.remove(id) != null);
    }

    @Override
    public boolean removeIf(String id, String generation)
    {
        Route current = routes.get(id);
        return changed(current != null && current.generation().equals(Optional.of(generation)) && routes.remove(id, current));
    }

    @Override
    public Optional<Route> revoke(String id, Instant before)
    {
        return changed(Optional.ofNullable(routes.computeIfPresent(id, (key, route) -> route.revokedBefore(before))));
    }

    @Override
    public Map<String, Route> all()
    {
        return new TreeMap<>(routes);
    }

    /** Pages in id order; the cursor is the last id of the page before. One pass, keeping only a page's worth. */
    @Override
    public RoutePage search(String prefix, String cursor, int limit)
    {
        if (cursor != null && !cursor.startsWith(prefix))
            throw new IllegalArgumentException("cursor: " + cursor + " (expected: the next of a page of this search)");
        TreeMap<String, Route> page = new TreeMap<>();
        routes.forEach((id, route) ->
        {
            if (!id.startsWith(prefix) || (cursor != null && id.compareTo(cursor) <= 0))
                return;
            page.put(id, route);
            // One more than the page, to know whether a next one follows.
            if (page.size() > limit + 1)
                page.pollLastEntry();
        });
        if (page.size() <= limit)
            return new RoutePage(page, Optional.empty());
        page.pollLastEntry();
        return new RoutePage(page, Optional.of(page.lastKey()));
    }
}
