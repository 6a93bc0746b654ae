package io.sandgate.ingress;

import java.util.Objects;
import java.util.Optional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Where a sandbox is reached: a host and a port, and optionally the generation of the pod that wrote
 * it (so a stale writer cannot remove a newer pod's route).
 *
 * @param host IP literal or host name, without brackets
 * @param port TCP port
 * @param generation opaque writer generation, e.g. a pod uid
 */
public record Route(String host, int port, Optional<String> generation)
{
    private static final ObjectMapper JSON = new ObjectMapper();

    public Route
    {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(generation, "generation");
        if (!host.matches("[A-Za-z0-9.:-]+") || host.length() > 253)
            throw new IllegalArgumentException("host: " + host + " (expected: an IP address or host name)");
        if (port < 1 || port > 65535)
            throw new IllegalArgumentException("port: " + port + " (expected: 1 to 65535)");
    }

    public static Route of(String host, int port)
    {
        return new Route(host, port, Optional.empty());
    }

    /**
     * Parses a stored value: {@code host:port} exactly as a plain {@code HSET} writes it,
     * {@code [v6]:port}, or {@code {"target":"host:port","generation":"..."}}.
     *
     * @throws IllegalArgumentException if the value is neither
     */
    public static Route parse(String value)
    {
        String text = value.trim();
        if (text.startsWith("{"))
        {
            try
            {
                JsonNode node = JSON.readTree(text);
                JsonNode target = node.get("target");
                if (target == null || !target.isTextual())
                    throw new IllegalArgumentException("route: JSON without a \"target\" string");
                JsonNode generation = node.get("generation");
                Route route = parse(target.asText());
                return new Route(route.host(), route.port(),
                    generation == null || generation.isNull() ? Optional.empty() : Optional.of(generation.asText()));
            }
            catch (java.io.IOException x)
            {
                throw new IllegalArgumentException("route: malformed JSON");
            }
        }
        int colon = text.lastIndexOf(':');
        if (colon <= 0)
            throw new IllegalArgumentException("route: " + text + " (expected: host:port)");
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]"))
            host = host.substring(1, host.length() - 1);
        else if (host.contains(":"))
            throw new IllegalArgumentException("route: " + text + " (expected: [ipv6]:port)");
        try
        {
            return new Route(host, Integer.parseInt(text.substring(colon + 1)), Optional.empty());
        }
        catch (NumberFormatException x)
        {
            throw new IllegalArgumentException("route: " + text + " (expected: host:port)");
        }
    }

    /** The {@code host:port} authority for a URI, IPv6 in brackets. */
    public String authority()
    {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /** The stored form: plain {@code host:port} unless there is a generation to keep. */
    public String format()
    {
        if (generation.isEmpty())
            return authority();
        return JSON.createObjectNode().put("target", authority()).put("generation", generation.get()).toString();
    }
}
