package io.sandgate.ingress;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.IngressConfig;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.GatewayException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ingress face without the servlet: turns a request into a decision and a route. Built once by
 * the composition root; front-ends (the servlet filter, and any faster one beside it) read their
 * requests into an {@link IngressRequest} and ask here.
 */
public final class Ingress
{
    /**
     * The most of an answer's head either front-end reads: Jetty's default response header size,
     * 8 KB. The server still has room for the gateway's own fields beside a head just under it
     * (8.6 KB in all reach the browser, {@code SandboxAnswersIT}); a sandbox that sends more gets
     * its exchange failed as a bad answer (502), instead of the server failing to write it (500).
     */
    public static final int MAX_ANSWER_HEAD = 8 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(Ingress.class);

    private final IngressConfig config;
    private final String mount;
    private final RouteStore routes;
    private final ClientInfo clients;
    private final SessionCookie cookie;
    private final SessionResolver resolver;
    private final Grants grants;
    private final HostPattern hosts;
    private final ForwardPolicy policy;
    private final OpenStreams streams = new OpenStreams();
    private final SandboxWaker waker;
    private final ActivityRecorder activity;
    private final RouteMisses misses;
    private final Counter missesRefused;
    private final Map<IngressDecision.Source, Counter> resolutions = new EnumMap<>(IngressDecision.Source.class);

    /** An ingress whose grants are remembered as redeemed in this process only: one replica. */
    public Ingress(IngressConfig config, String contextPath, RouteStore routes, ClientInfo clients, MeterRegistry registry, Clock clock)
    {
        this(config, contextPath, routes, Redemptions.inMemory(clock), clients, registry, clock);
    }

    /**
     * An ingress that wakes no sandbox (a paused one is 503 until something else resumes it) and
     * notes no sandbox's traffic.
     */
    public Ingress(IngressConfig config, String contextPath, RouteStore routes, Redemptions redemptions, ClientInfo clients,
                   MeterRegistry registry, Clock clock)
    {
        this(config, contextPath, routes, redemptions, clients, SandboxWaker.NONE, ActivityRecorder.NONE, registry, clock);
    }

    /**
     * @param contextPath where the webapp is deployed ("" at the root)
     * @param redemptions the grants already redeemed, shared by the replicas that share the route store
     * @param clients who the clients are, believing forwarding headers only from trusted proxies
     * @param waker what a request for a sandbox that is not running asks
     * @param activity where each forward, and each bridged WebSocket's traffic, is noted
     */
    public Ingress(IngressConfig config, String contextPath, RouteStore routes, Redemptions redemptions, ClientInfo clients,
                   SandboxWaker waker, ActivityRecorder activity, MeterRegistry registry, Clock clock)
    {
        this.config = config;
        this.mount = contextPath + config.prefix();
        this.routes = routes;
        this.clients = clients;
        this.waker = waker;
        this.activity = activity;
        byte[] key;
        if (config.cookie().secret().isPresent())
        {
            key = config.cookie().secret().get().bytes();
        }
        else
        {
            key = new byte[32];
            new SecureRandom().nextBytes(key);
            LOG.warn("ingress.cookie.secret is not set: using a random key. Session cookies and grants will not survive a restart "
                + "and will not work across replicas; set the same secret on every replica.");
        }
        Signer signer = new Signer(key);
        IdSyntax ids = IdSyntax.of(config);
        this.cookie = config.access() == IngressConfig.Access.SIGNED
            ? SessionCookie.granted(signer, ids, config.cookie().ttl(), config.cookie().maxSandboxes(), clock)
            : new SessionCookie(signer, ids, config.cookie().ttl(), config.cookie().maxSandboxes(), clock);
        this.grants = new Grants(signer, clock);
        GrantRedemption redemption = new GrantRedemption(grants, redemptions, routes::find, config.sessionMaxAge(), clock);
        this.resolver = new SessionResolver(config, contextPath, ids, cookie, redemption);
        this.hosts = HostPattern.of(config.hostPattern(), ids);
        for (IngressDecision.Source source : IngressDecision.Source.values())
        {
            resolutions.put(source, Counter.builder("sandgate.ingress.resolution")
                .tag("source", source.label())
                .description("Ingress requests by the resolution step that found their sandbox").register(registry));
        }
        this.policy = new ForwardPolicy(this);
        this.misses = new RouteMisses(config.routeMissesPerClientPerMinute(), System::nanoTime);
        this.missesRefused = Counter.builder("sandgate.ingress.route.misses.refused")
            .description("Ingress requests refused without asking the store: their client had used up its lookups without a route").register(registry);
    }

    public IngressConfig config()
    {
        return config;
    }

    /** The ingress prefix as the browser sees it, context path included: {@code /vnc/}. */
    public String mount()
    {
        return mount;
    }

    public ClientInfo clients()
    {
        return clients;
    }

