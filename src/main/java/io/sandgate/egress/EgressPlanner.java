package io.sandgate.egress;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.config.ConfigKeys;
import io.sandgate.config.EgressConfig;
import io.sandgate.net.IpLiteral;
import io.sandgate.net.SsrfGuard;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The routing decision of the egress face, made once per agent call whichever way it came in:
 * which route serves the target, which credential replaces the agent's internal token, whether the
 * request line holds a secret, which address the target is pinned to, which session is sticky and
 * what limits apply. The answer is an {@link EgressPlan}, or a {@link GatewayException} saying why
 * the call is refused; nothing has been sent to any node either way.
 *
 * <p>The checks run in one order for every entry: route, credential, request line and headers,
 * declared body size, the URL's form, the agent's policy ({@link AgentGate}: domains, then budgets),
 * SSRF guard. The guard comes last so that a call refused for another reason never resolves its target. It
 * resolves a name on the {@link DnsLookups}' threads, never on the caller's, so a plan is a future:
 * a refusal decided before the lookup is thrown at once, one decided by or after it fails the future.
 */
public final class EgressPlanner
{
    /** The agent's task type, which picks the route together with the host. */
    public static final String TASK_TYPE = "X-Agent-Task-Type";
    /** The agent's session, the key of sticky routes (within the route's pool and the agent's own scope). */
    public static final String SESSION = "X-Agent-Session";
    /** {@code host}, {@code host:port}, {@code [v6]} or {@code [v6]:port}; the guard judges what the host is. */
    private static final Pattern AUTHORITY = Pattern.compile("(\\[[0-9A-Fa-f:.]{2,45}]|[A-Za-z0-9.-]{1,253})(?::(\\d{1,5}))?");

    private final RouteTable routes;
    private final SsrfGuard guard;
    private final DnsLookups lookups;
    private final Credentials credentials;
    private final LeakGuard leaks;
    private final AgentGate agents;
    private final Duration connectTimeout;
    private final Set<Integer> connectPorts;

    /**
     * @param connectPorts the target ports a tunnel may reach ({@code egress.connect-ports})
     */
    EgressPlanner(RouteTable routes, SsrfGuard guard, DnsLookups lookups, Credentials credentials, LeakGuard leaks, AgentGate agents,
                  Duration connectTimeout, Set<Integer> connectPorts)
    {
        this.agents = agents;
        this.routes = routes;
        this.guard = guard;
        this.lookups = lookups;
        this.credentials = credentials;
        this.leaks = leaks;
        this.connectTimeout = connectTimeout;
        this.connectPorts = Set.copyOf(connectPorts);
    }

