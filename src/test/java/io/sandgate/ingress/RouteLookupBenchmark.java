package io.sandgate.ingress;

import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.CookieConfig;
import io.sandgate.config.IngressConfig;
import io.sandgate.config.SandgateConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.store.Store;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the ingress does per request before it proxies: resolve the sandbox id (here from the signed
 * session cookie, as for noVNC's id-less asset and WebSocket requests) and look its route up in the
 * route store's local cache. The resolver is built the way {@link Ingress} builds it, which is why
 * this benchmark sits in the ingress package (the resolver's constructor is package-private).
 *
 * <p>{@code store=redis} needs a Redis at {@code redisAddress}: bench/run.sh starts one. The route is
 * cached after the first lookup, so no benchmark method does a Redis round trip.</p>
 *
 * <p>Run: {@code java -cp ... org.openjdk.jmh.Main RouteLookupBenchmark -p store=memory,redis
 * -p redisAddress=redis://127.0.0.1:PORT}. Not a test: the suite never runs it.</p>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RouteLookupBenchmark
{
    private static final String SANDBOX = "37579";
    private static final String ORIGIN = "http://127.0.0.1:8080";

    @Param({"memory"})
    public String store;

    @Param({"redis://127.0.0.1:6379"})
    public String redisAddress;

    private Store backing;
    private RouteStore routes;
    private SessionResolver resolver;
    private CookieConfig.SecureMode secureMode;
    private IngressRequest byCookie;
    private IngressRequest byPath;

    @Setup(Level.Trial)
    public void setUp()
    {
        Map<String, Object> values = new HashMap<>();
        values.put("store.type", store);
        values.put("store.redis.address", redisAddress);
        values.put("ingress.cookie.secret", "bench-secret-0123456789abcdef0123");
        values.put("ingress.static-routes", Map.of(SANDBOX, "127.0.0.1:6080"));
        values.put("log.access", "false");
        SandgateConfig config = ConfigLoader.fromValues(values);
        backing = Store.create(config, new SimpleMeterRegistry(), Schedulers.create());
        routes = backing.routes();

        IngressConfig ingress = config.ingress();
        Signer signer = new Signer(ingress.cookie().secret().orElseThrow().bytes());
        IdSyntax ids = IdSyntax.of(ingress);
        SessionCookie cookie = new SessionCookie(signer, ids, ingress.cookie().ttl(), ingress.cookie().maxSandboxes(), Clock.systemUTC());
        GrantRedemption redemption = new GrantRedemption(new Grants(signer, Clock.systemUTC()), Redemptions.inMemory(Clock.systemUTC()),
            routes::find, ingress.sessionMaxAge(), Clock.systemUTC());
        resolver = new SessionResolver(ingress, "", ids, cookie, redemption);
        secureMode = ingress.cookie().secure();

        // The cookie a browser holds after its first /vnc/{id}/ request, minted by the resolver itself.
        IngressRequest first = new IngressRequest("GET", "/vnc/" + SANDBOX + "/", null, ORIGIN, null, List.of(), null);
        String setCookie = ((IngressDecision.Forward)resolver.resolve(first, false, secureMode)).setCookie();
        String value = setCookie.substring(setCookie.indexOf('=') + 1, setCookie.indexOf(';'));
        byCookie = new IngressRequest("GET", "/vnc/app/ui.js", null, ORIGIN, null, List.of(value), null);
        byPath = new IngressRequest("GET", "/vnc/" + SANDBOX + "/app/ui.js", null, ORIGIN, null, List.of(value), null);
        if (routes.find(SANDBOX).isEmpty())
            throw new IllegalStateException("the static route did not reach the " + store + " store");
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        backing.close();
    }

    /** Cookie-resolved id (HMAC check included) then the cached route: noVNC 1.3's WebSocket and assets. */
    @Benchmark
    public Route cookieToRoute()
    {
        IngressDecision.Forward forward = (IngressDecision.Forward)resolver.resolve(byCookie, false, secureMode);
        return routes.find(forward.sandboxId()).orElseThrow();
    }

    /** Id in the path (the cookie is still decoded, as on every request) then the cached route. */
    @Benchmark
    public Route pathToRoute()
    {
        IngressDecision.Forward forward = (IngressDecision.Forward)resolver.resolve(byPath, false, secureMode);
        return routes.find(forward.sandboxId()).orElseThrow();
    }

    /** The cached route lookup alone. */
    @Benchmark
    public Route cachedRoute()
    {
        return routes.find(SANDBOX).orElseThrow();
    }
}