    /** What a forward changes on its way, for every front-end. */
    public ForwardPolicy policy()
    {
        return policy;
    }

    /**
     * Whether the ingress serves a request: on the gateway's own host, paths under the prefix (and
     * the prefix without its slash, which is redirected); in host mode, every path of a sandbox's
     * host. The servlet mapping and the embedded runner's handler both decide by this.
     *
     * @param pathInContext the decoded path after the context path
     */
    public boolean serves(String pathInContext, ClientInfo.RequestView request)
    {
        String prefix = config.prefix();
        return pathInContext.startsWith(prefix) || (pathInContext.length() == prefix.length() - 1 && prefix.startsWith(pathInContext))
            || (config.hostPattern().isPresent() && hosts.isSandboxHost(clients.host(request)));
    }

    /** Issues grant tokens with this gateway's secret (admin API, tests, the {@code grant} command). */
    public Grants grants()
    {
        return grants;
    }

    /**
     * Resolves the request's sandbox; see {@link SessionResolver}.
     *
     * @param secure whether the client reached us over HTTPS (directly or via a trusted proxy)
     * @throws GatewayException 400 for a malformed id, 403 for a forged cookie, a missing grant or
     *         access revoked, 404 when nothing names a sandbox
     */
    public IngressDecision decide(IngressRequest request, boolean secure)
    {
        IngressDecision decision = resolver.resolve(request, secure, config.cookie().secure());
        if (decision instanceof IngressDecision.Forward forward)
        {
            if (config.access() == IngressConfig.Access.SIGNED)
                requireStanding(request, forward.sandboxId());
            resolutions.get(forward.source()).increment();
        }
        return decision;
    }

    /**
     * Refuses a signed-access request whose cookie entry a revocation has overtaken: the sandbox's
     * route carries the stamp and the serving pod's generation, and the route is read from the
     * local cache as the forward itself reads it, so this costs no round trip of its own.
     */
    private void requireStanding(IngressRequest request, String sandboxId)
    {
        Optional<Route> route = routes.find(sandboxId);
        // Without a route there is nothing to reach: the forward answers 404. A paused one is
        // checked once it runs, against the route it is forwarded to.
        route.filter(Route::running).ifPresent(r -> requireStanding(request, sandboxId, r));
    }

    private void requireStanding(IngressRequest request, String sandboxId, Route route)
    {
        // Decoded again, from the verified entries the resolver's decoding left in the cache.
        SessionCookie.Entry entry = cookie.decode(request.cookies()).entry(sandboxId);
        if (entry == null || !entry.standsFor(route))
            throw GatewayException.forbidden("access to this sandbox was revoked, or its pod replaced, since this session began; open a new link");
    }

    /** Where the traffic of each sandbox is noted: the WebSocket bridge notes its tunnels' here. */
    public ActivityRecorder activity()
    {
        return activity;
    }

    /** The answers of unknown length in progress, which a revocation ends. */
    public OpenStreams streams()
    {
        return streams;
    }

    /** The sandbox's route as this replica knows it now, from the local cache when possible. */
    public Optional<Route> currentRoute(String sandboxId)
    {
        return routes.find(sandboxId);
    }

    /**
     * The route a forward goes to, checked once more in signed access against this very route:
     * the route may change between the decision and the forward (a revocation, a new pod), and the
     * request must go where its session was checked to stand. In host mode, the port the host
     * names on the sandbox's pod. Completes at once unless the sandbox is not running and is being
     * woken ({@link SandboxWaker}): then when it runs, with no thread held meanwhile.
     *
     * @param clientAddress the client's address, whose budget of lookups without a route this may take from
     * @return the route; failed with 404 without a route, 403 when the session no longer stands for
     *         it or the host names a port that is not open, 503 when the sandbox is paused and does
     *         not wake in time
     * @throws GatewayException 429 when the route is not at hand and the client has used up its budget
     */
    public CompletableFuture<Route> route(IngressDecision.Forward forward, IngressRequest resolved, String clientAddress)
    {
        Optional<Route> found = find(forward.sandboxId(), clientAddress);
        return awake(forward.sandboxId(), found).thenApply(route ->
        {
            Route running = route.orElseThrow(() -> noRoute(forward.sandboxId()));
            if (config.access() == IngressConfig.Access.SIGNED)
                requireStanding(resolved, forward.sandboxId(), running);
            Route target = target(forward, running);
            activity.forwarded(forward.sandboxId());
            return target;
        });
    }

    /** The route when it is running; else what the waker makes of it, in time. */
    private CompletableFuture<Optional<Route>> awake(String sandboxId, Optional<Route> found)
    {
        if (found.isPresent() && found.get().running())
            return CompletableFuture.completedFuture(found);
        try
        {
            return waker.running(sandboxId, found);
        }
        catch (RuntimeException x)
        {
            return CompletableFuture.failedFuture(x);
        }
    }

