package io.sandgate.ingress.lifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.sandgate.config.LifecycleConfig;
import io.sandgate.core.Audit;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.RouteStore;
import io.sandgate.ingress.SandboxWaker;
import io.sandgate.web.GatewayException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wakes paused sandboxes for the requests that arrive for them. The first request for a sandbox on
 * a replica claims its wake in the store ({@link WakeClaims}); the one replica that gets the claim
 * asks the manager, once, and every request on every replica waits for the route to turn running.
 * Waiting holds no thread: a request is a future completed when the route store reports a change
 * ({@link RouteStore#onChanges}) and the route, read again, is running; or failed at the timeout.
 *
 * <p>Bounded per sandbox and per replica, so that a flood for paused sandboxes costs a refusal, not
 * memory; a request beyond either bound, like one whose sandbox's manager refused, gets 503 with
 * {@code Retry-After} at once.</p>
 */
public final class Wakes implements SandboxWaker
{
    private static final Logger LOG = LoggerFactory.getLogger(Wakes.class);
    /** What a client that was refused or timed out is told to wait before it asks again. */
    private static final long RETRY_AFTER_SECONDS = 5;

    private final LifecycleConfig.Wake config;
    private final RouteStore routes;
    private final WakeClaims claims;
    private final SandboxManager manager;
    private final ScheduledExecutorService scheduler;
    private final Map<String, Waiting> waiting = new ConcurrentHashMap<>();
    private final AtomicInteger held = new AtomicInteger();
    private final Counter woken;
    private final Counter failed;
    private final Counter timedOut;
    private final Counter refused;
    private final Timer latency;

    /** The requests of one replica waiting for one sandbox, since the first of them. */
    private final class Waiting
    {
        final String sandboxId;
        final long since = System.nanoTime();
        /** Changed only inside the map's compute for this id, and read once the spell is removed from it. */
        final List<CompletableFuture<Optional<Route>>> requests = new ArrayList<>();

        Waiting(String sandboxId)
        {
            this.sandboxId = sandboxId;
        }
    }

    public Wakes(LifecycleConfig.Wake config, RouteStore routes, WakeClaims claims, SandboxManager manager, ScheduledExecutorService scheduler,
                 MeterRegistry registry)
    {
        this.config = config;
        this.routes = routes;
        this.claims = claims;
        this.manager = manager;
        this.scheduler = scheduler;
        this.woken = wakes(registry, "ok");
        this.failed = wakes(registry, "failed");
        this.timedOut = wakes(registry, "timed_out");
        this.refused = Counter.builder("sandgate.sandbox.wake.refused")
            .description("Requests for a paused sandbox refused at once: too many already waiting").register(registry);
        this.latency = Timer.builder("sandgate.sandbox.wake.latency").publishPercentileHistogram()
            .description("From the first request for a paused sandbox on this replica to its route running").register(registry);
        registry.gauge("sandgate.sandbox.wake.waiting", held, AtomicInteger::get);
        routes.onChanges(this::recheck);
    }

    private static Counter wakes(MeterRegistry registry, String outcome)
    {
        return Counter.builder("sandgate.sandbox.wakes").tag("outcome", outcome)
            .description("Waits of this replica for a paused sandbox, by how they ended").register(registry);
    }

    @Override
    public CompletableFuture<Optional<Route>> running(String sandboxId, Optional<Route> found)
    {
        if (found.isEmpty() && !config.onMiss())
            return CompletableFuture.completedFuture(found);
        if (held.incrementAndGet() > config.maxWaitingTotal())
            return refuse("too many requests are waiting for sandboxes to start");
        CompletableFuture<Optional<Route>> request = new CompletableFuture<>();
        boolean[] first = new boolean[1];
        boolean[] full = new boolean[1];
        waiting.compute(sandboxId, (id, current) ->
        {
            Waiting spell = current != null ? current : new Waiting(id);
            first[0] = current == null;
            if (spell.requests.size() >= config.maxWaiting())
                full[0] = true;
            else
                spell.requests.add(request);
            return spell;
        });
        if (full[0])
            return refuse("too many requests are waiting for this sandbox to start");
        ScheduledFuture<?> timeout = scheduler.schedule(() -> timeOut(sandboxId, request), config.timeout().toMillis(), TimeUnit.MILLISECONDS);
        request.whenComplete((route, failure) ->
        {
            held.decrementAndGet();
            timeout.cancel(false);
        });
        if (first[0])
            wake(sandboxId);
        // The route may have turned running between the caller's look-up and now.
        check(sandboxId);
        return request;
    }

    private CompletableFuture<Optional<Route>> refuse(String message)
    {
        held.decrementAndGet();
        refused.increment();
        return CompletableFuture.failedFuture(GatewayException.starting(message, RETRY_AFTER_SECONDS));
    }

    /** Claims the sandbox's wake, and asks the manager if this replica got the claim. */
    private void wake(String sandboxId)
    {
        claims.claim(sandboxId, config.timeout())
            .thenCompose(claimed -> claimed ? manager.resume(sandboxId) : CompletableFuture.completedFuture(null))
            .whenComplete((ignored, failure) ->
            {
                if (failure == null)
                    return;
                Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null ? failure.getCause() : failure;
                String reason = cause instanceof SandboxManager.ManagerException ? cause.getMessage() : "store unreachable (" + cause.getClass().getSimpleName() + ")";
                if (!(cause instanceof SandboxManager.ManagerException refused && refused.unknown()))
                {
                    LOG.warn("Sandbox {} could not be woken: {}", sandboxId, reason);
                    Audit.lifecycleFailed(sandboxId, "resume", reason);
                }
                // The waiting requests are answered once the claim is given back, so that a client
                // told to try again asks the manager again, on whichever replica it reaches.
                claims.release(sandboxId).whenComplete((released, notTold) ->
                {
                    if (cause instanceof SandboxManager.ManagerException refused && refused.unknown())
                        // As for any id without a route: nothing said about whether it was ever there.
                        end(sandboxId, null, GatewayException.notFound("no route for sandbox " + sandboxId));
                    else
                        end(sandboxId, null, GatewayException.starting("the sandbox could not be started; try again later", RETRY_AFTER_SECONDS));
                });
            });
    }

    /** On every change the store reports: looks up each sandbox waited for. */
    private void recheck()
    {
        for (String sandboxId : waiting.keySet())
            check(sandboxId);
    }

    private void check(String sandboxId)
    {
        routes.lookUp(sandboxId).whenComplete((route, failure) ->
        {
            // A failed look-up is asked again at the next change; the timeout bounds the wait.
            if (failure == null && route.isPresent() && route.get().running())
                end(sandboxId, route.get(), null);
        });
    }

    /** Ends the sandbox's spell: every request waiting gets the running route, or the failure. */
    private void end(String sandboxId, Route route, GatewayException failure)
    {
        Waiting spell = waiting.remove(sandboxId);
        if (spell == null)
            return;
        List<CompletableFuture<Optional<Route>>> requests = spell.requests;
        if (route != null)
        {
            woken.increment();
            latency.record(Duration.ofNanos(System.nanoTime() - spell.since));
            requests.forEach(r -> r.complete(Optional.of(route)));
        }
        else
        {
            failed.increment();
            requests.forEach(r -> r.completeExceptionally(failure));
        }
    }

    /** A request that waited its whole time; the spell ends with the last of its requests. */
    private void timeOut(String sandboxId, CompletableFuture<Optional<Route>> request)
    {
        if (!request.completeExceptionally(GatewayException.starting("the sandbox did not start in time; try again shortly", RETRY_AFTER_SECONDS)))
            return;
        boolean[] last = new boolean[1];
        waiting.computeIfPresent(sandboxId, (id, spell) ->
        {
            spell.requests.remove(request);
            last[0] = spell.requests.isEmpty();
            return last[0] ? null : spell;
        });
        if (last[0])
        {
            timedOut.increment();
            LOG.warn("Sandbox {} did not start within {} s of being woken", sandboxId, config.timeout().toSeconds());
            Audit.lifecycleFailed(sandboxId, "resume", "not running within " + config.timeout().toSeconds() + " s");
        }
    }
}
