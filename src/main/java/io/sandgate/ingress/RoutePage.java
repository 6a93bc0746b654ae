package io.sandgate.ingress;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One page of a route search ({@link RouteStore#search}).
 *
 * @param routes the routes found, by sandbox id in ascending order
 * @param next the cursor of the following page, or empty when the search is done
 */
public record RoutePage(Map<String, Route> routes, Optional<String> next)
{
    public RoutePage
    {
        routes = Collections.unmodifiableMap(new TreeMap<>(routes));
        Objects.requireNonNull(next, "next");
    }
}