    /**
     * {@link #decide} then {@link #route}, for a front-end that runs on Jetty's selector threads and
     * so must not wait on the store: a request that may redeem a grant (a write to the store) is
     * decided on {@code blocking}, and a route that is not cached is read without holding a thread.
     * A cached route, the common case, completes on the calling thread. One route lookup serves both
     * the check of signed access and the forward.
     *
     * @param clientAddress the client's address, whose budget of lookups without a route this may take from
     * @param blocking runs what may wait on the store
     * @return the decision and, for a forward, where it goes; failed with what {@code decide} and
     *         {@code route} throw
     */
    public CompletableFuture<Routed> decideAndRoute(IngressRequest request, boolean secure, String clientAddress, Executor blocking)
    {
        if (resolver.mayRedeemGrant(request))
            return CompletableFuture.supplyAsync(() -> decideAndRouteNow(request, secure, clientAddress), blocking).thenCompose(routed -> routed);
        IngressDecision decision;
        try
        {
            decision = resolver.resolve(request, secure, config.cookie().secure());
        }
        catch (RuntimeException x)
        {
            return CompletableFuture.failedFuture(x);
        }
        if (!(decision instanceof IngressDecision.Forward forward))
            return CompletableFuture.completedFuture(new Routed(decision, null));
        return findAsync(forward.sandboxId(), clientAddress)
            .thenCompose(route -> awake(forward.sandboxId(), route))
            .thenApply(route -> routed(request, forward, route));
    }

    private CompletableFuture<Routed> decideAndRouteNow(IngressRequest request, boolean secure, String clientAddress)
    {
        IngressDecision decision = resolver.resolve(request, secure, config.cookie().secure());
        if (!(decision instanceof IngressDecision.Forward forward))
            return CompletableFuture.completedFuture(new Routed(decision, null));
        return awake(forward.sandboxId(), find(forward.sandboxId(), clientAddress)).thenApply(route -> routed(request, forward, route));
    }

    /** A forward and its route, as {@link #decide} then {@link #route} check and count them. */
    private Routed routed(IngressRequest request, IngressDecision.Forward forward, Optional<Route> route)
    {
        if (config.access() == IngressConfig.Access.SIGNED)
            route.ifPresent(r -> requireStanding(request, forward.sandboxId(), r));
        resolutions.get(forward.source()).increment();
        Route target = target(forward, route.orElseThrow(() -> noRoute(forward.sandboxId())));
        activity.forwarded(forward.sandboxId());
        return new Routed(forward, target);
    }

    /** In host mode, the port the host names on the sandbox's pod; else the route itself. */
    private Route target(IngressDecision.Forward forward, Route route)
    {
        return forward.hostMode() ? forward.host().target(route, config.sandboxPorts()) : route;
    }

    private static GatewayException noRoute(String sandboxId)
    {
        return GatewayException.notFound("no route for sandbox " + sandboxId);
    }

    /**
     * The sandbox's route: the one this replica has at hand, else the store's, asked only when the
     * client's budget of lookups without a route allows.
     *
     * @throws GatewayException 429 when the route is not at hand and the client has used up its budget
     */
    private Optional<Route> find(String sandboxId, String clientAddress)
    {
        Optional<Route> route = routes.cached(sandboxId);
        if (route.isPresent())
            return route;
        String client = takeMiss(clientAddress);
        try
        {
            route = routes.find(sandboxId);
        }
        catch (RuntimeException x)
        {
            misses.giveBack(client);
            throw x;
        }
        if (route.isPresent())
            misses.giveBack(client);
        return route;
    }

    /** As {@link #find}, without holding the calling thread while the store answers. */
    private CompletableFuture<Optional<Route>> findAsync(String sandboxId, String clientAddress)
    {
        Optional<Route> route = routes.cached(sandboxId);
        if (route.isPresent())
            return CompletableFuture.completedFuture(route);
        String client;
        try
        {
            client = takeMiss(clientAddress);
        }
        catch (GatewayException x)
        {
            return CompletableFuture.failedFuture(x);
        }
        return routes.findAsync(sandboxId).whenComplete((found, failure) ->
        {
            if (failure != null || found.isPresent())
                misses.giveBack(client);
        });
    }

    /**
     * Takes a lookup from the client's budget before the store is asked for a route this replica
     * does not have at hand; given back unless the lookup ends without a route.
     *
     * @return the key the client's budget is kept under
     * @throws GatewayException 429 when the client has none left
     */
    private String takeMiss(String clientAddress)
    {
        String client = clients.limitKey(clientAddress);
        if (!misses.tryTake(client))
        {
            missesRefused.increment();
            throw misses.exhausted(client);
        }
        return client;
    }

    /**
     * @param decision what to do with the request
     * @param route where a forward goes (in host mode, on the port its host names); null for a redirect
     */
    public record Routed(IngressDecision decision, Route route)
    {
    }
}
