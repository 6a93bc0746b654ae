package io.sandgate.ingress;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.SandgateConfig;
import io.sandgate.core.Futures;
import io.sandgate.core.Schedulers;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.ingress.IngressDecision.Redirect;
import io.sandgate.ingress.IngressDecision.Source;
import io.sandgate.store.Store;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ingress face as a front-end other than the servlet filter sees it: plain requests in,
 * decisions and routes out, no servlet API anywhere.
 */
class IngressTest
{
    private static final String ORIGIN = "http://gw.example";
    private static final String CLIENT = "192.0.2.10";

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private Store store;

    private Ingress ingress(String contextPath, Map<String, Object> settings)
    {
        Map<String, Object> values = new HashMap<>(settings);
        values.put("ingress.cookie.secret", "0123456789abcdef0123456789abcdef");
        values.put("ingress.static-routes", Map.of("42", "10.0.0.7:6080"));
        SandgateConfig config = ConfigLoader.fromValues(values);
        store = Store.create(config, registry, Schedulers.create());
        return new Ingress(config.ingress(), contextPath, store.routes(), new ClientInfo(List.of()), registry, Clock.systemUTC());
    }

    @AfterEach
    void closeStore()
    {
        if (store != null)
            store.close();
    }

    private static IngressRequest get(String path, List<String> cookies)
    {
        return new IngressRequest("GET", path, null, ORIGIN, null, cookies, null);
    }

    private double resolutions(Source source)
    {
        return registry.get("sandgate.ingress.resolution").tag("source", source.label()).counter().count();
    }

    @Test
    void decisions_areCountedByTheStepThatFoundTheSandbox()
    {
        Ingress ingress = ingress("", Map.of());
        Forward first = assertInstanceOf(Forward.class, ingress.decide(get("/vnc/42/", List.of()), false));
        String value = first.setCookie().substring(first.setCookie().indexOf('=') + 1, first.setCookie().indexOf(';'));

        ingress.decide(get("/vnc/app/ui.js", List.of(value)), false);
        ingress.decide(get("/vnc/app/ui.js", List.of(value)), false);

        assertEquals(1, resolutions(Source.PATH));
        assertEquals(2, resolutions(Source.COOKIE));
        assertEquals(0, resolutions(Source.REFERER));
        assertEquals(0, resolutions(Source.HEADER));
    }

    @Test
    void redirects_areNotCountedAsResolutions()
    {
        Ingress ingress = ingress("", Map.of());

        Redirect redirect = assertInstanceOf(Redirect.class, ingress.decide(get("/vnc/42", List.of()), false));

        assertEquals(308, redirect.status());
        for (Source source : Source.values())
            assertEquals(0, resolutions(source), source.label());
    }

    @Test
    void contextPath_isPartOfTheMountAndOfEveryRedirect()
    {
        Ingress ingress = ingress("/gate", Map.of());

        assertEquals("/gate/vnc/", ingress.mount());
        Redirect redirect = assertInstanceOf(Redirect.class, ingress.decide(get("/gate/vnc/42", List.of()), false));
        assertEquals("/gate/vnc/42/", redirect.location());
    }

    @Test
    void secureClient_getsASecureCookie_whenTheModeIsAuto()
    {
        Ingress ingress = ingress("", Map.of());

        String overHttps = ((Forward)ingress.decide(get("/vnc/42/", List.of()), true)).setCookie();
        String overHttp = ((Forward)ingress.decide(get("/vnc/42/", List.of()), false)).setCookie();

        assertTrue(overHttps.endsWith("; Secure"), overHttps);
        assertFalse(overHttp.contains("Secure"), overHttp);
    }

    @Test
    void route_comesFromTheStore_andAMissingOneIs404()
    {
        Ingress ingress = ingress("", Map.of());

        assertEquals("10.0.0.7:6080", routeNow(ingress, path("42"), get("/vnc/42/", List.of()), CLIENT).authority());
        assertEquals(404, assertThrows(GatewayException.class, () -> routeNow(ingress, path("43"), get("/vnc/43/", List.of()), CLIENT)).status());
    }

    private static Forward path(String sandboxId)
    {
        return new Forward(sandboxId, Source.PATH, "/", null);
    }

