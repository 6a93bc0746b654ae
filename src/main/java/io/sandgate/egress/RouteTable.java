package io.sandgate.egress;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

import io.sandgate.config.EgressConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The egress route table, first match wins: replaced whole on reload, read without locks on every
 * request. Pools are not part of it: they keep their nodes' health and connections across reloads.
 */
final class RouteTable
{
    private static final Logger LOG = LoggerFactory.getLogger(RouteTable.class);

    private final Set<String> pools;
    private volatile List<EgressConfig.Route> routes;

    /**
     * @param routes the table in force at start
     * @param pools the names of the running pools, the only ones a table may name
     */
    RouteTable(List<EgressConfig.Route> routes, Set<String> pools)
    {
        this.pools = Set.copyOf(pools);
        this.routes = List.copyOf(routes);
    }

    /** The first route that serves this host and task type, or empty. */
    Optional<EgressConfig.Route> find(String host, String taskType)
    {
        String lower = host.toLowerCase(Locale.ROOT);
        for (EgressConfig.Route route : routes)
        {
            if (route.matches(lower, taskType))
                return Optional.of(route);
        }
        return Optional.empty();
    }

    /**
     * Replaces the table without a restart. A table naming a pool that does not run is refused
     * whole, and the old one stays in force.
     *
     * @return how many routes are now in force
     */
    int reload(List<EgressConfig.Route> newRoutes)
    {
        for (EgressConfig.Route route : newRoutes)
        {
            if (!pools.contains(route.pool()))
                throw new IllegalArgumentException("egress.routes: upstream " + route.pool() + " (expected: one of the running pools " + pools
                    + "; changing pools needs a restart)");
        }
        routes = List.copyOf(newRoutes);
        LOG.info("Egress route table reloaded: {} routes", routes.size());
        return routes.size();
    }
}
