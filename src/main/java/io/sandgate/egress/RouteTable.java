package io.sandgate.egress;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import io.sandgate.config.EgressConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The egress route table, first match wins: replaced whole on reload, read without locks on every
 * request. The pools its routes name are reloaded with it, just before it (see {@link Egress#reload}).
 */
final class RouteTable
{
    private static final Logger LOG = LoggerFactory.getLogger(RouteTable.class);

    private volatile List<EgressConfig.Route> routes;

    /** @param routes the table in force at start */
    RouteTable(List<EgressConfig.Route> routes)
    {
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
     * The longest timeout of the table in force, or zero when it has no route: no exchange it
     * planned runs longer than 1.5 times that (see {@code EgressServlet#sendProxyRequest}).
     */
    Duration longestTimeout()
    {
        return routes.stream().map(EgressConfig.Route::timeout).max(Duration::compareTo).orElse(Duration.ZERO);
    }

    /**
     * Replaces the table without a restart. The configuration it comes from has checked that each
     * route names one of its pools (see {@code EgressConfig}), and those pools are in force already.
     *
     * @return how many routes are now in force
     */
    int reload(List<EgressConfig.Route> newRoutes)
    {
        routes = List.copyOf(newRoutes);
        LOG.info("Egress route table reloaded: {} routes", routes.size());
        return routes.size();
    }
}
