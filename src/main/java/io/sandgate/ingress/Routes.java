package io.sandgate.ingress;

import java.util.LinkedHashMap;
import java.util.Map;

import io.sandgate.config.ConfigException;
import io.sandgate.config.ConfigKeys;

public final class Routes
{
    private Routes()
    {
    }

    /** Parses {@code ingress.static-routes}; a bad value stops start-up like any other config error. */
    public static Map<String, Route> parseStatic(Map<String, String> values)
    {
        Map<String, Route> routes = new LinkedHashMap<>();
        values.forEach((id, value) ->
        {
            try
            {
                routes.put(id, Route.parse(value));
            }
            catch (IllegalArgumentException x)
            {
                throw new ConfigException(ConfigKeys.INGRESS_STATIC_ROUTES.name() + ": " + id + ": " + x.getMessage());
            }
        });
        return routes;
    }
}