    @Test
    void aClientOverItsMissBudget_isRefusedWithoutTheStoreBeingAsked_whileRoutesAtHandKeepRouting()
    {
        CountedRoutes store = new CountedRoutes(Map.of("42", Route.of("10.0.0.7", 6080)), Set.of("42"));
        Ingress ingress = budgeted(store, 3);

        for (String id : List.of("101", "102", "103"))
            assertEquals(404, assertThrows(GatewayException.class, () -> routeNow(ingress, path(id), get("/vnc/" + id + "/", List.of()), CLIENT)).status());
        GatewayException refused = assertThrows(GatewayException.class, () -> routeNow(ingress, path("104"), get("/vnc/104/", List.of()), CLIENT));
        CompletionException refusedAsync = assertThrows(CompletionException.class,
            () -> ingress.decideAndRoute(get("/vnc/105/", List.of()), false, CLIENT, NO_EXECUTOR).join());

        assertEquals(429, refused.status());
        assertEquals("too_many_route_misses", refused.code());
        assertTrue(refused.retryAfterSeconds() >= 1 && refused.retryAfterSeconds() <= 21, "Retry-After " + refused.retryAfterSeconds());
        assertEquals(429, assertInstanceOf(GatewayException.class, refusedAsync.getCause()).status());
        assertEquals(List.of("101", "102", "103"), store.asked, "the store was asked past the budget");
        assertEquals("10.0.0.7:6080", routeNow(ingress, path("42"), get("/vnc/42/", List.of()), CLIENT).authority());
        assertEquals("10.0.0.7:6080", ingress.decideAndRoute(get("/vnc/42/", List.of()), false, CLIENT, NO_EXECUTOR).join().route().authority());
        assertEquals(404, assertThrows(GatewayException.class, () -> routeNow(ingress, path("104"), get("/vnc/104/", List.of()), "192.0.2.11")).status(),
            "another client's budget");
    }

    @Test
    void lookupsThatFindARoute_orGetNoAnswer_costTheClientNothing()
    {
        CountedRoutes store = new CountedRoutes(Map.of("43", Route.of("10.0.0.8", 6080)), Set.of());
        Ingress ingress = budgeted(store, 2);

        for (int i = 0; i < 5; i++)
            assertEquals("10.0.0.8:6080", routeNow(ingress, path("43"), get("/vnc/43/", List.of()), CLIENT).authority());
        store.down = true;
        for (int i = 0; i < 5; i++)
            assertThrows(StoreUnavailableException.class, () -> routeNow(ingress, path("201"), get("/vnc/201/", List.of()), CLIENT));
        CompletionException unanswered = assertThrows(CompletionException.class,
            () -> ingress.decideAndRoute(get("/vnc/202/", List.of()), false, CLIENT, NO_EXECUTOR).join());
        store.down = false;

        assertInstanceOf(StoreUnavailableException.class, unanswered.getCause());
        assertEquals(404, assertThrows(GatewayException.class, () -> routeNow(ingress, path("203"), get("/vnc/203/", List.of()), CLIENT)).status());
        assertEquals(404, assertInstanceOf(GatewayException.class, assertThrows(CompletionException.class,
            () -> ingress.decideAndRoute(get("/vnc/204/", List.of()), false, CLIENT, NO_EXECUTOR).join()).getCause()).status());
        assertEquals(429, assertThrows(GatewayException.class, () -> routeNow(ingress, path("205"), get("/vnc/205/", List.of()), CLIENT)).status());
    }

    private Ingress budgeted(RouteStore store, int missesPerMinute)
    {
        SandgateConfig config = ConfigLoader.fromValues(Map.of("ingress.cookie.secret", "0123456789abcdef0123456789abcdef",
            "ingress.route-misses-per-client-per-minute", Integer.toString(missesPerMinute)));
        return new Ingress(config.ingress(), "", store, new ClientInfo(List.of()), registry, Clock.systemUTC());
    }

    @Test
    void decideAndRoute_withACachedRoute_completesOnTheCallingThread_andCountsOnce()
    {
        Ingress ingress = ingress("", Map.of());

        CompletableFuture<Ingress.Routed> routing = ingress.decideAndRoute(get("/vnc/42/", List.of()), false, CLIENT, NO_EXECUTOR);

        assertTrue(routing.isDone());
        assertEquals("42", ((Forward)routing.join().decision()).sandboxId());
        assertEquals("10.0.0.7:6080", routing.join().route().authority());
        assertEquals(1, resolutions(Source.PATH));
        Ingress.Routed redirect = ingress.decideAndRoute(get("/vnc/42", List.of()), false, CLIENT, NO_EXECUTOR).join();
        assertInstanceOf(Redirect.class, redirect.decision());
        assertNull(redirect.route());
    }

