package io.sandgate.ingress;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Objects;
import java.util.Optional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.sandgate.core.Ascii;

/**
 * Where a sandbox is reached: a host and a port, and optionally the generation of the pod that wrote
 * it (so a stale writer cannot remove a newer pod's route) and the instant before which access to
 * the sandbox was revoked. The stamp travels with the route so that every replica learns of a
 * revocation as it learns of a route change, with no lookup of its own per request.
 *
 * <p>A class rather than a record only to compute its authority once: routes are cached and read
 * on every request, which needs the authority twice.</p>
 */
public final class Route
{
    private static final ObjectMapper JSON = new ObjectMapper();
    /** What a stored route may name as its host: an IP address or a DNS name, nothing that changes the URI around it. */
    private static final Ascii HOST = Ascii.alphanumericAnd(".:-");

    private final String host;
    private final int port;
    private final Optional<String> generation;
    private final Optional<Instant> revokedBefore;
    private final String authority;

    /**
     * @param host IP literal or host name, without brackets
     * @param port TCP port
     * @param generation opaque writer generation, e.g. a pod uid
     * @param revokedBefore grants and session cookies issued up to this instant are refused
     */
    public Route(String host, int port, Optional<String> generation, Optional<Instant> revokedBefore)
    {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(generation, "generation");
        Objects.requireNonNull(revokedBefore, "revokedBefore");
        if (!HOST.matches(host, 1, 253))
            throw new IllegalArgumentException("host: " + host + " (expected: an IP address or host name)");
        if (port < 1 || port > 65535)
            throw new IllegalArgumentException("port: " + port + " (expected: 1 to 65535)");
        this.host = host;
        this.port = port;
        this.generation = generation;
        this.revokedBefore = revokedBefore;
        this.authority = (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    public Route(String host, int port, Optional<String> generation)
    {
        this(host, port, generation, Optional.empty());
    }

    public static Route of(String host, int port)
    {
        return new Route(host, port, Optional.empty());
    }

    /** This route with its revocation stamp moved to {@code instant}, or kept when it is already later. */
    public Route revokedBefore(Instant instant)
    {
        if (revokedBefore.isPresent() && !revokedBefore.get().isBefore(instant))
            return this;
        return new Route(host, port, generation, Optional.of(instant));
    }

    /** This route carrying the revocation stamp of {@code previous}, the route it replaces, if that one is later. */
    public Route keepingRevocationOf(Optional<Route> previous)
    {
        if (previous.isEmpty() || previous.get().revokedBefore().isEmpty())
            return this;
        return revokedBefore(previous.get().revokedBefore().get());
    }

    /**
     * Parses a stored value: {@code host:port} exactly as a plain {@code HSET} writes it,
     * {@code [v6]:port}, or {@code {"target":"host:port","generation":"...","revokedBefore":"2025-03-01T10:00:00.250Z"}}
     * (the last two optional).
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
                JsonNode revoked = node.get("revokedBefore");
                Route route = parse(target.asText());
                return new Route(route.host(), route.port(),
                    generation == null || generation.isNull() ? Optional.empty() : Optional.of(generation.asText()),
                    revoked == null || revoked.isNull() ? Optional.empty() : Optional.of(Instant.parse(revoked.asText())));
            }
            catch (java.io.IOException x)
            {
                throw new IllegalArgumentException("route: malformed JSON");
            }
            catch (DateTimeParseException x)
            {
                throw new IllegalArgumentException("route: revokedBefore is not an ISO-8601 instant");
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

    public String host()
    {
        return host;
    }

    public int port()
    {
        return port;
    }

    public Optional<String> generation()
    {
        return generation;
    }

    public Optional<Instant> revokedBefore()
    {
        return revokedBefore;
    }

    /**
     * Whether access granted for this route still holds for {@code current}, the route as it is now:
     * the same pod, and no revocation since.
     */
    public boolean sameAccess(Route current)
    {
        return current.revokedBefore.equals(revokedBefore) && current.generation.equals(generation);
    }

    /** The {@code host:port} authority for a URI, IPv6 in brackets. */
    public String authority()
    {
        return authority;
    }

    /** The stored form: plain {@code host:port} unless there is a generation or a revocation to keep. */
    public String format()
    {
        if (generation.isEmpty() && revokedBefore.isEmpty())
            return authority();
        ObjectNode node = JSON.createObjectNode().put("target", authority());
        generation.ifPresent(g -> node.put("generation", g));
        revokedBefore.ifPresent(r -> node.put("revokedBefore", r.toString()));
        return node.toString();
    }

    @Override
    public boolean equals(Object other)
    {
        return other instanceof Route route && port == route.port && host.equals(route.host)
            && generation.equals(route.generation) && revokedBefore.equals(route.revokedBefore);
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(host, port, generation, revokedBefore);
    }

    @Override
    public String toString()
    {
        return "Route[host=" + host + ", port=" + port + ", generation=" + generation + ", revokedBefore=" + revokedBefore + "]";
    }
}