    /**
     * Plans a request whose target is in its path: {@code /egress/{host}[:{port}]/{path}}, as the
     * agent sent it or as the forward-proxy port rewrote an absolute-form request.
     *
     * @param entry {@link EgressPlan.Entry#BASE_URL} or {@link EgressPlan.Entry#FORWARD_PROXY}
     * @param path what follows {@code /egress/}, still percent-encoded
     * @param query the raw query string, or null
     * @param headers the agent's request headers
     * @param tunnelAgent the agent the CONNECT of the inspected tunnel the request came through named, if any
     * @return the plan, once the target's name has been resolved; fails with a {@link GatewayException}
     *         when the SSRF guard refuses the target or its lookup does not end in time
     * @throws GatewayException when the call is refused before its target is resolved
     */
    public CompletableFuture<EgressPlan> plan(EgressPlan.Entry entry, String path, String query, RequestHeaders headers, Optional<Credentials.ProxyAgent> tunnelAgent)
    {
        if (entry == EgressPlan.Entry.CONNECT)
            throw new IllegalArgumentException("entry: " + entry + " (expected: BASE_URL, FORWARD_PROXY or INSPECTED; tunnels are planned by planTunnel)");
        int slash = path.indexOf('/');
        // Clients percent-encode the brackets of an IPv6 literal in a path segment.
        String authority = (slash < 0 ? path : path.substring(0, slash)).replace("%5B", "[").replace("%5b", "[").replace("%5D", "]").replace("%5d", "]");
        Matcher parsed = AUTHORITY.matcher(authority);
        if (!parsed.matches() || authority.startsWith(".") || authority.contains(".."))
            throw GatewayException.badRequest("malformed target host in /egress/{host}/...");
        String host = parsed.group(1).toLowerCase(Locale.ROOT);
        int port = parsed.group(2) == null ? -1 : Integer.parseInt(parsed.group(2));
        if (port > 65535)
            throw GatewayException.badRequest("malformed target port in /egress/{host}:{port}/...");

        EgressConfig.Route route = route(host, headers);
        Optional<String> named = named(tunnelAgent, headers);
        // An absolute-form request named its scheme: plain http, which the route cannot upgrade.
        // A request from inside an inspected tunnel came over TLS: it goes on over TLS.
        String scheme = entry == EgressPlan.Entry.FORWARD_PROXY ? "http" : entry == EgressPlan.Entry.INSPECTED ? "https" : route.scheme();
        Optional<Credentials.Injection> injection = injection(route, scheme, host, headers);
        // The authority comes back as it was: a secret in it is refused, never redacted. The agent's
        // own value of a query credential's parameter is dropped, as its token header is: not read.
        String agentQuery = injection.isPresent() ? injection.get().withoutOwnParameter(query) : query;
        Placeholders.Substitution placeholders = placeholders(path, agentQuery, scheme, host, headers, injection);
        if (injection.isEmpty())
            credentials.refuseInternalToken(headers, host, placeholders);
        if (route.scan() != EgressConfig.ScanMode.OFF)
            LeakGuard.refuseEncodedBody(headers.values(HttpHeader.CONTENT_ENCODING.asString()));
        String line = leaks.checkRequestLine(route, path + (agentQuery == null ? "" : "?" + agentQuery));
        leaks.checkHeaders(route, headers, name -> EgressServlet.forwards(name, injection) && !placeholders.consumes(name));
        refuseDeclaredBodyOverLimit(route, headers);
        int mark = line.indexOf('?');
        String checkedPath = mark < 0 ? line : line.substring(0, mark);
        // The keys go in after the checks, which read the placeholders as sent: a held key is a leak to them.
        String checkedQuery = placeholders.intoQuery(mark < 0 ? null : line.substring(mark + 1));
        String sentQuery = injection.isPresent() ? injection.get().intoQuery(checkedQuery) : checkedQuery;
        String pathAndQuery = (slash < 0 ? "/" : checkedPath.substring(slash)) + (sentQuery == null ? "" : "?" + sentQuery);
        requireUri(pathAndQuery);
        // The agent is named by the token a credential or a placeholder replaced (on other routes a
        // token is refused above), or by what it told the gateway as a proxy.
        Optional<String> byToken = injection.map(Credentials.Injection::agent).or(() -> placeholders.isEmpty() ? Optional.empty() : Optional.of(placeholders.agent()));
        if (named.isPresent() && byToken.isPresent() && !named.equals(byToken))
            throw GatewayException.forbidden("the request's internal token is another agent's than the one named "
                + (tunnelAgent.isPresent() ? "on its tunnel's CONNECT" : "in Proxy-Authorization"));
        Optional<String> agent = byToken.or(() -> named);
        Optional<EgressPlan.Sticky> sticky = sticky(route, headers, () -> agent);
        return admitted(agents.admit(agent, host), () -> pin(scheme, host, port))
            .thenApply(target -> plan(entry, route, target, pathAndQuery, injection, placeholders, sticky, agent));
    }

    /**
     * The agent the request names to the gateway itself: the one its inspected tunnel's CONNECT
     * named, checked again so that a token revoked meanwhile ends the tunnel's use, or the one in
     * its own {@code Proxy-Authorization}.
     */
    private Optional<String> named(Optional<Credentials.ProxyAgent> tunnelAgent, RequestHeaders headers)
    {
        if (tunnelAgent.isEmpty())
            return credentials.proxyAgent(headers).map(Credentials.ProxyAgent::id);
        return Optional.of(credentials.agentOfDigest(tunnelAgent.get().digest()).orElseThrow(() -> GatewayException.forbidden(
            "the agent named on this tunnel's CONNECT is no longer valid (token revoked or expired); open a new tunnel")));
    }

    /**
     * The keys for the request's credential placeholders: in every header value the target would
     * get and in the query ({@link Placeholders}). One in the path is refused: a path names a
     * resource, and a key put there would be logged wherever paths are.
     */
    private Placeholders.Substitution placeholders(String path, String query, String scheme, String host, RequestHeaders headers,
                                                   Optional<Credentials.Injection> injection)
    {
        if (!Placeholders.find(path).isEmpty())
            throw Placeholders.refused("credential placeholders are replaced in header values and the query only, not in the path; nothing was sent");
        List<Placeholders.Found> found = new ArrayList<>(Placeholders.find(query));
        for (String name : headers.names())
        {
            if (EgressServlet.forwards(name, injection))
                headers.values(name).forEach(value -> found.addAll(Placeholders.find(value)));
        }
        return credentials.placeholders(found, headers, scheme, host);
    }