    @Test
    void decideAndRoute_failsAsDecideAndRouteThrow()
    {
        Ingress ingress = ingress("", Map.of());

        CompletionException noRoute = assertThrows(CompletionException.class, () -> ingress.decideAndRoute(get("/vnc/43/", List.of()), false, CLIENT, NO_EXECUTOR).join());
        CompletionException noSandbox = assertThrows(CompletionException.class, () -> ingress.decideAndRoute(get("/vnc/app.js", List.of()), false, CLIENT, NO_EXECUTOR).join());

        assertEquals(404, assertInstanceOf(GatewayException.class, noRoute.getCause()).status());
        assertEquals(404, assertInstanceOf(GatewayException.class, noSandbox.getCause()).status());
    }

    @Test
    void decideAndRoute_withARouteTheStoreIsAskedFor_holdsNoThread_untilTheStoreAnswers()
    {
        CompletableFuture<Optional<Route>> answer = new CompletableFuture<>();
        SandgateConfig config = ConfigLoader.fromValues(Map.of("ingress.cookie.secret", "0123456789abcdef0123456789abcdef"));
        Ingress ingress = new Ingress(config.ingress(), "", new AskedRoutes(answer), new ClientInfo(List.of()), registry, Clock.systemUTC());

        CompletableFuture<Ingress.Routed> routing = ingress.decideAndRoute(get("/vnc/42/", List.of()), false, CLIENT, NO_EXECUTOR);

        assertFalse(routing.isDone());
        answer.complete(Optional.of(Route.of("10.0.0.9", 6080)));
        assertEquals("10.0.0.9:6080", routing.join().route().authority());
    }

    @Test
    void decideAndRoute_redeemsAGrant_onTheExecutorGiven()
    {
        Ingress ingress = ingress("", Map.of("ingress.access", "signed"));
        String grant = ingress.grants().issue("42", "alice", Duration.ofMinutes(5));
        List<Runnable> pool = new ArrayList<>();
        IngressRequest redeeming = new IngressRequest("GET", "/vnc/42/", "sandgate_grant=" + grant, ORIGIN, null, List.of(), null);

        CompletableFuture<Ingress.Routed> routing = ingress.decideAndRoute(redeeming, false, CLIENT, pool::add);

        assertFalse(routing.isDone(), "the redemption writes to the store: not on the calling thread");
        assertEquals(1, pool.size());
        pool.get(0).run();
        assertEquals(303, assertInstanceOf(Redirect.class, routing.join().decision()).status());
    }

    /** Work that must not go to a pool: the calling thread does it, or the store's callback. */
    private static final Executor NO_EXECUTOR = task ->
    {
        throw new AssertionError("handed to the pool");
    };

    /** Routes, some at hand and the others asked for, the store's lookups recorded; it can be made unreachable. */
    private static final class CountedRoutes extends UntouchedRoutes
    {
        private final Map<String, Route> routes;
        private final Set<String> atHand;
        private final List<String> asked = new ArrayList<>();
        private volatile boolean down;

        CountedRoutes(Map<String, Route> routes, Set<String> atHand)
        {
            this.routes = routes;
            this.atHand = atHand;
        }

        @Override
        public Optional<Route> cached(String id)
        {
            return atHand.contains(id) ? Optional.of(routes.get(id)) : Optional.empty();
        }

        @Override
        public synchronized Optional<Route> find(String id)
        {
            if (down)
                throw new StoreUnavailableException("route store unreachable", null);
            asked.add(id);
            return Optional.ofNullable(routes.get(id));
        }
    }

    /** A route store whose every route must be asked for, as Redis is for one not cached. */
    private static final class AskedRoutes extends UntouchedRoutes
    {
        private final CompletableFuture<Optional<Route>> answer;

        AskedRoutes(CompletableFuture<Optional<Route>> answer)
        {
            this.answer = answer;
        }

        @Override
        public Optional<Route> find(String id)
        {
            throw new AssertionError("a front-end that must not wait asked find()");
        }

        @Override
        public CompletableFuture<Optional<Route>> findAsync(String id)
        {
            return answer;
        }
    }

    /** The route as {@link Ingress#route} completes it, failures thrown as they are. */
    private static Route routeNow(Ingress ingress, IngressDecision.Forward forward, IngressRequest request, String client)
    {
        return Futures.join(ingress.route(forward, request, client));
    }
}
