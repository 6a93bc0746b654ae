package io.sandgate.ingress;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * A route store that fails the test on every write, listing and search: for tests of what reads
 * routes, and how, where the subclass says what a lookup answers.
 */
public abstract class UntouchedRoutes implements RouteStore
{
    /** Nothing changes in a table nobody writes. */
    @Override
    public void onChanges(Runnable listener)
    {
    }

    @Override
    public void put(String id, Route route)
    {
        throw new AssertionError("wrote route " + id);
    }

    @Override
    public boolean remove(String id)
    {
        throw new AssertionError("removed route " + id);
    }

    @Override
    public boolean removeIf(String id, String generation)
    {
        throw new AssertionError("removed route " + id);
    }

    @Override
    public Optional<Route> revoke(String id, Instant before)
    {
        throw new AssertionError("revoked route " + id);
    }

    @Override
    public Map<String, Route> all()
    {
        throw new AssertionError("listed the routes");
    }

    @Override
    public RoutePage search(String prefix, String cursor, int limit)
    {
        throw new AssertionError("searched the routes");
    }
}