    /**
     * What is asked of the target goes in a URI ({@link PinnedTarget#uri}). Jetty lets through a
     * query that is none, with a {@code %} not followed by two hex digits or a character RFC 3986
     * has percent-encoded ({@code |}, {@code "}, <code>{</code>), and building the URI would then
     * fail in the proxy's steps, whose error page named the pinned address. Such a request is the
     * agent's to fix: refused here, after the secret checks (an attempt to send a key is counted
     * whatever else is wrong with it) and before the target is resolved, in words that quote nothing of it.
     */
    private static void requireUri(String pathAndQuery)
    {
        try
        {
            // Parsed as PinnedTarget#uri will: after an authority, which plays no part in how the rest reads.
            new URI("http://h" + pathAndQuery);
        }
        catch (URISyntaxException x)
        {
            throw GatewayException.badRequest("malformed path or query (expected: RFC 3986, each % followed by two hex digits; percent-encode other characters)");
        }
    }

    /**
     * Plans a CONNECT tunnel to {@code host:port}, as the request line named them.
     *
     * @param headers the CONNECT request's headers
     * @return the plan, once the target's name has been resolved; fails as {@link #plan}'s does
     * @throws GatewayException when the tunnel is refused before its target is resolved
     */
    public CompletableFuture<EgressPlan> planTunnel(String host, int port, RequestHeaders headers)
    {
        EgressConfig.Route route = route(host, headers);
        // Inside a TLS tunnel nothing can be injected or checked. The CONNECT's own headers end at
        // the gateway, so an internal token among them reaches no target.
        if (route.credential().isPresent())
            throw GatewayException.forbidden("routes with a credential need base-URL mode: /egress/" + host + "/...");
        // The name itself goes out, to the name servers that resolve it and as the tunnel's SNI: a
        // secret in it is refused as in a base-URL request's authority.
        leaks.checkAuthority(route, host + ":" + port);
        // A tunnel injects nothing, but the agent may name itself on the CONNECT.
        Optional<String> agent = credentials.connectAgent(headers).map(Credentials.ProxyAgent::id);
        Optional<EgressPlan.Sticky> sticky = sticky(route, headers, () -> agent);
        // A blind tunnel is one call of its agent's; its bytes are the agent's TLS, which nobody counts.
        return admitted(agents.admit(agent, host), () -> pin("https", host, port))
            .thenApply(target -> plan(EgressPlan.Entry.CONNECT, route, target, "", Optional.empty(), Placeholders.Substitution.NONE, sticky, agent));
    }

    /**
     * The next step once the agent's policy let the call go. A policy decided from memory (no
     * budget) goes on at once, so that a refusal before the lookup is still thrown at once; one that
     * waited for the store goes on where the store answered, which only hands the name to the lookups.
     */
    private static CompletableFuture<PinnedTarget> admitted(CompletableFuture<Void> admission, Supplier<CompletableFuture<PinnedTarget>> next)
    {
        if (admission.isDone() && !admission.isCompletedExceptionally())
            return next.get();
        return admission.thenCompose(admitted -> next.get());
    }

    /**
     * Whether a CONNECT to {@code host:port} is opened by the gateway ({@link TlsInspection}) rather
     * than relayed blind. An inspected one is judged as a tunnel's request line is (route, a secret
     * in the name, the tunnelled ports) before the agent is answered; each request inside is then
     * planned by {@link #plan} as a base-URL one.
     *
     * @throws GatewayException when no route serves the host, or the name or the port is refused
     */
    boolean inspects(String host, int port, RequestHeaders headers, TlsInspection inspection)
    {
        EgressConfig.Route route = route(host, headers);
        if (!inspection.inspects(route, host))
            return false;
        leaks.checkAuthority(route, host + ":" + port);
        if (!connectPorts.contains(port))
            throw GatewayException.forbidden("port " + port + " is not among the tunnelled ports ("
                + ConfigKeys.EGRESS_CONNECT_PORTS.name() + ": " + new TreeSet<>(connectPorts) + ")");
        return true;
    }

    /**
     * The agent an inspected tunnel's CONNECT names, which every request inside then counts as.
     *
     * @throws GatewayException 407 when its {@code Proxy-Authorization} names no valid agent
     */
    Optional<Credentials.ProxyAgent> tunnelAgent(RequestHeaders headers)
    {
        return credentials.connectAgent(headers);
    }

    /** How long a connection to a node, and the CONNECT handshake of a tunnel, may take. */
    Duration connectTimeout()
    {
        return connectTimeout;
    }

