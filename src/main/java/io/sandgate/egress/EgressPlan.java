package io.sandgate.egress;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

import io.sandgate.config.EgressConfig;

/**
 * What the gateway will do with one agent call, decided by {@link EgressPlanner} before any node is
 * asked: the front-ends (the base-URL servlet, the forward-proxy port, CONNECT) only carry it out.
 *
 * @param entry how the call reached the gateway
 * @param route the route that serves it
 * @param target the target, its name pinned to the address the SSRF guard accepted: every attempt,
 *        on whichever node, goes to that address
 * @param pathAndQuery what is asked of the target, the injected query parameter included; empty
 *        for a tunnel, whose requests the gateway never sees
 * @param injection the real key that replaces the agent's internal token, when the route names a
 *        credential
 * @param placeholders the keys that replace the agent's credential placeholders in its headers
 *        (the query has them already), and the header of its token that stops at the gateway
 * @param sticky the agent session to keep on one node, when the route is sticky and the agent
 *        named its session
 * @param timeouts the limits every attempt runs under
 * @param agent the agent whose policy the call was held to and whose bytes it counts; empty when
 *        the gateway cannot name the caller
 */
public record EgressPlan(Entry entry, EgressConfig.Route route, PinnedTarget target, String pathAndQuery,
                         Optional<Credentials.Injection> injection, Placeholders.Substitution placeholders, Optional<Sticky> sticky, Timeouts timeouts,
                         Optional<String> agent)
{

    /** How an agent call reached the gateway. */
    public enum Entry
    {
        /** {@code /egress/{host}/{path}}: towards the route's scheme, https by default. */
        BASE_URL,
        /** An absolute-form request on the forward-proxy port: towards plain http, as the agent asked. */
        FORWARD_PROXY,
        /** A CONNECT: the agent's own TLS inside a tunnel, which the gateway can neither read nor change. */
        CONNECT,
        /** A request inside an inspected CONNECT tunnel ({@link TlsInspection}): towards https, as the agent asked. */
        INSPECTED
    }

    /**
     * A sticky session: the node it is pinned to is kept while it is healthy. A session is the
     * agent's name for it within one pool and one caller: the same name on a route of another pool,
     * or from another agent, is another session, so no caller can move or join someone else's pin.
     *
     * @param pool the route's pool, whose nodes the pin names
     * @param agent the agent whose internal token the call carries; empty for a caller the gateway
     *        does not know (such callers share one scope per pool)
     * @param session the agent's session, as it named it
     * @param ttl how long an idle pin lasts (sliding)
     */
    public record Sticky(String pool, Optional<String> agent, String session, Duration ttl)
    {
        public Sticky
        {
            Objects.requireNonNull(pool, "pool");
            Objects.requireNonNull(agent, "agent");
            Objects.requireNonNull(session, "session");
            Objects.requireNonNull(ttl, "ttl");
        }

        /**
         * The pin's key in the store: {@code {length}:{pool}/{length}:{agent}/{session}}, with
         * {@code -} for an unknown caller. The configured names are length-prefixed, so no choice of
         * pool or agent names makes two scopes share a key; the session comes last, as sent (its
         * length is bounded by the request-header limit).
         */
        public String key()
        {
            return pool.length() + ":" + pool + "/" + agent.map(id -> id.length() + ":" + id).orElse("-") + "/" + session;
        }
    }

    /**
     * @param connect towards a node, the CONNECT handshake of a tunnel included
     * @param idle longest silence before the first byte and between bytes
     * @param total one exchange, retries included
     */
    public record Timeouts(Duration connect, Duration idle, Duration total)
    {
        public Timeouts
        {
            Objects.requireNonNull(connect, "connect");
            Objects.requireNonNull(idle, "idle");
            Objects.requireNonNull(total, "total");
        }
    }

    public EgressPlan
    {
        Objects.requireNonNull(entry, "entry");
        Objects.requireNonNull(route, "route");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(pathAndQuery, "pathAndQuery");
        Objects.requireNonNull(injection, "injection");
        Objects.requireNonNull(placeholders, "placeholders");
        Objects.requireNonNull(sticky, "sticky");
        Objects.requireNonNull(timeouts, "timeouts");
        Objects.requireNonNull(agent, "agent");
        if (entry == Entry.CONNECT ? !pathAndQuery.isEmpty() : !pathAndQuery.startsWith("/"))
            throw new IllegalArgumentException("pathAndQuery: " + pathAndQuery + " (expected: empty for a tunnel, else starting with /)");
    }

    /** A plan without credential placeholders, of a caller the gateway does not name. */
    public EgressPlan(Entry entry, EgressConfig.Route route, PinnedTarget target, String pathAndQuery,
                      Optional<Credentials.Injection> injection, Optional<Sticky> sticky, Timeouts timeouts)
    {
        this(entry, route, target, pathAndQuery, injection, Placeholders.Substitution.NONE, sticky, timeouts, Optional.empty());
    }

    /** Whether a real key goes to the target, by the route's credential or a placeholder: the answer is then read for it. */
    public boolean sendsKeys()
    {
        return injection.isPresent() || !placeholders.isEmpty();
    }

    /** The URI requests go to: the checked address in place of the name. */
    public String uri()
    {
        return target.uri(pathAndQuery).toString();
    }

    /** The route as metrics and logs name it: its first domain. */
    public String routeName()
    {
        return route.domains().get(0);
    }
}
