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
 * <p>A route is {@linkplain State#RUNNING running} or {@linkplain State#PAUSED paused}: a paused
 * sandbox (scaled to zero by its manager) keeps its route, with or without its last target, so that
 * traffic for it asks the manager to resume it rather than failing as unknown. Only a running route
 * is ever forwarded to; a paused one without a target has no {@link #host()} or {@link #authority()}.</p>
 *
 * <p>A class rather than a record only to compute its authority once: routes are cached and read
 * on every request, which needs the authority twice.</p>
 */
public final class Route
{
    private static final ObjectMapper JSON = new ObjectMapper();
    /** What a stored route may name as its host: an IP address or a DNS name, nothing that changes the URI around it. */
    private static final Ascii HOST = Ascii.alphanumericAnd(".:-");

    /** Whether the sandbox is there to be reached; as stored, {@code "state": "running"} or {@code "paused"}. */
    public enum State
    {
        RUNNING, PAUSED;

        /** The stored form, lower case. */
        public String label()
        {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final String host;
    private final int port;
    private final Optional<String> generation;
    private final Optional<Instant> revokedBefore;
    private final State state;
    private final String authority;

    /**
     * @param host IP literal or host name, without brackets
     * @param port TCP port
     * @param generation opaque writer generation, e.g. a pod uid
     * @param revokedBefore grants and session cookies issued up to this instant are refused
     */
    public Route(String host, int port, Optional<String> generation, Optional<Instant> revokedBefore)
    {
        this(Objects.requireNonNull(host, "host"), port, generation, revokedBefore, State.RUNNING);
    }

    /**
     * @param host null only for a paused route without a target
     * @param state running needs a host
     */
    private Route(String host, int port, Optional<String> generation, Optional<Instant> revokedBefore, State state)
    {
        Objects.requireNonNull(generation, "generation");
        Objects.requireNonNull(revokedBefore, "revokedBefore");
        Objects.requireNonNull(state, "state");
        if (host == null && state == State.RUNNING)
            throw new IllegalArgumentException("route: a running route needs a target");
        if (host != null && !HOST.matches(host, 1, 253))
            throw new IllegalArgumentException("host: " + host + " (expected: an IP address or host name)");
        if (host != null && (port < 1 || port > 65535))
            throw new IllegalArgumentException("port: " + port + " (expected: 1 to 65535)");
        this.host = host;
        this.port = host == null ? 0 : port;
        this.generation = generation;
        this.revokedBefore = revokedBefore;
        this.state = state;
        this.authority = host == null ? null : (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /**
     * A paused sandbox's route: traffic for it asks its manager to resume it.
     *
     * @param last the route it had while running, whose target, generation and revocation stamp it keeps; empty for none
     */
    public static Route paused(Optional<Route> last)
    {
        return last.map(r -> new Route(r.host, r.port, r.generation, r.revokedBefore, State.PAUSED))
            .orElseGet(() -> new Route(null, 0, Optional.empty(), Optional.empty(), State.PAUSED));
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
        return new Route(host, port, generation, Optional.of(instant), state);
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
     * {@code [v6]:port}, or {@code {"target":"host:port","generation":"...","revokedBefore":"2025-03-01T10:00:00.250Z","state":"running"}}
     * (all but the target optional; the target too when the state is {@code paused}).
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
                if (node == null || !node.isObject())
                    throw new IllegalArgumentException("route: malformed JSON");
                State state = state(node.get("state"));
                JsonNode target = node.get("target");
                boolean targetless = target == null || target.isNull();
                if (targetless ? state == State.RUNNING : !target.isTextual())
                    throw new IllegalArgumentException("route: JSON without a \"target\" string");
                JsonNode generation = node.get("generation");
                JsonNode revoked = node.get("revokedBefore");
                Route route = targetless ? null : parse(target.asText());
                return new Route(route == null ? null : route.host, route == null ? 0 : route.port,
                    generation == null || generation.isNull() ? Optional.empty() : Optional.of(generation.asText()),
                    revoked == null || revoked.isNull() ? Optional.empty() : Optional.of(Instant.parse(revoked.asText())), state);
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

    private static State state(JsonNode state)
    {
        if (state == null || state.isNull())
            return State.RUNNING;
        for (State known : State.values())
        {
            if (known.label().equals(state.asText()))
                return known;
        }
        throw new IllegalArgumentException("route: state " + state + " (expected: \"running\" or \"paused\")");
    }

    /** The target's host; null for a paused route without one. */
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

    public State state()
    {
        return state;
    }

    /** Whether the sandbox can be forwarded to now. */
    public boolean running()
    {
        return state == State.RUNNING;
    }

    /**
     * Whether access granted for this route still holds for {@code current}, the route as it is now:
     * the same pod, and no revocation since.
     */
    public boolean sameAccess(Route current)
    {
        return current.revokedBefore.equals(revokedBefore) && current.generation.equals(generation);
    }

    /** The {@code host:port} authority for a URI, IPv6 in brackets; null for a paused route without a target. */
    public String authority()
    {
        return authority;
    }

    /** The stored form: plain {@code host:port} unless there is a generation, a revocation or a pause to keep. */
    public String format()
    {
        if (generation.isEmpty() && revokedBefore.isEmpty() && state == State.RUNNING)
            return authority();
        ObjectNode node = JSON.createObjectNode();
        if (authority != null)
            node.put("target", authority);
        generation.ifPresent(g -> node.put("generation", g));
        revokedBefore.ifPresent(r -> node.put("revokedBefore", r.toString()));
        if (state != State.RUNNING)
            node.put("state", state.label());
        return node.toString();
    }

    @Override
    public boolean equals(Object other)
    {
        return other instanceof Route route && port == route.port && Objects.equals(host, route.host)
            && generation.equals(route.generation) && revokedBefore.equals(route.revokedBefore) && state == route.state;
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(host, port, generation, revokedBefore, state);
    }

    @Override
    public String toString()
    {
        return "Route[host=" + host + ", port=" + port + ", generation=" + generation + ", revokedBefore=" + revokedBefore
            + ", state=" + state.label() + "]";
    }
}