    private EgressConfig.Route route(String host, RequestHeaders headers)
    {
        String taskType = headers.first(TASK_TYPE);
        return routes.find(host, taskType).orElseThrow(() ->
            GatewayException.forbidden("no egress route for " + host + (taskType == null ? "" : " and task type " + taskType)));
    }

    /**
     * A body that declares a length above the route's limit is refused before anything is sent. One
     * of undeclared length is counted as it arrives, by the servlet.
     */
    private static void refuseDeclaredBodyOverLimit(EgressConfig.Route route, RequestHeaders headers)
    {
        String declared = headers.first(HttpHeader.CONTENT_LENGTH.asString());
        if (declared == null)
            return;
        try
        {
            if (Long.parseLong(declared.trim()) > route.maxBodySize())
                throw bodyTooLarge(route);
        }
        catch (NumberFormatException x)
        {
            // Jetty has already refused a malformed Content-Length; nothing to judge here.
        }
    }

    /** The answer to a request body above the route's {@code max_body_size}. */
    static GatewayException bodyTooLarge(EgressConfig.Route route)
    {
        return new GatewayException(HttpStatus.PAYLOAD_TOO_LARGE_413, "too_large",
            "request body larger than " + route.maxBodySize() + " bytes (the route's max_body_size)");
    }

    /**
     * The real key for a route that names a credential, sent over https only. On any other route
     * an internal token is refused rather than forwarded (once the placeholders have said which
     * header carries the token that stops here): it would reach a host it was never meant for.
     */
    private Optional<Credentials.Injection> injection(EgressConfig.Route route, String scheme, String host, RequestHeaders headers)
    {
        if (route.credential().isEmpty())
            return Optional.empty();
        if (!scheme.equals("https"))
            throw GatewayException.forbidden("credential " + route.credential().get() + " is only sent over https (use /egress/" + host + "/...)");
        return Optional.of(credentials.authorize(headers, route, host));
    }

    /**
     * Checked once per call: retries on other nodes go to the same checked address. An https
     * target is reached through a CONNECT tunnel, which would carry anything (SMTP, SSH, a database
     * protocol) to any port of a public host: only the ports of {@code egress.connect-ports} are
     * tunnelled to. The port is judged before the name is resolved.
     */
    private CompletableFuture<PinnedTarget> pin(String scheme, String host, int port)
    {
        int effective = port > 0 ? port : PinnedTarget.defaultPort(scheme);
        if (scheme.equals("https") && !connectPorts.contains(effective))
            throw GatewayException.forbidden("port " + effective + " is not among the tunnelled ports ("
                + ConfigKeys.EGRESS_CONNECT_PORTS.name() + ": " + new TreeSet<>(connectPorts) + ")");
        // A literal needs no lookup: it is judged here, and never waits behind names that hang.
        if (IpLiteral.parse(host).isPresent())
            return CompletableFuture.completedFuture(check(scheme, host, effective));
        return lookups.run(host, () -> check(scheme, host, effective));
    }

    /** The guard's decision, in the words the agent is told. */
    private PinnedTarget check(String scheme, String host, int port)
    {
        try
        {
            return PinnedTarget.check(guard, scheme, host, port);
        }
        catch (SsrfGuard.Refused x)
        {
            throw Errors.map(x, Errors.Peer.EGRESS);
        }
    }

    /**
     * The session is scoped by the route's pool and by the calling agent, when the gateway knows
     * it. Read before the lookup: the headers are the request's own, not to be read from a lookup
     * thread.
     *
     * @param agent the agent the call comes from, if the gateway knows it; asked on sticky routes only
     */
    private static Optional<EgressPlan.Sticky> sticky(EgressConfig.Route route, RequestHeaders headers, Supplier<Optional<String>> agent)
    {
        String session = headers.first(SESSION);
        return route.sticky() && session != null
            ? Optional.of(new EgressPlan.Sticky(route.pool(), agent.get(), session, route.stickyTtl()))
            : Optional.empty();
    }

    private EgressPlan plan(EgressPlan.Entry entry, EgressConfig.Route route, PinnedTarget target, String pathAndQuery,
                            Optional<Credentials.Injection> injection, Placeholders.Substitution placeholders, Optional<EgressPlan.Sticky> sticky,
                            Optional<String> agent)
    {
        return new EgressPlan(entry, route, target, pathAndQuery, injection, placeholders, sticky,
            new EgressPlan.Timeouts(connectTimeout, route.idleTimeout(), route.timeout()), agent);
    }
}
